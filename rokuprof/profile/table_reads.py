"""The read API of :class:`~rokuprof.profile.tables.ProfileTables` over its compact columns
(see that module's docstring for the layout): nodes and stacks built on demand in bounded
caches, snapshots, deltas, totals, leak sites and read-only mapping views (pure: no I/O)."""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping
from operator import sub

from rokuprof.bsprof.model import Limits
from rokuprof.path_model import (
    ALLOC_BYTES,
    ALLOCS,
    CALLS,
    CPU,
    FREE_REALLOCS,
    FREED_BYTES,
    FREES,
    RESERVED_STRINGS,
    UNKNOWN_FREES,
    WALL,
    Delta,
    PathNode,
    PathStats,
    Totals,
    WallDelta,
    fold_stack,
    wall_delta,
)

_N = 9  # counters per path (PathStats' fields)
# Positions of a path's definition in its row of eight uint32 (and the fields of PathNode).
_ID, _CALLER, _MODULE, _FILE, _LINE, _FUNCTION, _LINE_OFFSET, _DEPTH = range(8)
_D = 8  # uint32 per path definition

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF
_ZEROS = array("Q", bytes(8 * _N))

#: Bounds of the caches of built PathNode objects and of stacks (each is emptied when full).
NODE_CACHE = 4_096
STACK_CACHE = 4_096


