"""Hypothesis strategies that generate ``.bsprof`` streams, and helpers to decode them.

Valid streams are built with the grammar (:func:`rokuprof.bsprof.grammar.build_stream` pieces)
and respect the format's dependencies: strings before their use, modules before their root
paths, callers before callees, CPU / call counts / memory operations on defined paths.

Strategies (all return ``SearchStrategy`` objects)::

    u32s(), u64s()                 values whose varints take 1..5 (1..10) bytes
    ids()                          definition IDs from 1 to 2**32 - 1, every tag length
    texts()                        UTF-8 strings without NUL, non-ASCII included
    headers(line_data=None, ...)   Header values (header_size is filled in by the build)
    entry_lists(line_data, ...)    list[Entry] in a valid order
    streams(...)                   StreamSpec: a whole valid stream and what it should decode to
    truncated_streams(...)         Cut: a valid stream cut at any byte
    corrupt_streams(...)           Corrupted: byte flips, insertions, deletions, cuts, injected
                                   bad entries (unknown types 6/7, memory op 3, over-long
                                   varints, zero IDs, payloads over 32 bits)
    any_streams()                  bytes: valid, truncated or corrupt
    stretched_streams(overflow)    (StreamSpec, bytes): body varints re-encoded non-minimally
    splits(data)                   list[bytes] joining to ``data``: whole, one byte at a time,
                                   or random cuts (empty chunks included)

Helpers: :func:`varint` (encode); :func:`encode_entry` (a hand encoder independent of the
grammar, with optional non-minimal varint widths); :func:`decode` (run a Decoder over chunks
and capture an :class:`Outcome`); :func:`reference_outcome` (the same view of the reference
parser); :func:`header_key` (a NaN-safe, comparable form of a Header).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from hypothesis import strategies as st

from rokuprof.bsprof import errors, reference
from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.grammar import (
    END_MARKER,
    HeaderGrammar,
    build_entry,
    build_footer,
    build_header,
)
from rokuprof.bsprof.model import (
    ALLOC,
    CALLS,
    CPU,
    FREE,
    FREE_REALLOC,
    MEMORY,
    MODULE,
    PATH,
    STRING,
    SUPPORTED_MAJOR,
    UINT32_MAX,
    Entry,
    Footer,
    Header,
    Limits,
)

# --- encoding ---------------------------------------------------------------------------------


def varint(value: int) -> bytes:
    """Encode a non-negative integer as an unsigned base-128 varint (any size)."""
    if value < 0:
        raise ValueError("varints are unsigned")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


# --- values -----------------------------------------------------------------------------------


def _by_varint_length(bounds: Sequence[tuple[int, int]]) -> st.SearchStrategy[int]:
    return st.one_of(*(st.integers(lo, hi) for lo, hi in bounds))


def u32s() -> st.SearchStrategy[int]:
    """uint32 values, evenly spread over varint lengths 1..5 (both ends of each included)."""
    return _by_varint_length(
        [(0, 127), (128, 2**14 - 1), (2**14, 2**21 - 1), (2**21, 2**28 - 1), (2**28, UINT32_MAX)]
    )


def u64s() -> st.SearchStrategy[int]:
    """uint64 values, small, mid-sized, timestamp-like and up to 2**64 - 1."""
    return st.one_of(
        st.integers(0, 127),
        st.integers(1_600_000_000_000, 1_900_000_000_000),
        st.integers(0, 2**64 - 1),
    )


def ids(max_id: int = UINT32_MAX) -> st.SearchStrategy[int]:
    """Definition IDs (1..max_id, by default the whole uint32 range) spread so that entry tags
    take 1 to 5 bytes, with both ends of each length and ``max_id`` itself drawn often."""
    bounds = [(1, 15), (16, 2**11 - 1), (2**11, 2**18 - 1), (2**18, 2**25 - 1), (2**25, max_id)]
    spread = _by_varint_length([(lo, min(hi, max_id)) for lo, hi in bounds if lo <= max_id])
    return st.one_of(spread, st.just(max_id))


def texts(max_size: int = 24) -> st.SearchStrategy[str]:
    """Strings a device may send: any Unicode but NUL and lone surrogates."""
    return st.text(
        st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=max_size
    )


def float32s() -> st.SearchStrategy[float]:
    return st.floats(width=32, allow_nan=False)


@st.composite
def headers(
    draw: st.DrawFn,
    line_data: bool | None = None,
    memory_ops: bool | None = None,
    major: int | None = None,
) -> Header:
    """A Header. ``header_size`` is 0 here: building computes it (see :class:`StreamSpec`)."""
    return Header(
        major=major if major is not None else draw(st.just(SUPPORTED_MAJOR) | u32s()),
        minor=draw(u32s()),
        patch=draw(u32s()),
        header_size=0,
        requested_sample_ratio=draw(float32s()),
        actual_sample_ratio=draw(float32s()),
        line_data=line_data if line_data is not None else draw(st.booleans()),
        memory_ops=memory_ops if memory_ops is not None else draw(st.booleans()),
        start_ms=draw(u64s()),
        target_name=draw(texts()),
        supplemental=draw(texts()),
        target_version=draw(texts()),
        vendor=draw(texts()),
        model=draw(texts()),
        firmware=draw(texts()),
    )


# --- body entries -----------------------------------------------------------------------------

_ACTIONS = {
    "string": (),
    "module": ("strings",),
    "root": ("strings", "modules"),
    "chain": ("strings", "paths"),
    "cpu": ("paths",),
    "calls": ("paths",),
    "alloc": ("paths", "memory"),
    "free": ("paths", "memory"),
    "realloc": ("paths", "memory"),
    "free_unknown": ("paths", "memory"),
}


@st.composite
def entry_lists(
    draw: st.DrawFn,
    line_data: bool,
    memory_ops: bool = True,
    max_actions: int = 30,
    max_id: int = UINT32_MAX,
) -> list[Entry]:
    """Body entries in a valid order (dependencies first), interleaved at random.

    Memory operations (only when ``memory_ops``) include allocations, frees of live addresses,
    free_realloc immediately followed by the alloc of the same call, and frees of addresses
    never allocated. ``line_offset`` fields are 0 when ``line_data`` is off.
    """
    strings: list[int] = []
    modules: list[int] = []
    paths: list[int] = []
    live: dict[int, int] = {}  # address -> path
    used: dict[int, set[int]] = {STRING: set(), MODULE: set(), PATH: set()}
    out: list[Entry] = []

    def fresh(kind: int) -> int:
        ident = draw(ids(max_id))
        taken = used[kind]
        while ident in taken:  # keep IDs unique per kind, deterministically
            ident = ident % max_id + 1
        taken.add(ident)
        return ident

    def line_offset() -> int:
        return draw(st.integers(1, 60) | u32s()) if line_data else 0

    def address() -> int:
        return draw(u32s())

    for _ in range(draw(st.integers(0, max_actions))):
        have = {
            "strings": bool(strings),
            "modules": bool(modules),
            "paths": bool(paths),
            "memory": memory_ops,
        }
        possible = [a for a, needs in _ACTIONS.items() if all(have[n] for n in needs)]
        action = draw(st.sampled_from(possible))
        if action == "string":
            sid = fresh(STRING)
            strings.append(sid)
            out.append((STRING, sid, draw(texts())))
        elif action == "module":
            mid = fresh(MODULE)
            modules.append(mid)
            out.append((MODULE, mid, draw(st.sampled_from(strings))))
        elif action in ("root", "chain"):
            pid = fresh(PATH)
            file_id, function_id = draw(st.sampled_from(strings)), draw(st.sampled_from(strings))
            line = draw(st.integers(1, 2000) | u32s())
            if action == "root":
                entry = (
                    PATH,
                    pid,
                    0,
                    draw(st.sampled_from(modules)),
                    0,
                    file_id,
                    line,
                    function_id,
                )
            else:
                caller = draw(st.sampled_from(paths))
                entry = (PATH, pid, caller, 0, line_offset(), file_id, line, function_id)
            paths.append(pid)
            out.append(entry)
        elif action == "cpu":
            pid = draw(st.sampled_from(paths))
            out.append((CPU, pid, line_offset(), draw(u32s()), draw(u32s())))
        elif action == "calls":
            out.append((CALLS, draw(st.sampled_from(paths)), draw(u32s())))
        elif action == "alloc":
            pid, addr = draw(st.sampled_from(paths)), address()
            live[addr] = pid
            out.append((MEMORY, pid, ALLOC, line_offset(), addr, draw(u32s())))
        elif action == "free" and live:
            addr = draw(st.sampled_from(sorted(live)))
            pid = live.pop(addr)
            out.append((MEMORY, pid, FREE, line_offset(), addr, 0))
        elif action == "realloc":
            pid, lo = draw(st.sampled_from(paths)), line_offset()
            old = draw(st.sampled_from(sorted(live))) if live and draw(st.booleans()) else address()
            live.pop(old, None)
            new = address()
            live[new] = pid
            out.append((MEMORY, pid, FREE_REALLOC, lo, old, 0))
            out.append((MEMORY, pid, ALLOC, lo, new, draw(u32s())))
        elif action in ("free", "free_unknown"):
            addr = address()
            if addr not in live:
                out.append((MEMORY, draw(st.sampled_from(paths)), FREE, line_offset(), addr, 0))
    return out


# --- whole streams ----------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamSpec:
    """A built stream and what decoding it must give.

    Offsets: ``header_end`` (= header.header_size), ``entry_ends[i]`` (end of body entry i),
    ``body_end`` (where the end marker is, or would be), ``footer_end`` (end of the footer, or
    ``None``). ``data`` ends with ``footer.trailing_bytes`` unknown bytes after the footer.
    """

    header: Header
    entries: tuple[Entry, ...]
    ended: bool
    footer: Footer | None
    data: bytes
    header_end: int
    entry_ends: tuple[int, ...]
    body_end: int
    footer_end: int | None

    @property
    def entry_starts(self) -> tuple[int, ...]:
        return (self.header_end, *self.entry_ends)[: len(self.entry_ends)]

    @property
    def boundaries(self) -> tuple[int, ...]:
        """Every offset where a body entry (or the end marker) may start."""
        return (self.header_end, *self.entry_ends)

    @property
    def status(self) -> str:
        """The status of a closed decoder that read all of ``data``."""
        return "complete" if self.footer is not None else "incomplete"

    def after_cut(self, cut: int) -> tuple[Header | None, list[Entry], bool, Footer | None]:
        """What ``data[:cut]`` must decode to: header, whole entries, ended, footer."""
        if cut < self.header_end:
            return None, [], False, None
        whole = [e for e, end in zip(self.entries, self.entry_ends, strict=True) if end <= cut]
        ended = self.ended and cut > self.body_end
        footer = None
        if self.footer is not None and self.footer_end is not None and cut >= self.footer_end:
            footer = Footer(self.footer.end_ms, cut - self.footer_end)
        return self.header, whole, ended, footer


def build_padded_header(header: Header, padding: bytes | None) -> bytes:
    """Header bytes; with ``padding``, ``header_size`` also covers those (unknown) bytes."""
    plain = build_header(header)
    if not padding:
        return plain
    padded = build_header(header, pad_to=len(plain) + len(padding))
    fields_end = HeaderGrammar.parse(padded).fields_end
    extra = len(padded) - fields_end  # the varint header_size may have grown by a byte
    return padded[:fields_end] + (padding + b"\x00" * extra)[:extra]


@st.composite
def streams(
    draw: st.DrawFn,
    line_data: bool | None = None,
    memory_ops: bool | None = None,
    major: int | None = None,
    ended: bool | None = None,
    footer: bool | None = None,
    max_actions: int = 30,
    max_id: int = UINT32_MAX,
) -> StreamSpec:
    """A valid stream: header (sometimes padded with unknown bytes), entries, end marker,
    footer and trailing bytes after it. ``None`` arguments are drawn."""
    header = draw(headers(line_data, memory_ops, major))
    padding = draw(st.none() | st.binary(min_size=1, max_size=40) | st.just(b"\x00" * 200))
    head = build_padded_header(header, padding)
    header = dataclasses.replace(header, header_size=len(head))
    entries = draw(entry_lists(header.line_data, header.memory_ops, max_actions, max_id))
    parts = [head]
    ends = []
    pos = len(head)
    for entry in entries:
        encoded = build_entry(entry, header.line_data)
        parts.append(encoded)
        pos += len(encoded)
        ends.append(pos)
    body_end = pos
    is_ended = draw(st.sampled_from([True, True, False])) if ended is None else ended
    foot = footer_end = None
    if is_ended:
        parts.append(END_MARKER)
        pos += 1
        with_footer = draw(st.booleans()) if footer is None else footer
        if with_footer:
            end_ms = draw(u64s())
            parts.append(build_footer(Footer(end_ms)))
            footer_end = pos + len(parts[-1])
            trailing = draw(st.just(b"") | st.binary(min_size=1, max_size=16))
            parts.append(trailing)
            foot = Footer(end_ms, len(trailing))
    return StreamSpec(
        header=header,
        entries=tuple(entries),
        ended=is_ended,
        footer=foot,
        data=b"".join(parts),
        header_end=len(head),
        entry_ends=tuple(ends),
        body_end=body_end,
        footer_end=footer_end,
    )


@dataclass(frozen=True)
class Cut:
    """A valid stream cut after ``at`` bytes."""

    spec: StreamSpec
    at: int

    @property
    def data(self) -> bytes:
        return self.spec.data[: self.at]


@st.composite
def truncated_streams(draw: st.DrawFn, **stream_args) -> Cut:
    """A valid stream (see :func:`streams`) cut at any byte before its end."""
    spec = draw(streams(**stream_args))
    return Cut(spec, draw(st.integers(0, max(len(spec.data) - 1, 0))))


@dataclass(frozen=True)
class Corrupted:
    """A damaged stream. For injected entries, ``error_type`` and ``at`` say what error the
    decoder must report and where; for blind damage (flips, insertions...) both are ``None``."""

    spec: StreamSpec
    data: bytes
    how: str
    error_type: type[errors.BsprofError] | None = None
    at: int | None = None


def bad_entries() -> st.SearchStrategy[tuple[str, bytes, type[errors.BsprofError]]]:
    """One unreadable body entry: ``(description, bytes, error type it must cause)``."""
    kind = st.sampled_from([STRING, MODULE, PATH, CPU, CALLS])
    tail = st.binary(max_size=12)
    return st.one_of(
        st.tuples(st.sampled_from([6, 7]), u32s(), tail).map(
            lambda t: (
                f"unknown type {t[0]}",
                varint(t[1] << 3 | t[0]) + t[2],
                errors.UnknownEntryType,
            )
        ),
        st.tuples(u32s(), tail).map(
            lambda t: (
                "memory op 3",
                varint(t[0] << 5 | 3 << 3 | MEMORY) + t[1],
                errors.InvalidValue,
            )
        ),
        st.tuples(st.integers(11, 40), tail).map(
            lambda t: ("endless tag varint", b"\x80" * t[0] + t[1], errors.CorruptVarint)
        ),
        st.tuples(st.integers(2, 127), tail).map(
            lambda t: ("tag over 64 bits", b"\xff" * 9 + bytes([t[0]]) + t[1], errors.CorruptVarint)
        ),
        st.tuples(kind, st.integers(2**32, 2**40), tail).map(
            lambda t: ("ID over 32 bits", varint(t[1] << 3 | t[0]) + t[2], errors.CorruptVarint)
        ),
        st.tuples(st.sampled_from([MODULE, PATH]), tail).map(
            lambda t: (f"zero ID type {t[0]}", bytes([t[0]]) + t[1], errors.InvalidValue)
        ),
        st.tuples(st.sampled_from([MODULE, CALLS]), st.integers(5, 12)).map(
            lambda t: (
                "over-long field varint",
                bytes([1 << 3 | t[0]]) + b"\xff" * t[1] + b"\x01",
                errors.CorruptVarint,
            )
        ),
    )


@st.composite
def corrupt_streams(draw: st.DrawFn, **stream_args) -> Corrupted:
    """A valid stream damaged once: a bad entry injected at an entry boundary, a byte flipped,
    bytes inserted or deleted, or the stream cut."""
    spec = draw(streams(**stream_args))
    data = spec.data
    how = draw(st.sampled_from(["inject", "inject", "flip", "insert", "delete", "cut"]))
    if how == "inject":
        at = draw(st.sampled_from(spec.boundaries))
        what, bad, error_type = draw(bad_entries())
        return Corrupted(spec, data[:at] + bad + data[at:], f"{what} at {at}", error_type, at)
    if not data:  # pragma: no cover - a header is never empty
        return Corrupted(spec, data, "nothing")
    i = draw(st.integers(0, len(data) - 1))
    if how == "flip":
        mask = draw(st.integers(1, 255))
        damaged = data[:i] + bytes([data[i] ^ mask]) + data[i + 1 :]
        return Corrupted(spec, damaged, f"byte {i} ^ 0x{mask:02x}")
    if how == "insert":
        extra = draw(st.binary(min_size=1, max_size=8))
        return Corrupted(spec, data[:i] + extra + data[i:], f"{extra.hex()} inserted at {i}")
    if how == "delete":
        n = draw(st.integers(1, 8))
        return Corrupted(spec, data[:i] + data[i + n :], f"{n} bytes deleted at {i}")
    return Corrupted(spec, data[:i], f"cut at {i}")


def any_streams(**stream_args) -> st.SearchStrategy[bytes]:
    """Bytes of a valid, truncated or corrupt stream."""
    return st.one_of(
        streams(**stream_args).map(lambda s: s.data),
        truncated_streams(**stream_args).map(lambda c: c.data),
        corrupt_streams(**stream_args).map(lambda c: c.data),
    )


# --- non-minimal varints ---------------------------------------------------------------------


def stretched_varint(value: int, width: int) -> bytes:
    """``value`` as a varint of at least ``width`` bytes (padded with continuation bytes,
    which the format allows as long as the field's byte limit holds)."""
    out = bytearray(varint(value))
    while len(out) < width:
        out[-1] |= 0x80
        out.append(0)
    return bytes(out)


def encode_entry(entry: Entry, line_data: bool, widths: Sequence[int] = ()) -> bytes:
    """Encode an entry by hand, independently of the grammar. ``widths`` gives the minimum
    byte width of each varint field in order (tag first); missing widths mean minimal."""
    kind = entry[0]
    if kind == STRING:
        fields, text = [entry[1] << 3], entry[2].encode() + b"\x00"
    else:
        text = b""
        if kind == MODULE:
            fields = [entry[1] << 3 | MODULE, entry[2]]
        elif kind == PATH:
            _, pid, caller, module, lo, file_id, line, function_id = entry
            middle = [module] if caller == 0 else ([lo] if line_data else [])
            fields = [pid << 3 | PATH, caller, *middle, file_id, line, function_id]
        elif kind == MEMORY:
            _, pid, op, lo, addr, size = entry
            fields = [pid << 5 | op << 3 | MEMORY, *([lo] if line_data else []), addr]
            fields += [size] if op == ALLOC else []
        elif kind == CPU:
            _, pid, lo, cpu, wall = entry
            fields = [pid << 3 | CPU, *([lo] if line_data else []), cpu, wall]
        else:
            fields = [entry[1] << 3 | CALLS, entry[2]]
    padded = [*widths, *[1] * len(fields)]
    return b"".join(stretched_varint(v, w) for v, w in zip(fields, padded, strict=False)) + text


@st.composite
def stretched_streams(draw: st.DrawFn, overflow: bool = False, max_actions: int = 20):
    """``(spec, data)``: a stream whose body varints are re-encoded with extra continuation
    bytes. Without ``overflow`` every field stays within its limit (tags 10 bytes, other
    fields 5), so ``data`` decodes to ``spec.entries``; with it, some fields run over."""
    spec = draw(streams(ended=True, footer=True, max_actions=max_actions))
    line_data = spec.header.line_data
    body = []
    for entry in spec.entries:
        top = [10, 5, 5, 5, 5, 5, 5]  # the tag, then at most six uint32 fields
        if overflow:
            top = [t + 2 for t in top]
        widths = [draw(st.integers(1, t)) for t in top]
        body.append(encode_entry(entry, line_data, widths))
    tail = spec.data[spec.body_end :]
    return spec, spec.data[: spec.header_end] + b"".join(body) + tail


# --- splitting --------------------------------------------------------------------------------


def chunk(data: Sequence, cuts: Iterable[int]) -> list:
    """Split ``data`` (bytes, or a list of entries) at the given offsets (duplicates give empty
    chunks; offsets outside ``data`` are clamped)."""
    points = [0, *sorted(min(max(c, 0), len(data)) for c in cuts), len(data)]
    return [data[a:b] for a, b in pairwise(points)]


def splits(data: bytes, max_cuts: int = 40) -> st.SearchStrategy[list[bytes]]:
    """Ways to deliver ``data``: whole, one byte at a time, or cut at random points."""
    return st.one_of(
        st.just([data]),
        st.just([data[i : i + 1] for i in range(len(data))]),
        st.lists(st.integers(0, len(data)), max_size=max_cuts).map(lambda c: chunk(data, c)),
    )


# --- decoding ---------------------------------------------------------------------------------


def header_key(header: Header | None) -> tuple | None:
    """A comparable form of a header (float fields by their bits, so NaN equals itself)."""
    if header is None:
        return None
    fields = header.to_json()
    for name in ("requested_sample_ratio", "actual_sample_ratio"):
        fields[name] = struct.pack("<f", fields[name])
    return tuple(sorted(fields.items()))


def error_key(error: errors.BsprofError | None) -> tuple | None:
    """``(type, offset, message)`` of an error, or ``None``."""
    return None if error is None else (type(error), error.offset, error.message)


@dataclass(frozen=True)
class Outcome:
    """Everything observable about a decoder after a run (comparable with ``==``)."""

    entries: tuple[Entry, ...]
    header: tuple | None
    footer: Footer | None
    warnings: tuple[str, ...]
    error: tuple | None
    status: str
    offset: int
    entry_count: int
    ended: bool


def decode(chunks: Iterable[bytes], limits: Limits | None = None, close: bool = True) -> Outcome:
    """Feed ``chunks`` to a fresh :class:`Decoder` and capture the :class:`Outcome`."""
    decoder = Decoder(limits)
    entries: list[Entry] = []
    for piece in chunks:
        entries.extend(decoder.feed(piece))
    if close:
        decoder.close()
    return outcome_of(decoder, entries)


def outcome_of(decoder, entries: list[Entry]) -> Outcome:
    """What a decoder (either engine's) ended with, given the entries it returned."""
    return Outcome(
        entries=tuple(entries),
        header=header_key(decoder.header),
        footer=decoder.footer,
        warnings=tuple(decoder.warnings),
        error=error_key(decoder.error),
        status=decoder.status,
        offset=decoder.offset,
        entry_count=decoder.entry_count,
        ended=decoder.ended,
    )


def reference_outcome(data: bytes, limits: Limits | None = None) -> dict[str, object]:
    """The reference parser's view, keyed like the comparable fields of :class:`Outcome`."""
    ref = reference.parse(data, limits)
    return {
        "entries": tuple(ref.entries),
        "header": header_key(ref.header),
        "footer": ref.footer,
        "warnings": tuple(ref.warnings),
        "error": error_key(ref.error),
        "ended": ref.ended,
    }


def comparable(outcome: Outcome) -> dict[str, object]:
    """The fields of an :class:`Outcome` that :func:`reference_outcome` also has."""
    return {
        key: getattr(outcome, key)
        for key in ("entries", "header", "footer", "warnings", "error", "ended")
    }
