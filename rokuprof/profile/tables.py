"""Profile tables: what a ``.bsprof`` stream adds up to, entry by entry.

:class:`ProfileTables` applies decoded entries (tuples, see :mod:`rokuprof.bsprof.model`) and
keeps the string, module and path tables, per call path the summed counters, line-level CPU,
allocations per source line, and a live heap (address -> allocating path and size).
:meth:`ProfileTables.take_delta` says what changed per call path since the previous call: the
chunk builder turns those deltas into samples.

Pure and synchronous: no I/O, no clocks.

The read API (what the capture, the chunk builder, the exporters and the views use; another
implementation of the tables must present the same):

* ``apply(entries)``: add decoded entries, in stream order;
* ``node(path_id)``: the :class:`PathNode` of a path (``None`` if undefined);
  ``stack(path_id)``: the :class:`PathNode` elements of a call path, leaf first (``()`` for an
  undefined path), at most ``limits.max_stack_depth`` of them (see :func:`fold_stack`);
  ``stats(path_id)``: its :class:`PathStats`; ``line_number(path_id, offset)``;
* ``snapshot()``: cumulative :class:`PathStats` of every path with any; ``take_delta(lines)``: a
  :class:`Delta` of what changed since the previous call; ``totals()``: :class:`Totals`;
  ``leak_sites()``: ``(path, count, bytes)`` of the live heap, largest first;
* ``string(id)``, ``module_name(id)``: names, with a placeholder for an unknown ID;
* read-only mappings: ``strings`` (ID -> text), ``modules`` (ID -> name string ID), ``paths``
  (ID -> :class:`PathNode`), ``counters`` (ID -> the nine counters as a tuple, in
  :class:`PathStats` order, :data:`UNKNOWN_PATH` included), ``line_cpu`` ((path, line offset) ->
  ``(cpu, wall)``), ``line_alloc`` ((path, line offset) -> ``(count, bytes)`` of the allocations
  made at that line; only with line data) and ``heap`` (address -> ``(path, size)``);
* plain attributes: ``limits``, ``live_bytes``, ``dangling``, ``deep_paths``,
  ``replaced_allocations``, ``untracked_allocations``, ``untracked_line_cpu``,
  ``untracked_line_allocs``, ``saturated``, ``warnings``.

Storage is compact because a device decides how many paths, allocations and line keys we hold
(``benchmarks/memory.py`` measures each):

* a call path has no object of its own but a dense slot number (one dict entry, path ID ->
  counter offset) into ``array`` columns: its definition (eight uint32), its nine counters and
  their delta baseline (uint64 each) and a changed flag, so :meth:`take_delta` visits only the
  paths that changed;
* the live heap maps an address to one int, ``slot << 32 | size`` (slot 0: an allocation on an
  undefined path, counted under :data:`UNKNOWN_PATH`);
* the line table maps ``offset << 32 | path`` to a slot in uint64 (cpu, wall) columns; the
  allocation-line table likewise to (count, bytes) columns, with no delta baseline (no consumer
  needs its changes, so :meth:`take_delta` leaves it out);
* a call path is a parent pointer (its caller's ID): O(1) memory however deep the chain, and a
  stack is walked on demand, at most ``limits.max_stack_depth + 1`` nodes, so every view costs
  at most that per path;
* counting itself happens in a bounded write-back cache of plain lists (see :meth:`apply`), and
  the :class:`PathNode` objects and stacks handed out are built on demand and kept in bounded
  caches.

Counters stop at 2**64 - 1 (``saturated`` counts how often one would have passed it; a warning
says so).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import NamedTuple

from rokuprof.bsprof.model import Entry, Limits
from rokuprof.path_model import (
    ALLOC_BYTES,
    ALLOC_LINES_FULL_WARNING,
    ALLOCS,
    DEEP_PATHS_WARNING,
    HEAP_FULL_WARNING,
    LINES_FULL_WARNING,
    SATURATED_WARNING,
    UNKNOWN_PATH,
    PathNode,
    limit_warning,
)
from rokuprof.profile.table_reads import (
    _D,
    _DEPTH,
    _MODULE,
    _N,
    _U32,
    _U64,
    _ZEROS,
    TableReads,
)

#: The names a consumer of the tables imports from here (the model has its own home,
#: :mod:`rokuprof.path_model`).
__all__ = [
    "ProfileTables",
]

#: Bound of the caches of rows being counted (each is emptied when full).
HOT_ROWS = 8_192


class WriteBack(NamedTuple):
    """The tables' write-back rows as a body loop counts into them while it decodes
    (:mod:`rokuprof.profile.counting_body`): the cached rows' look-ups and the makers of new ones
    (``None`` for an undefined path or a full table; see :meth:`ProfileTables.apply`), the live
    heap (address -> ``slot << 32 | size``), the definer of call paths and the count of what a
    limit turned away (with its warning). Valid as long as the tables are: their caches are
    emptied in place, never replaced."""

    row_of: Callable[[int], list[int] | None]
    new_row: Callable[[int], list[int] | None]
    line_of: Callable[[tuple[int, int]], list[int] | None]
    new_line_row: Callable[[int, int], list[int] | None]
    alloc_line_of: Callable[[tuple[int, int]], list[int] | None]
    new_alloc_line_row: Callable[[int, int], list[int] | None]
    heap: dict[int, int]
    define_path: Callable[[Entry], None]
    over_limit: Callable[[str, str], None]


class ProfileTables(TableReads):
    """Accumulates decoded entries into tables (see the module docstring)."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.strings: dict[int, str] = {}
        self.modules: dict[int, int] = {}  # module ID -> name string ID
        self.live_bytes = 0
        self.dangling = 0  # entries naming a path that was never defined
        self.replaced_allocations = 0  # alloc at an address that was still live
        self.untracked_allocations = 0  # allocations past the live-heap limit
        self.untracked_line_cpu = 0  # CPU entries whose line was not kept (table limit)
        self._untracked_line_allocs = 0  # allocations whose line was not kept (table limit)
        self._alloc_lines_full = False
        self.saturated = 0  # times a counter would have passed 2**64 - 1 (it stays there)
        self.deep_paths = 0  # paths defined deeper than limits.max_stack_depth frames
        self.warnings: list[str] = []
        # Call paths: path ID -> offset of its counters (slot * 9); slot 0 is UNKNOWN_PATH.
        self._at: dict[int, int] = {UNKNOWN_PATH: 0}
        self._defs = array("I", bytes(4 * _D))  # per slot: id, caller, module, ... (_D uint32)
        self._counts = array("Q", _ZEROS)  # per slot: the nine counters
        self._base = array("Q", _ZEROS)  # per slot: the counters at the last take_delta
        self._changed = bytearray(_N)  # at the slot's counter offset: 1 = changed since then
        # Live heap: address -> slot << 32 | size (slot 0: an undefined path).
        self._heap: dict[int, int] = {}
        # Line-level CPU: offset << 32 | path -> slot * 2 in (cpu, wall) columns.
        self._line_at: dict[int, int] = {}
        self._line_keys = array("Q")  # per line slot: its key
        self._lines = array("Q")
        self._line_base = array("Q")
        self._line_changed = bytearray()
        # Allocations per line: offset << 32 | path -> slot * 2 in (count, bytes) columns.
        self._alloc_line_at: dict[int, int] = {}
        self._alloc_line_keys = array("Q")
        self._alloc_lines = array("Q")
        # Write-back cache of the rows being counted (see apply()).
        self._hot: dict[int, list[int]] = {}  # path ID (-1: UNKNOWN_PATH) -> row
        self._hot_lines: dict[tuple[int, int], list[int]] = {}  # (path, offset) -> row
        self._hot_alloc_lines: dict[tuple[int, int], list[int]] = {}  # (path, offset) -> row
        self._stray_alloc_lines: dict[tuple[int, int], list[int]] = {}  # the line's alone
        self._nodes: dict[int, PathNode] = {}  # slot -> node (bounded cache)
        self._stacks: dict[int, tuple[PathNode, ...]] = {}  # path ID -> stack (bounded cache)

    # -- accumulation ------------------------------------------------------------------------

    def apply(self, entries: list[Entry]) -> None:
        """Add decoded entries, in stream order.

        Counting in Python is fastest in plain lists, so the paths and line keys being counted
        have a row of Python ints in a bounded write-back cache (:data:`HOT_ROWS` of each);
        :meth:`_sync` adds them to the compact columns before anything reads counters, and when
        the cache is full. This is the general way, one entry at a time; the pure engine's body
        (:mod:`rokuprof.profile.counting_body`) counts the common entries into the same rows as
        it decodes them, with one look-up per entry (an allocation at a line is counted in its
        (path, line) row only, which :meth:`_sync` adds to the path's counters as well)."""
        for e in entries:
            kind = e[0]
            if kind == 2:
                self._define_path(e)
            elif kind == 0:
                self.strings[e[1]] = e[2]
            elif kind == 1:
                self.modules[e[1]] = e[2]
            else:
                self.live_bytes += self._count(e)

    def write_back(self) -> WriteBack:
        """What a body loop needs to count into the write-back rows (see :class:`WriteBack`)."""
        return WriteBack(
            self._hot.get,
            self._row,
            self._hot_lines.get,
            self._line_row,
            self._hot_alloc_lines.get,
            self._alloc_line_row,
            self._heap,
            self._define_path,
            self._over_limit,
        )

    def _row(self, pid: int) -> list[int] | None:
        """A new cache row for a defined path: its nine counters to add, ``slot << 32`` (for
        the heap) and the offset of its counters; ``None`` for an undefined path."""
        b = self._at.get(pid)
        if not b:
            return None
        if len(self._hot) >= HOT_ROWS:
            self._sync()
        row = self._hot[pid] = [0, 0, 0, 0, 0, 0, 0, 0, 0, b // _N << 32, b]
        return row

    def _line_row(self, pid: int, offset: int) -> list[int] | None:
        """A new cache row for a line key (cpu, wall, slot); ``None`` (counted) when the line
        table is full."""
        key = offset << 32 | pid
        j = self._line_at.get(key)
        if j is None:
            if len(self._line_keys) >= self.limits.max_line_keys:
                self._over_limit("untracked_line_cpu", LINES_FULL_WARNING)
                return None
            j = self._line_at[key] = len(self._lines)
            self._line_keys.append(key)
            self._lines.extend((0, 0))
            self._line_base.extend((0, 0))
            self._line_changed += b"\x00\x00"
        if len(self._hot_lines) >= HOT_ROWS:
            self._sync()
        row = self._hot_lines[(pid, offset)] = [0, 0, j]
        return row

    def _alloc_line_row(self, pid: int, offset: int) -> list[int] | None:
        """A new cache row for allocations at a line of a defined path: count and bytes to add,
        the line's slot (-1 when the allocation-line table is full), ``slot << 32`` and the
        offset of the path's counters (the row counts for the path too, so an allocation costs
        one look-up); ``None`` for an undefined path."""
        b = self._at.get(pid)
        if not b:
            return None
        j = self._alloc_line_slot(pid, offset)
        if len(self._hot_alloc_lines) >= HOT_ROWS:
            self._sync()
        row = self._hot_alloc_lines[(pid, offset)] = [0, 0, j, b // _N << 32, b]
        return row

    def _alloc_line_slot(self, pid: int, offset: int) -> int:
        """The slot of (path, offset) in the allocation-line columns, made on first use; -1 once
        the table is full (the allocation is then counted as untracked)."""
        key = offset << 32 | pid
        j = self._alloc_line_at.get(key)
        if j is None:
            if len(self._alloc_line_keys) < self.limits.max_line_keys:
                j = self._alloc_line_at[key] = len(self._alloc_lines)
                self._alloc_line_keys.append(key)
                self._alloc_lines.extend((0, 0))
            else:
                j = self._alloc_line_table_full()
        return j

    def _count(self, e: Entry) -> int:
        """Count a CPU, call or memory entry. One that names an undefined path (or path 0) has
        its counters and heap entry go to :data:`UNKNOWN_PATH`, its line CPU and allocations
        keep the path it named. Returns the change of the live bytes."""
        pid = e[1]
        c = self._hot.get(pid) or self._row(pid)
        if c is None:
            if pid:
                self.dangling += 1
            c = self._hot.get(-1)
            if c is None:
                if len(self._hot) >= HOT_ROWS:
                    self._sync()
                c = self._hot[-1] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]  # UNKNOWN_PATH's row
        kind = e[0]
        if kind == 5:
            c[2] += e[2]
            return 0
        if kind == 4:
            _, _, offset, cpu, wall = e
            c[0] += cpu
            c[1] += wall
            lc = offset and (self._hot_lines.get((pid, offset)) or self._line_row(pid, offset))
            if lc:
                lc[0] += cpu
                lc[1] += wall
            return 0
        _, _, op, offset, addr, size = e
        heap = self._heap
        if op:
            c[5 if op == 1 else 6] += 1
            old = heap.pop(addr, None)
            if old is None:
                c[8] += 1
                return 0
            c[7] += old & 0xFFFFFFFF
            return -(old & 0xFFFFFFFF)
        c[3] += 1
        c[4] += size
        if offset:  # the line's row (the line keeps the path it named)
            lc = self._stray_alloc_lines.get((pid, offset))
            if lc is None:
                j = self._alloc_line_slot(pid, offset)
                if len(self._stray_alloc_lines) >= HOT_ROWS:
                    self._sync()
                lc = self._stray_alloc_lines[(pid, offset)] = [0, 0, j]
            lc[0] += 1
            lc[1] += size
        old = heap.get(addr)
        if old is not None:
            heap[addr] = c[9] | size  # slot << 32 | size (slot 0: UNKNOWN_PATH)
            self.replaced_allocations += 1
            return size - (old & 0xFFFFFFFF)
        if len(heap) >= self.limits.max_live_allocations:
            self._over_limit("untracked_allocations", HEAP_FULL_WARNING)
            return 0
        heap[addr] = c[9] | size
        return size

    def _sync(self) -> None:
        """Add the cached rows to the columns, flag what changed and empty the cache. A counter
        that would pass 2**64 - 1 stops there."""
        if not (self._hot or self._hot_lines or self._hot_alloc_lines or self._stray_alloc_lines):
            return
        counts, changed, add = self._counts, self._changed, self._add_saturating
        for row in self._hot.values():
            b = row[10]
            for k in range(_N):
                if row[k]:
                    changed[b] = 1
                    add(counts, b + k, row[k])
        values, flags = self._lines, self._line_changed
        for row in self._hot_lines.values():
            j = row[2]
            for i in (0, 1):
                if row[i]:
                    flags[j] = 1
                    add(values, j + i, row[i])
        for row in self._hot_alloc_lines.values():  # the path's allocation counters
            b = row[4]
            if row[0]:
                changed[b] = 1
                for k in (ALLOCS, ALLOC_BYTES):
                    add(counts, b + k, row[k - ALLOCS])
        values = self._alloc_lines
        for row in (*self._hot_alloc_lines.values(), *self._stray_alloc_lines.values()):
            j = row[2]
            if j < 0:  # the table was full
                self._untracked_line_allocs += row[0]
                continue
            for i in (0, 1):
                if row[i]:
                    add(values, j + i, row[i])
        self._hot.clear()
        self._hot_lines.clear()
        self._hot_alloc_lines.clear()
        self._stray_alloc_lines.clear()

    def _add_saturating(self, column: array, i: int, value: int) -> None:
        """Add to a uint64 column; a sum past 2**64 - 1 stays there (and is counted)."""
        try:
            column[i] += value
        except OverflowError:
            column[i] = _U64
            self._over_limit("saturated", SATURATED_WARNING)

    def _first_warning(self, count: int, template: str) -> None:
        """Give a limit's warning (a template of :mod:`rokuprof.path_model`) when ``count``, what
        that limit has cost so far, is still 0."""
        if not count:
            self.warnings.append(limit_warning(template, self.limits))

    def _over_limit(self, counter: str, template: str) -> None:
        """Count one more of what a limit costs (the attribute ``counter``: saturations, deep
        paths, untracked allocations or line CPU), warning the first time."""
        count = getattr(self, counter)
        self._first_warning(count, template)
        setattr(self, counter, count + 1)

    def _alloc_line_table_full(self) -> int:
        """Warn once that the allocation-line table is full; -1, the slot of a line not kept
        (:meth:`_sync` counts its allocations as untracked)."""
        self._first_warning(self._alloc_lines_full, ALLOC_LINES_FULL_WARNING)
        self._alloc_lines_full = True
        return -1

    @property
    def untracked_line_allocs(self) -> int:
        """Allocations whose line was not kept (the allocation-line table was full)."""
        self._sync()
        return self._untracked_line_allocs

    def _define_path(self, e: Entry) -> None:
        _, pid, caller, module, line_offset, file_id, line, function_id = e
        defs = self._defs
        depth = 0
        if caller:
            parent = self._at.get(caller)
            if not parent:  # undefined (UNKNOWN_PATH's slot 0 is no path either)
                self.dangling += 1
                module = 0
            else:
                p = parent // _N * _D
                module = defs[p + _MODULE]
                depth = min(defs[p + _DEPTH] + 1, _U32)
        row = (pid, caller, module, file_id, line, function_id, line_offset, depth)
        b = self._at.get(pid)
        if b is None:
            if depth >= self.limits.max_stack_depth:
                self._over_limit("deep_paths", DEEP_PATHS_WARNING)
            self._at[pid] = len(self._counts)
            defs.extend(row)
            self._counts.extend(_ZEROS)
            self._base.extend(_ZEROS)
            self._changed += bytes(_N)
        else:  # a redefinition: the counters stay, every cached stack may be stale
            d = b // _N * _D
            defs[d : d + _D] = array("I", row)
            self._nodes.clear()
            self._stacks.clear()
