"""The ``.bsprof`` format as one ``construct`` grammar: it parses and it builds.

This is the single definition of the format. :mod:`rokuprof.bsprof.reference` parses with it,
the samples, the tests and the simulator build streams with it, and the hand-tuned
:class:`~rokuprof.bsprof.decoder.Decoder` is tested against it.

Problems the format itself rules out (over-long varints, zero IDs, memory operation 3, unknown
entry types, strings over the length limit) are raised as :class:`GrammarFault`, which the
reference parser turns into the documented :mod:`~rokuprof.bsprof.errors` at the right offset.
Conditions and computed fields are ``this`` expressions, never lambdas, so ``compile()`` works;
the only lambdas build error objects once a check has failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from construct import (
    Computed,
    Const,
    Construct,
    ConstructError,
    Float32l,
    If,
    Padding,
    Rebuild,
    Struct,
    Switch,
    Tell,
    this,
)
from construct.core import evaluate, stream_read, stream_write

from rokuprof.bsprof import errors
from rokuprof.bsprof.model import (
    ALLOC,
    CALLS,
    CPU,
    MAGIC,
    MEMORY,
    MODULE,
    PATH,
    STRING,
    UINT32_MAX,
    Entry,
    Footer,
    Header,
    Limits,
)

DEFAULT_LIMITS = Limits()


class GrammarFault(ConstructError):
    """Raised inside the grammar; ``make(offset)`` gives the documented error."""

    def __init__(self, make: Callable[[int], errors.BsprofError]) -> None:
        super().__init__("bsprof grammar fault")
        self.make = make


def _limits(context) -> Limits:
    params = getattr(context, "_params", None) or {}
    return params.get("limits", DEFAULT_LIMITS)


class Varint(Construct):
    """Unsigned base-128 varint (protobuf style, no zigzag) bounded to ``bits`` bits."""

    def __init__(self, bits: int, what: str) -> None:
        super().__init__()
        self.bits = bits
        self.what = what
        self.max_bytes = (bits + 6) // 7
        self.max_value = (1 << bits) - 1

    def _parse(self, stream, context, path):
        result = 0
        shift = 0
        for _ in range(self.max_bytes):
            byte = stream_read(stream, 1, path)[0]
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                if result > self.max_value:
                    raise GrammarFault(
                        lambda off: errors.CorruptVarint(
                            off, errors.varint_too_large(self.what, self.bits)
                        )
                    )
                return result
            shift += 7
        raise GrammarFault(
            lambda off: errors.CorruptVarint(off, errors.varint_too_long(self.what, self.max_bytes))
        )

    def _build(self, obj, stream, context, path):
        value = int(obj)
        if not 0 <= value <= self.max_value:
            raise GrammarFault(
                lambda off: errors.InvalidValue(off, f"{self.what} {value} out of range")
            )
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        stream_write(stream, bytes(out), len(out), path)
        return obj


class Utf8z(Construct):
    """NUL-terminated UTF-8 string, at most ``Limits.max_string_bytes`` bytes before the NUL.

    Invalid UTF-8 is decoded with replacement characters rather than refused: a name with a bad
    byte still identifies its function.
    """

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def _parse(self, stream, context, path):
        maximum = _limits(context).max_string_bytes
        raw = bytearray()
        while True:
            byte = stream_read(stream, 1, path)
            if byte == b"\x00":
                return raw.decode("utf-8", "replace")
            if len(raw) >= maximum:
                raise GrammarFault(
                    lambda off: errors.LimitExceeded(off, "string length", None, maximum)
                )
            raw += byte

    def _build(self, obj, stream, context, path):
        data = obj.encode("utf-8")
        if b"\x00" in data:
            raise GrammarFault(lambda off: errors.InvalidValue(off, f"NUL inside {self.what}"))
        stream_write(stream, data + b"\x00", len(data) + 1, path)
        return obj


class Require(Construct):
    """Check a ``this`` condition while parsing and building; raise a documented error if false."""

    def __init__(self, condition, make: Callable[[int, object], errors.BsprofError]) -> None:
        super().__init__()
        self.flagbuildnone = True
        self.condition = condition
        self.make = make

    def _check(self, context):
        if not evaluate(self.condition, context):
            raise GrammarFault(lambda off: self.make(off, context))

    def _parse(self, stream, context, path):
        self._check(context)

    def _build(self, obj, stream, context, path):
        self._check(context)


class PeekTag(Varint):
    """The entry tag, read without consuming it (construct's ``Peek`` would hide a truncated or
    corrupt tag by returning ``None``)."""

    def __init__(self) -> None:
        super().__init__(64, "entry tag")
        self.flagbuildnone = True

    def _parse(self, stream, context, path):
        start = stream.tell()
        try:
            return super()._parse(stream, context, path)
        finally:
            stream.seek(start)

    def _build(self, obj, stream, context, path):
        return obj


class UnknownType(Construct):
    """The default branch of the entry switch: types 6 and 7 cannot be read past."""

    def __init__(self) -> None:
        super().__init__()
        self.flagbuildnone = True

    def _parse(self, stream, context, path):
        entry_type = context.tag & 7
        raise GrammarFault(lambda off: errors.UnknownEntryType(off, entry_type))

    def _build(self, obj, stream, context, path):
        self._parse(stream, context, path)


def _u32(name: str):
    return name / Varint(32, name.replace("_", " "))


def _line_offset():
    return "line_offset" / If(this._params.line_data, Varint(32, "line offset"))


def _nonzero(field: str, what: str):
    return Require(
        this[field] != 0, lambda off, ctx: errors.InvalidValue(off, f"{what} ID 0 is not allowed")
    )


def _tag(entry_type: int, shift: int = 3):
    """Tag field: rebuilt from ``id`` (payload) and checked to carry at most 32 bits of it."""
    return (
        "tag" / Rebuild(Varint(64, "entry tag"), (this.id << shift) | entry_type),
        Require(
            (this.tag >> shift) <= UINT32_MAX,
            lambda off, ctx: errors.CorruptVarint(off, errors.TAG_PAYLOAD_TOO_LARGE),
        ),
    )


StringEntry = Struct(
    *_tag(STRING),
    "id" / Computed(this.tag >> 3),
    "text" / If(this.id != 0, Utf8z("string")),
)
"""Type 0: a string table entry, or the end-of-entries marker when its ID is 0."""

ModuleEntry = Struct(
    *_tag(MODULE),
    "id" / Computed(this.tag >> 3),
    _nonzero("id", "module"),
    _u32("name_id"),
)

PathEntry = Struct(
    *_tag(PATH),
    "id" / Computed(this.tag >> 3),
    _nonzero("id", "path element"),
    _u32("caller"),
    "module" / If(this.caller == 0, Varint(32, "module")),
    "line_offset" / If(this.caller != 0, _line_offset().subcon),
    _u32("file_id"),
    _u32("line"),
    _u32("function_id"),
)

MemoryEntry = Struct(
    "tag" / Rebuild(Varint(64, "entry tag"), (this.path << 5) | (this.op << 3) | MEMORY),
    Require(
        (this.tag >> 5) <= UINT32_MAX,
        lambda off, ctx: errors.CorruptVarint(off, errors.TAG_PAYLOAD_TOO_LARGE),
    ),
    "path" / Computed(this.tag >> 5),
    "op" / Computed((this.tag >> 3) & 3),
    Require(
        this.op != 3, lambda off, ctx: errors.InvalidValue(off, "undefined memory operation 3")
    ),
    _line_offset(),
    _u32("address"),
    "size" / If(this.op == ALLOC, Varint(32, "size")),
)

CpuEntry = Struct(
    *_tag(CPU),
    "id" / Computed(this.tag >> 3),
    _line_offset(),
    _u32("cpu"),
    _u32("wall"),
)

CallCountEntry = Struct(
    *_tag(CALLS),
    "id" / Computed(this.tag >> 3),
    _u32("count"),
)

BodyEntry = Struct(
    "tag" / PeekTag(),
    "entry"
    / Switch(
        this.tag & 7,
        {
            STRING: StringEntry,
            MODULE: ModuleEntry,
            PATH: PathEntry,
            MEMORY: MemoryEntry,
            CPU: CpuEntry,
            CALLS: CallCountEntry,
        },
        default=UnknownType(),
    ),
)
"""Any one body entry (or the end marker), dispatched on the tag's low three bits."""

