"""The native core behind the :class:`~rokuprof.profile.reader.ProfileReader` interface.

:class:`NativeDecoder` has the state and the answers of :class:`rokuprof.bsprof.decoder.Decoder`
(header, footer, status, offset, error, warnings, entry count) but hands the body to the C core,
which decodes and accumulates in one pass; its ``feed`` returns how many entries completed, not
the entries. The header and the footer are parsed here with the construct grammar, and an entry
the core rejects is explained by :func:`rokuprof.bsprof.reference.parse_entry` exactly as the
pure decoder does, so errors are identical (type, offset, message).

:class:`NativeTables` offers the read API of :class:`~rokuprof.profile.tables.ProfileTables`;
the tables themselves live in C and Python receives them aggregated (deltas, snapshots, stacks),
never an object per entry.
"""

from __future__ import annotations

import io
import os
from array import array
from collections.abc import Mapping
from types import MappingProxyType

from construct import StreamError

from rokuprof._native import _bsprof
from rokuprof.bsprof import checks, reference
from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.errors import BsprofError, DecoderStateError, InvalidValue
from rokuprof.bsprof.grammar import FooterGrammar, GrammarFault
from rokuprof.bsprof.model import MODULE, PATH, STRING, Entry, Footer, Header, Limits
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import (
    DEEP_PATHS_WARNING,
    RESERVED_STRINGS,
    Delta,
    PathNode,
    PathStats,
    Totals,
    fold_stack,
)

HEADER, BODY, FOOTER, DONE, FAILED = "header", "body", "footer", "done", "failed"


def _limits_tuple(limits: Limits) -> tuple[int, ...]:
    return (
        limits.max_string_bytes,
        limits.max_strings,
        limits.max_string_table_chars,
        limits.max_modules,
        limits.max_paths,
        limits.max_live_allocations,
        limits.max_line_keys,
        limits.max_stack_depth,
    )