class TableReads:
    """What every consumer reads of the tables; :class:`ProfileTables` fills the columns."""

    limits: Limits
    strings: dict[int, str]
    modules: dict[int, int]
    live_bytes: int
    _at: dict[int, int]
    _defs: array
    _counts: array
    _base: array
    _changed: bytearray
    _heap: dict[int, int]
    _line_keys: array
    _lines: array
    _line_base: array
    _line_changed: bytearray
    _nodes: dict[int, PathNode]
    _stacks: dict[int, tuple[PathNode, ...]]

    def _sync(self) -> None:
        """Write counts still held elsewhere back into the columns (the tables' cache)."""

    # -- views -------------------------------------------------------------------------------

    @property
    def paths(self) -> Mapping[int, PathNode]:
        """Defined call paths: path ID -> :class:`PathNode` (read-only, built on access)."""
        return _PathsView(self)

    @property
    def counters(self) -> Mapping[int, tuple[int, ...]]:
        """Path ID (:data:`UNKNOWN_PATH` included) -> its nine counters (read-only)."""
        return _CountersView(self)

    @property
    def heap(self) -> Mapping[int, tuple[int, int]]:
        """The live heap: address -> ``(path, size)`` (read-only)."""
        return _HeapView(self)

    @property
    def line_cpu(self) -> Mapping[tuple[int, int], tuple[int, int]]:
        """``(path, line offset)`` -> ``(cpu, wall)`` (read-only)."""
        return _LineView(self, "_line_at", "_line_keys", "_lines")

    @property
    def line_alloc(self) -> Mapping[tuple[int, int], tuple[int, int]]:
        """``(path, line offset)`` -> ``(count, bytes)`` of the allocations made at that line
        (read-only; empty without line data)."""
        return _LineView(self, "_alloc_line_at", "_alloc_line_keys", "_alloc_lines")

    def string(self, sid: int) -> str:
        """The string with that ID; a placeholder for 0 or an undefined ID."""
        text = self.strings.get(sid)
        if text is None:
            text = RESERVED_STRINGS.get(sid)
        return text if text is not None else f"<string {sid}>"

    def module_name(self, module_id: int) -> str:
        name_id = self.modules.get(module_id)
        return self.string(name_id) if name_id is not None else f"<module {module_id}>"

    def _node(self, b: int) -> PathNode:
        """The node of the path whose counters are at ``b`` (cached)."""
        slot = b // _N
        node = self._nodes.get(slot)
        if node is None:
            if len(self._nodes) >= NODE_CACHE:
                self._nodes.clear()
            d = slot * _D
            node = self._nodes[slot] = PathNode(*self._defs[d : d + _D])
        return node

    def node(self, path_id: int) -> PathNode | None:
        """The call path's own element (its leaf), or ``None`` for an undefined path."""
        b = self._at.get(path_id)
        return self._node(b) if b else None

    def stack(self, path_id: int) -> tuple[PathNode, ...]:
        """The call path's elements, leaf first, root last, folded to at most
        ``limits.max_stack_depth`` (:func:`fold_stack`)."""
        cached = self._stacks.get(path_id)
        if cached is not None:
            return cached
        at = self._at.get
        defs = self._defs
        limit = self.limits.max_stack_depth
        nodes: list[PathNode] = []
        seen: set[int] = set()
        pid = path_id
        while pid and pid not in seen and len(nodes) <= limit:  # a stream may define a cycle
            b = at(pid)
            if b is None:  # cut short by an undefined ID: its definition may still come
                return tuple(nodes)
            nodes.append(self._node(b))
            seen.add(pid)
            pid = defs[b // _N * _D + _CALLER]
        stack = fold_stack(nodes, limit)
        if len(self._stacks) >= STACK_CACHE:
            self._stacks.clear()
        self._stacks[path_id] = stack
        return stack

    def line_number(self, path_id: int, line_offset: int) -> int:
        """Source line of a line offset within the function at the leaf of ``path_id``."""
        b = self._at.get(path_id)
        line = self._defs[b // _N * _D + _LINE] if b else 0
        return line + line_offset - 1

    def stats(self, path_id: int) -> PathStats:
        self._sync()
        b = self._at.get(path_id)
        return PathStats(*self._counts[b : b + _N]) if b is not None else PathStats()

    def snapshot(self) -> dict[int, PathStats]:
        """Cumulative counters of every call path that has any."""
        self._sync()
        counts = self._counts
        out: dict[int, PathStats] = {}
        for pid, b in self._at.items():
            row = counts[b : b + _N]
            if any(row):
                out[pid] = PathStats(*row)
        return out

    def take_delta(self, lines: bool = True) -> Delta:
        """Per call path, what changed since the previous call (the first call: since start).

        ``lines=False`` skips the line-level CPU table (its ``line_cpu`` is empty and its baseline
        stays where it was): consumers that only need call paths, like the chunk builder, then do
        not pay for diffing up to ``Limits.max_line_keys`` entries."""
        self._sync()
        counts, base, changed, defs = self._counts, self._base, self._changed, self._defs
        find = changed.find
        paths: dict[int, PathStats] = {}
        b = find(1)
        while b >= 0:
            changed[b] = 0
            now = counts[b : b + _N]
            old = base[b : b + _N]
            if now != old:
                paths[defs[b // _N * _D]] = PathStats(*map(sub, now, old))  # row 0: ID 0
                base[b : b + _N] = now
            b = find(1, b + 1)
        line_changes: dict[tuple[int, int], tuple[int, int]] = {}
        if lines:
            values, line_base, flags = self._lines, self._line_base, self._line_changed
            keys = self._line_keys
            find = flags.find
            j = find(1)
            while j >= 0:
                flags[j] = 0
                cpu, wall = values[j] - line_base[j], values[j + 1] - line_base[j + 1]
                if cpu or wall:
                    key = keys[j >> 1]
                    line_changes[(key & _U32, key >> 32)] = (cpu, wall)
                    line_base[j : j + 2] = values[j : j + 2]
                j = find(1, j + 2)
        return Delta(paths, line_changes, self.live_bytes, len(self._heap))

    def take_walls(self) -> WallDelta:
        """``take_delta(lines=False)`` as a :class:`WallDelta` (what the chunk builder and the
        timeline take every slice)."""
        return wall_delta(self.take_delta(lines=False))

    def totals(self) -> Totals:
        self._sync()
        counts = self._counts
        sums = [sum(counts[i::_N]) for i in range(_N)]
        return Totals(
            strings=len(self.strings),
            modules=len(self.modules),
            paths=len(self._at) - 1,
            cpu=sums[CPU],
            wall=sums[WALL],
            calls=sums[CALLS],
            alloc_count=sums[ALLOCS],
            alloc_bytes=sums[ALLOC_BYTES],
            free_count=sums[FREES],
            free_realloc_count=sums[FREE_REALLOCS],
            freed_bytes=sums[FREED_BYTES],
            unknown_frees=sums[UNKNOWN_FREES],
            live_bytes=self.live_bytes,
            live_count=len(self._heap),
        )

    def leak_sites(self) -> list[tuple[int, int, int]]:
        """Allocating call paths of the allocations still live: ``(path, count, bytes)``,
        largest first."""
        sites: dict[int, list[int]] = {}  # slot -> count, bytes
        for packed in self._heap.values():
            slot, size = packed >> 32, packed & _U32
            s = sites.get(slot)
            if s is None:
                sites[slot] = [1, size]
            else:
                s[0] += 1
                s[1] += size
        defs = self._defs
        return sorted(
            ((defs[slot * _D], n, b) for slot, (n, b) in sites.items()),
            key=lambda t: (-t[2], -t[1], t[0]),
        )


# -- read-only views of the compact tables -----------------------------------------------------


class _PathsView(Mapping[int, PathNode]):
    __slots__ = ("_t",)

    def __init__(self, tables: TableReads) -> None:
        self._t = tables

    def __getitem__(self, pid: int) -> PathNode:
        b = self._t._at.get(pid)
        if not b:
            raise KeyError(pid)
        return self._t._node(b)

    def __iter__(self) -> Iterator[int]:
        return (pid for pid, b in self._t._at.items() if b)

    def __len__(self) -> int:
        return len(self._t._at) - 1


class _CountersView(Mapping[int, tuple[int, ...]]):
    __slots__ = ("_t",)

    def __init__(self, tables: TableReads) -> None:
        self._t = tables

    def __getitem__(self, pid: int) -> tuple[int, ...]:
        self._t._sync()
        b = self._t._at[pid]
        return tuple(self._t._counts[b : b + _N])

    def __iter__(self) -> Iterator[int]:
        return iter(self._t._at)

    def __len__(self) -> int:
        return len(self._t._at)


class _HeapView(Mapping[int, tuple[int, int]]):
    __slots__ = ("_t",)

    def __init__(self, tables: TableReads) -> None:
        self._t = tables

    def __getitem__(self, addr: int) -> tuple[int, int]:
        packed = self._t._heap[addr]
        return self._t._defs[(packed >> 32) * _D], packed & _U32

    def __iter__(self) -> Iterator[int]:
        return iter(self._t._heap)

    def __len__(self) -> int:
        return len(self._t._heap)


class _LineView(Mapping[tuple[int, int], tuple[int, int]]):
    """A line table (its index dict, keys and pairs of uint64 columns) as a mapping."""

    __slots__ = ("_at", "_keys", "_t", "_values")

    def __init__(self, tables: TableReads, at: str, keys: str, values: str) -> None:
        self._t = tables
        self._at: dict[int, int] = getattr(tables, at)
        self._keys: array = getattr(tables, keys)
        self._values: array = getattr(tables, values)

    def __getitem__(self, key: tuple[int, int]) -> tuple[int, int]:
        path, offset = key
        self._t._sync()
        j = self._at[offset << 32 | path]
        return self._values[j], self._values[j + 1]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return ((key & _U32, key >> 32) for key in self._keys)

    def __len__(self) -> int:
        return len(self._keys)