_HEADER_FIELDS = (
    "magic" / Const(MAGIC),
    "major" / Varint(32, "major version"),
    "minor" / Varint(32, "minor version"),
    "patch" / Varint(32, "patch level"),
    "header_size" / Varint(32, "header size"),
    "requested_sample_ratio" / Float32l,
    "actual_sample_ratio" / Float32l,
    "line_data" / Varint(32, "line-data flag"),
    "memory_ops" / Varint(32, "memory-operations flag"),
    "start_ms" / Varint(64, "start timestamp"),
    "target_name" / Utf8z("target name"),
    "supplemental" / Utf8z("supplemental information"),
    "target_version" / Utf8z("target version"),
    "vendor" / Utf8z("vendor"),
    "model" / Utf8z("model"),
    "firmware" / Utf8z("firmware"),
)

HeaderFields = Struct(*_HEADER_FIELDS)
"""The header fields this code knows, without the skip to ``header_size``."""

HeaderGrammar = Struct(
    *_HEADER_FIELDS,
    "fields_end" / Tell,
    Require(
        this.header_size >= this.fields_end,
        lambda off, ctx: errors.BadHeader(
            0, f"header size {ctx.header_size} is smaller than its fields ({ctx.fields_end} bytes)"
        ),
    ),
    Padding(this.header_size - this.fields_end),
)
"""The header, including the skip (zero padding when building) up to ``header_size``."""