class NativeDecoder:
    """Incremental decoder of one stream over the native core (see the module docstring).

    ``record=True`` keeps every decoded entry for :meth:`take_entries` (tests and the fuzzer
    compare them with the reference parser); normal use never materialises entries.
    """

    def __init__(self, limits: Limits | None = None, *, record: bool = False) -> None:
        self.limits = limits or Limits()
        self.state = HEADER
        self.header: Header | None = None
        self.error: BsprofError | None = None
        self.warnings: list[str] = []
        self.received = 0
        self.closed = False
        self._record = record
        self._seed = int.from_bytes(os.urandom(8), "little")
        self._limits = _limits_tuple(self.limits)
        self.core = _bsprof.Core(self._limits, False, record, self._seed)
        self._buf = b""  # header or footer bytes waiting for the rest
        self._base = 0  # stream offset of self._buf[0] (outside the body)
        self._body_start = 0
        self._end_ms: int | None = None
        self._trailing = 0
        self._end_seen = False

    # -- public state (as Decoder) -----------------------------------------------------------

    @property
    def offset(self) -> int:
        """Bytes decoded so far (everything before the partial entry being waited on, or before
        the unreadable entry after an error; trailing bytes after the footer count)."""
        if self.state == BODY or (self.state == FAILED and self.header and not self._end_seen):
            return self._body_start + self.core.progress()[0]
        return self._base

    @property
    def entry_count(self) -> int:
        return self.core.progress()[1]

    @property
    def footer(self) -> Footer | None:
        if self._end_ms is None:
            return None
        return Footer(self._end_ms, self._trailing)

    @property
    def ended(self) -> bool:
        """True once the end-of-entries marker has been read."""
        return self._end_seen

    @property
    def status(self) -> str:
        """``complete`` (footer read), ``corrupt`` (error), else ``incomplete`` / ``streaming``."""
        if self.error is not None:
            return "corrupt"
        if self.state == DONE:
            return "complete"
        return "incomplete" if self.closed else "streaming"

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Take the next bytes of the stream; return how many body entries they completed."""
        if self.closed:
            raise DecoderStateError(self.offset, "feed() after close()")
        self.received += len(data)
        if self.state == FAILED:
            return 0
        if self.state == DONE:
            self._trailing += len(data)
            self._base += len(data)
            return 0
        before = self.core.progress()[1]
        if self.state == HEADER:
            buf = self._buf + bytes(data)
            pos = self._read_header(buf)
            if self.state != BODY:
                self._buf = buf if self.state == HEADER else b""
                return 0
            self._buf = b""
            data = memoryview(buf)[pos:]
        if self.state == BODY:
            status, used = self.core.feed(data)
            if status == _bsprof.END:
                self._end_seen = True
                self.state = FOOTER
                self._base = self._body_start + self.core.progress()[0]
                data = memoryview(data)[used:]
            elif status == _bsprof.REJECT:
                self._explain(memoryview(data)[used:])
        if self.state == FOOTER:
            self._read_footer(self._buf + bytes(data))
        return self.core.progress()[1] - before

    def close(self) -> None:
        """Say the stream has ended (EOF). Afterwards :attr:`status` is final."""
        self.closed = True

    def take_entries(self) -> list[Entry]:
        """Record mode: the entries decoded since the previous call, as entry tuples."""
        return self.core.take_records()

    # -- internals ---------------------------------------------------------------------------

    def _fail(self, error: BsprofError) -> None:
        self.error = error
        self.state = FAILED

    def _read_header(self, buf: bytes) -> int:
        try:
            header, size = reference.parse_header(buf, self.limits)
        except reference.Truncated:
            return 0
        except BsprofError as error:
            self._fail(error)
            return 0
        self.header = header
        warning = checks.version_warning(header)
        if warning:
            self.warnings.append(warning)
        self.core = _bsprof.Core(self._limits, header.line_data, self._record, self._seed)
        self._body_start = size
        self.state = BODY
        return size

    def _read_footer(self, buf: bytes) -> None:
        stream = io.BytesIO(buf)
        try:
            footer = FooterGrammar.parse_stream(stream)
        except GrammarFault as fault:
            self._buf = b""
            self._fail(fault.make(self._base))
            return
        except StreamError:  # the footer is still arriving
            self._buf = buf
            return
        self._end_ms = footer.end_ms
        self._trailing = len(buf) - stream.tell()
        self._base += len(buf)
        self._buf = b""
        self.state = DONE

    def _explain(self, rest: memoryview) -> None:
        """The core rejected the entry at its offset: let the grammar say why."""
        where = self._body_start + self.core.progress()[0]
        buf = self.core.pending() + bytes(rest)
        definitions = checks.DefinitionLimits(self.limits)
        strings, modules, paths, chars = self.core.definition_counts()
        definitions.counts = {STRING: strings, MODULE: modules, PATH: paths}
        definitions.string_chars = chars
        try:
            reference.parse_entry(buf, 0, self.header.line_data, self.limits, definitions, where)
        except BsprofError as error:
            self._fail(error)
            return
        except reference.Truncated:
            pass
        # The grammar accepts what the core refused: a bug in the core, reported as data.
        self._fail(InvalidValue(where, "the native decoder refused an entry the grammar accepts"))


_WARNINGS = {
    _bsprof.WARN_HEAP_FULL: (
        "live-heap tracking stopped at {limits.max_live_allocations} allocations (limit); "
        "later allocations are counted but not tracked"
    ),
    _bsprof.WARN_LINES_FULL: (
        "line-level CPU stopped at {limits.max_line_keys} (path, line) pairs (limit); "
        "call-path totals are still complete"
    ),
    _bsprof.WARN_SATURATED: "a counter reached 2**64 - 1 and stays there (saturated)",
    _bsprof.WARN_DEEP_PATHS: DEEP_PATHS_WARNING,
    _bsprof.WARN_ALLOC_LINES_FULL: (
        "allocations per line stopped at {limits.max_line_keys} (path, line) pairs (limit); "
        "call-path totals are still complete"
    ),
}

_UNBOUNDED = 2**64 - 1

#: Bounds of the caches of decoded strings and built stacks (cleared when full).
STRING_CACHE = 65_536
STACK_CACHE = 8_192
NODE_CACHE = 65_536


class NativeTables:
    """The API of :class:`~rokuprof.profile.tables.ProfileTables` over the native core.

    A reader's tables (``NativeTables(decoder=...)``) live in its decoder's core. Standalone
    tables (``NativeTables(limits)``) have a core of their own, and :meth:`apply` encodes the
    entries it is given and runs them through it.

    Strings and stacks are cached in Python as they are asked for; :meth:`sync` (called by the
    reader after every feed) drops what the definitions since then made stale, so answers are
    always those of the current tables.
    """

    def __init__(self, limits: Limits | None = None, *, decoder: NativeDecoder | None = None):
        self._decoder = decoder
        self.limits = decoder.limits if decoder is not None else (limits or Limits())
        self._own = None
        if decoder is None:
            bounds = (_UNBOUNDED,) * 5 + _limits_tuple(self.limits)[5:]
            self._own = _bsprof.Core(bounds, True, False, int.from_bytes(os.urandom(8), "little"))
        self._strings: dict[int, str] = {}
        self._stacks: dict[int, tuple[PathNode, ...]] = {}
        self._nodes: dict[int, PathNode] = {}
        self._open_stacks: set[int] = set()  # cached stacks cut short by an undefined caller

    @property
    def _core(self):
        return self._own if self._decoder is None else self._decoder.core

    # -- accumulation ------------------------------------------------------------------------

    def apply(self, entries: list[Entry]) -> None:
        """Add decoded entries, in stream order (standalone tables only)."""
        if self._own is None:
            raise TypeError("a reader's tables are filled by its feed(), not by apply()")
        status, _ = self._own.feed(encode_entries(entries, True))
        if status != _bsprof.MORE or self._own.pending():
            raise ValueError("not entries a decoder produces: the core could not read them back")
        self.sync()

    def sync(self) -> None:
        """Drop the cached strings and stacks that definitions since the previous call made
        stale."""
        pairs = self._core.take_definitions()
        if not pairs or not (self._strings or self._stacks or self._nodes):
            return
        words = array("I", pairs)
        strings, stacks = self._strings, self._stacks
        redefined = _bsprof.REDEFINED
        first_path = False
        for i in range(0, len(words), 2):
            kind = words[i]
            if kind == STRING | redefined:
                strings.pop(words[i + 1], None)
            elif kind == PATH | redefined:  # any cached stack may hold the old node
                stacks.clear()
                self._nodes.clear()
                self._open_stacks.clear()
            elif kind == PATH:
                first_path = True
        if first_path:  # a new path may be the missing caller of a stack cut short
            for pid in self._open_stacks:
                stacks.pop(pid, None)
            self._open_stacks.clear()

    # -- views -------------------------------------------------------------------------------

    def string(self, sid: int) -> str:
        """The string with that ID; a placeholder for 0 or an undefined ID."""
        text = self._strings.get(sid)
        if text is None:
            text = self._core.string(sid)
            if text is None:
                return RESERVED_STRINGS.get(sid, f"<string {sid}>")
            if len(self._strings) >= STRING_CACHE:
                self._strings.clear()
            self._strings[sid] = text
        return text

    def module_name(self, module_id: int) -> str:
        name_id = self._core.module(module_id)
        return self.string(name_id) if name_id is not None else f"<module {module_id}>"

    def node(self, path_id: int) -> PathNode | None:
        """The call path's own element (its leaf), or ``None`` for an undefined path."""
        fields = self._core.path(path_id)
        return self._node(fields) if fields else None

    def stack(self, path_id: int) -> tuple[PathNode, ...]:
        """The call path's elements, leaf first, root last, folded to at most
        ``limits.max_stack_depth`` (:func:`~rokuprof.profile.tables.fold_stack`)."""
        stack = self._stacks.get(path_id)
        if stack is None:
            limit = self.limits.max_stack_depth
            nodes = list(map(self._node, self._core.stack(path_id, limit + 1)))
            stack = fold_stack(nodes, limit)
            if len(self._stacks) >= STACK_CACHE:
                self._stacks.clear()
                self._open_stacks.clear()
            self._stacks[path_id] = stack
            caller = stack[-1].caller if stack else path_id
            if caller and not any(node.id == caller for node in stack):
                self._open_stacks.add(path_id)
        return stack

    def _node(self, fields: tuple[int, ...]) -> PathNode:
        """The node of a path's fields, one object per path (bounded cache, emptied by
        :meth:`sync` when a path is redefined)."""
        node = self._nodes.get(fields[0])
        if node is None:
            if len(self._nodes) >= NODE_CACHE:
                self._nodes.clear()
            node = self._nodes[fields[0]] = PathNode(*fields)
        return node

    def line_number(self, path_id: int, line_offset: int) -> int:
        """Source line of a line offset within the function at the leaf of ``path_id``."""
        node = self._core.path(path_id)
        return (node[4] if node else 0) + line_offset - 1

    def stats(self, path_id: int) -> PathStats:
        counts = self._core.stats(path_id)
        return PathStats(*counts[1:]) if counts else PathStats()

    def snapshot(self) -> dict[int, PathStats]:
        """Cumulative counters of every call path that has any."""
        return {c[0]: PathStats(*c[1:]) for c in self._core.snapshot()}

    def take_delta(self, lines: bool = True) -> Delta:
        """Per call path, what changed since the previous call (see ProfileTables)."""
        paths, line_changes = self._core.take_delta(lines)
        state = self._core.state()
        return Delta(
            {c[0]: PathStats(*c[1:]) for c in paths},
            {(p, lo): (cpu, wall) for p, lo, cpu, wall in line_changes},
            state[4],
            state[5],
        )

    def totals(self) -> Totals:
        return Totals(*self._core.totals())

    def leak_sites(self) -> list[tuple[int, int, int]]:
        """Allocating call paths of the allocations still live: ``(path, count, bytes)``,
        largest first."""
        return self._core.leak_sites()

    # -- the mappings of ProfileTables (built on request: their cost grows with the tables) --

    @property
    def strings(self) -> Mapping[int, str]:
        return MappingProxyType(dict(self._core.strings()))

    @property
    def modules(self) -> Mapping[int, int]:
        return MappingProxyType(dict(self._core.modules()))

    @property
    def paths(self) -> Mapping[int, PathNode]:
        return MappingProxyType({node[0]: PathNode(*node) for node in self._core.paths()})

    @property
    def counters(self) -> Mapping[int, tuple[int, ...]]:
        return MappingProxyType({c[0]: c[1:] for c in self._core.counters()})

    @property
    def line_cpu(self) -> Mapping[tuple[int, int], tuple[int, int]]:
        lines = self._core.line_cpu()
        return MappingProxyType({(p, lo): (cpu, wall) for p, lo, cpu, wall in lines})

    @property
    def line_alloc(self) -> Mapping[tuple[int, int], tuple[int, int]]:
        """``(path, line offset)`` -> ``(count, bytes)`` of the allocations made at that line,
        in first-seen order (empty without line data)."""
        lines = self._core.line_alloc()
        return MappingProxyType({(p, lo): (n, size) for p, lo, n, size in lines})

    @property
    def heap(self) -> Mapping[int, tuple[int, int]]:
        return MappingProxyType({address: (p, size) for address, p, size in self._core.heap()})

    # -- the plain attributes of ProfileTables -----------------------------------------------

    @property
    def live_bytes(self) -> int:
        return self._core.state()[4]

    @property
    def dangling(self) -> int:
        return self._core.state()[0]

    @property
    def replaced_allocations(self) -> int:
        return self._core.state()[1]

    @property
    def untracked_allocations(self) -> int:
        return self._core.state()[2]

    @property
    def untracked_line_cpu(self) -> int:
        return self._core.state()[3]

    @property
    def untracked_line_allocs(self) -> int:
        """Allocations whose line was not kept (the allocation-line table was full)."""
        return self._core.state()[8]

    @property
    def saturated(self) -> int:
        return self._core.state()[6]

    @property
    def warnings(self) -> list[str]:
        codes = self._core.state()[7]
        leaf = self.limits.max_stack_depth - 1
        return [_WARNINGS[code].format(limits=self.limits, leaf=leaf) for code in codes if code]

    @property
    def deep_paths(self) -> int:
        """Paths defined deeper than ``limits.max_stack_depth`` frames (their stacks fold)."""
        return self._core.state()[9]

    def memory(self) -> int:
        """Bytes the native tables and buffers hold."""
        return self._core.memory()


class NativeProfileReader(ProfileReader):
    """:class:`~rokuprof.profile.reader.ProfileReader` over the native core."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.decoder = NativeDecoder(limits)
        self.tables = NativeTables(decoder=self.decoder)

    def feed(self, data: bytes | bytearray | memoryview) -> int:
        """Decode and apply ``data``; return how many entries it completed."""
        count = self.decoder.feed(data)
        self.tables.sync()
        return count
