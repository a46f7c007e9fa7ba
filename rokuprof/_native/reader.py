"""The native core as a body engine and as profile tables.

:class:`NativeBody` is the :class:`~rokuprof.bsprof.decoder.BodyEngine` over the C core, which
decodes and counts in one pass: the :class:`~rokuprof.bsprof.decoder.Framing` around it reads
the header and the footer exactly as for the pure decoder, and an entry the core rejects is
explained by :func:`rokuprof.bsprof.reference.parse_entry` as the pure body does, so errors are
identical (type, offset, message). :class:`NativeDecoder` is that framing (``feed`` counts).

:class:`NativeTables` satisfies :class:`~rokuprof.profile.protocol.TablesView`, as
:class:`~rokuprof.profile.tables.ProfileTables` does; the tables themselves live in C and
Python receives them aggregated (deltas, snapshots, stacks), never an object per entry.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Mapping
from types import MappingProxyType

from rokuprof._native import _bsprof
from rokuprof.bsprof import checks
from rokuprof.bsprof.decoder import Bytes, Framing
from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.errors import BsprofError, InvalidValue
from rokuprof.bsprof.model import MODULE, PATH, STRING, Entry, Header, Limits
from rokuprof.path_model import (
    ALLOC_LINES_FULL_WARNING,
    DEEP_PATHS_WARNING,
    HEAP_FULL_WARNING,
    LINES_FULL_WARNING,
    RESERVED_STRINGS,
    SATURATED_WARNING,
    Delta,
    PathNode,
    PathStats,
    Totals,
    WallDelta,
    fold_stack,
    limit_warning,
)


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


def _seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


class NativeBody:
    """The :class:`~rokuprof.bsprof.decoder.BodyEngine` over the C core: it keeps the partial
    entry itself and counts what it decodes into its tables (:attr:`tables`, made on first use).

    ``record=True`` keeps every decoded entry for :meth:`take_entries` (tests and the fuzzer
    compare them with the reference parser); normal use never materialises entries."""

    #: The live heap's size (cells) from which the core decodes a few entries ahead of applying
    #: them, to overlap their cache misses; ``-1``: the core's default (65,536). Results never
    #: depend on it: tests set 0 to take every stream through that path.
    queue_from_cells = -1

    def __init__(self, limits: Limits, *, record: bool = False) -> None:
        self.limits = limits
        self.error: BsprofError | None = None
        self.ended = False
        self._record = record
        self._seed = _seed()
        self._limits = _limits_tuple(limits)
        self.core = _bsprof.Core(self._limits, False, record, self._seed, self.queue_from_cells)
        self._start = 0  # stream offset of the body
        self._line = False
        self._tables: NativeTables | None = None

    @property
    def tables(self) -> NativeTables:
        """The tables this body counts into."""
        if self._tables is None:
            self._tables = NativeTables(body=self)
        return self._tables

    @property
    def offset(self) -> int:
        return self._start + self.core.progress()[0]

    @property
    def entry_count(self) -> int:
        return self.core.progress()[1]

    def begin(self, header: Header, offset: int) -> None:
        self._line = header.line_data
        self.core = _bsprof.Core(
            self._limits, self._line, self._record, self._seed, self.queue_from_cells
        )
        self._start = offset

    def feed(self, buf: Bytes, pos: int, base: int) -> int:
        status, used = self.core.feed(memoryview(buf)[pos:] if pos else buf)
        if status == _bsprof.END:
            self.ended = True
        elif status == _bsprof.REJECT:
            self._explain(memoryview(buf)[pos + used :])
        if self._tables is not None:
            self._tables.sync()
        return pos + used

    def take_entries(self) -> list[Entry]:
        """Record mode: the entries decoded since the previous call, as entry tuples."""
        return self.core.take_records()

    def _explain(self, rest: memoryview) -> None:
        """The core rejected the entry at its offset: let the grammar say why."""
        from rokuprof.bsprof import reference  # the grammar loads when it has something to say

        where = self.offset
        buf = self.core.pending() + bytes(rest)
        definitions = checks.DefinitionLimits(self.limits)
        strings, modules, paths, chars = self.core.definition_counts()
        definitions.counts = {STRING: strings, MODULE: modules, PATH: paths}
        definitions.string_chars = chars
        try:
            reference.parse_entry(buf, 0, self._line, self.limits, definitions, where)
        except BsprofError as error:
            self.error = error
            return
        except reference.Truncated:
            pass
        # The grammar accepts what the core refused: a bug in the core, reported as data.
        self.error = InvalidValue(where, "the native decoder refused an entry the grammar accepts")


class NativeDecoder(Framing):
    """Incremental decoder of one stream over the native core (see the module docstring)."""

    body: NativeBody

    def __init__(self, limits: Limits | None = None, *, record: bool = False) -> None:
        limits = limits or Limits()
        super().__init__(limits, NativeBody(limits, record=record))

    @property
    def core(self):
        """The C core of the body (recreated when the header says whether lines are sent)."""
        return self.body.core

    def feed(self, data: Bytes) -> int:
        """Take the next bytes of the stream; return how many body entries they completed."""
        return self.advance(data)

    def take_entries(self) -> list[Entry]:
        """Record mode: the entries decoded since the previous call, as entry tuples."""
        return self.body.take_entries()


_WARNINGS = {
    _bsprof.WARN_HEAP_FULL: HEAP_FULL_WARNING,
    _bsprof.WARN_LINES_FULL: LINES_FULL_WARNING,
    _bsprof.WARN_SATURATED: SATURATED_WARNING,
    _bsprof.WARN_DEEP_PATHS: DEEP_PATHS_WARNING,
    _bsprof.WARN_ALLOC_LINES_FULL: ALLOC_LINES_FULL_WARNING,
}

_UNBOUNDED = 2**64 - 1


def _state_field(position: int, doc: str | None = None) -> property:
    """A read-only attribute of :class:`NativeTables`: one scalar of the core's ``state()``."""
    return property(lambda self: self._core.state()[position], doc=doc)