HeaderPrefix = Struct(
    "magic" / Const(MAGIC),
    "major" / Varint(32, "major version"),
    "minor" / Varint(32, "minor version"),
    "patch" / Varint(32, "patch level"),
    "header_size" / Varint(32, "header size"),
)
"""The first header fields: enough to know how many bytes the whole header takes."""

FooterGrammar = Struct("end_ms" / Varint(64, "end timestamp"))

END_MARKER = b"\x00"

# --- conversions between construct containers and the decoder's entry tuples ---------------


def entry_from_container(c) -> Entry | None:
    """Turn a parsed :data:`BodyEntry` into an entry tuple; ``None`` for the end marker."""
    e = c.entry
    kind = c.tag & 7
    if kind == STRING:
        return None if e.id == 0 else (STRING, e.id, e.text)
    if kind == MODULE:
        return (MODULE, e.id, e.name_id)
    if kind == PATH:
        return (
            PATH,
            e.id,
            e.caller,
            e.module or 0,
            e.line_offset or 0,
            e.file_id,
            e.line,
            e.function_id,
        )
    if kind == MEMORY:
        return (MEMORY, e.path, e.op, e.line_offset or 0, e.address, e.size or 0)
    if kind == CPU:
        return (CPU, e.id, e.line_offset or 0, e.cpu, e.wall)
    return (CALLS, e.id, e.count)


def _container_from_entry(entry: Entry, line_data: bool) -> tuple[Struct, dict]:
    kind = entry[0]
    if kind == STRING:
        return StringEntry, {"id": entry[1], "text": entry[2]}
    if kind == MODULE:
        return ModuleEntry, {"id": entry[1], "name_id": entry[2]}
    if kind == PATH:
        _, pid, caller, module, line_offset, file_id, line, function_id = entry
        return PathEntry, {
            "id": pid,
            "caller": caller,
            "module": module if caller == 0 else None,
            "line_offset": line_offset if (caller != 0 and line_data) else None,
            "file_id": file_id,
            "line": line,
            "function_id": function_id,
        }
    if kind == MEMORY:
        _, path, op, line_offset, address, size = entry
        return MemoryEntry, {
            "path": path,
            "op": op,
            "line_offset": line_offset if line_data else None,
            "address": address,
            "size": size if op == ALLOC else None,
        }
    if kind == CPU:
        _, path, line_offset, cpu, wall = entry
        return CpuEntry, {
            "id": path,
            "line_offset": line_offset if line_data else None,
            "cpu": cpu,
            "wall": wall,
        }
    if kind == CALLS:
        return CallCountEntry, {"id": entry[1], "count": entry[2]}
    raise ValueError(f"not an entry tuple: {entry!r}")


def build_entry(entry: Entry, line_data: bool) -> bytes:
    """Encode one entry tuple (see :mod:`rokuprof.bsprof.model`)."""
    grammar, fields = _container_from_entry(entry, line_data)
    return grammar.build(fields, line_data=line_data)


def build_header(header: Header, pad_to: int | None = None) -> bytes:
    """Encode a header. ``header_size`` is computed (at least ``pad_to`` bytes when given)."""
    fields = header.to_json() | {
        "line_data": int(header.line_data),
        "memory_ops": int(header.memory_ops),
    }
    size = pad_to or 0
    while True:  # header_size is a varint inside the header it measures: let it settle
        fields_length = len(HeaderFields.build(fields | {"header_size": size}))
        if size >= fields_length:
            return HeaderGrammar.build(fields | {"header_size": size})
        size = fields_length


def build_footer(footer: Footer) -> bytes:
    return FooterGrammar.build({"end_ms": footer.end_ms})


def build_stream(
    header: Header,
    entries: Iterable[Entry],
    footer: Footer | None = None,
    *,
    end: bool = True,
    pad_to: int | None = None,
) -> bytes:
    """A whole stream: header, entries, end marker (if ``end``) and footer (if given)."""
    parts = [build_header(header, pad_to)]
    parts.extend(build_entry(e, header.line_data) for e in entries)
    if end:
        parts.append(END_MARKER)
        if footer is not None:
            parts.append(build_footer(footer))
    return b"".join(parts)