#: Bounds of the caches of decoded strings and built stacks (cleared when full).
STRING_CACHE = 65_536
STACK_CACHE = 8_192
NODE_CACHE = 65_536


class NativeTables:
    """The tables over the native core (:class:`~rokuprof.profile.protocol.TablesView`, as
    :class:`~rokuprof.profile.tables.ProfileTables`).

    A reader's tables (:attr:`NativeBody.tables`) live in its body's core. Standalone tables
    (``NativeTables(limits)``) have a core of their own, and :meth:`apply` encodes the entries
    it is given and runs them through it.

    Strings and stacks are cached in Python as they are asked for; :meth:`sync` (called by the
    body after every feed) drops what the definitions since then made stale, so answers are
    always those of the current tables.
    """

    def __init__(self, limits: Limits | None = None, *, body: NativeBody | None = None):
        self._body = body
        self.limits = body.limits if body is not None else (limits or Limits())
        self._own = None
        if body is None:
            bounds = (_UNBOUNDED,) * 5 + _limits_tuple(self.limits)[5:]
            self._own = _bsprof.Core(bounds, True, False, _seed())
        self._strings: dict[int, str] = {}
        self._stacks: dict[int, tuple[PathNode, ...]] = {}
        self._nodes: dict[int, PathNode] = {}
        self._open_stacks: set[int] = set()  # cached stacks cut short by an undefined caller

    @property
    def _core(self):
        return self._own if self._body is None else self._body.core

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
        ``limits.max_stack_depth`` (:func:`~rokuprof.path_model.fold_stack`)."""
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

    def function_sums(self, allocations: bool, key) -> list[tuple]:
        """Per-function sums in C (``aggregate_functions`` on the native tables), without an
        object per path: ``(key, self cpu, self wall, total cpu, total wall, calls, alloc
        bytes)`` for each distinct ``key(module, function ID, file ID)`` of the counted stacks
        (one group per key, so a name is counted once per stack however many IDs carry it)."""
        keys: list = []

        def name(words: tuple[int, ...]) -> tuple[array, int]:
            groups, index = array("I"), {}
            for i in range(0, len(words), 3):
                k = key(words[i], words[i + 1], words[i + 2])
                group = index.get(k)
                if group is None:
                    group = index[k] = len(keys)
                    keys.append(k)
                groups.append(group)
            return groups, len(keys)

        rows = self._core.functions(allocations, _seed(), name)
        return [(keys[row[0]], *row[1:]) for row in rows]

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

    def take_walls(self) -> WallDelta:
        """``take_delta(lines=False)`` as a :class:`WallDelta`, built in C (no object per path)."""
        walls, memory = self._core.take_walls()
        return WallDelta(walls, memory, self._core.state()[4])

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

    # Each of these is its position in the tuple Core.state() returns (_bsprof.c says which).
    dangling = _state_field(0)
    replaced_allocations = _state_field(1)
    untracked_allocations = _state_field(2)
    untracked_line_cpu = _state_field(3)
    live_bytes = _state_field(4)
    saturated = _state_field(6)
    untracked_line_allocs = _state_field(
        8, "Allocations whose line was not kept (the allocation-line table was full)."
    )
    deep_paths = _state_field(
        9, "Paths defined deeper than ``limits.max_stack_depth`` frames (their stacks fold)."
    )

    @property
    def warnings(self) -> list[str]:
        codes = self._core.state()[7]
        return [limit_warning(_WARNINGS[code], self.limits) for code in codes if code]

    def memory(self) -> int:
        """Bytes the native tables and buffers hold."""
        return self._core.memory()
