"""Profile tables: what a ``.bsprof`` stream adds up to, entry by entry.

:class:`ProfileTables` applies decoded entries (tuples, see :mod:`rokuprof.bsprof.model`) and
keeps the string, module and path tables, per call path the summed counters, line-level CPU, and
a live heap (address -> allocating path and size). :meth:`ProfileTables.take_delta` says what
changed per call path since the previous call: the chunk builder turns those deltas into samples.

Pure and synchronous: no I/O, no clocks.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import sub

from rokuprof.bsprof.model import Entry, Limits

# Slots of the per-path counter list (a list, not an object, because it is updated per entry).
CPU, WALL, CALLS, ALLOCS, ALLOC_BYTES, FREES, FREE_REALLOCS, FREED_BYTES, UNKNOWN_FREES = range(9)
_N = 9

#: Path ID under which entries that name an undefined path are counted.
UNKNOWN_PATH = 0


@dataclass(frozen=True, slots=True)
class PathNode:
    """One path element: a whole call path, known by its leaf and its caller."""

    id: int
    caller: int
    module: int  # the executable module of its root
    file_id: int
    line: int
    function_id: int
    caller_line_offset: int
    depth: int  # 0 for a root


@dataclass(frozen=True, slots=True)
class PathStats:
    """Counters of one call path (cumulative in a snapshot, differences in a delta)."""

    cpu: int = 0
    wall: int = 0
    calls: int = 0
    alloc_count: int = 0
    alloc_bytes: int = 0
    free_count: int = 0
    free_realloc_count: int = 0
    freed_bytes: int = 0
    unknown_frees: int = 0

    @classmethod
    def of(cls, counters: list[int]) -> PathStats:
        return cls(*counters)

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) for f in fields(self))


@dataclass(frozen=True, slots=True)
class Delta:
    """What changed since the previous :meth:`ProfileTables.take_delta`."""

    paths: dict[int, PathStats]  # only paths whose counters changed
    line_cpu: dict[tuple[int, int], tuple[int, int]]  # (path, line offset) -> (cpu, wall)
    live_bytes: int  # current, not a difference
    live_count: int

    @property
    def wall(self) -> int:
        return sum(p.wall for p in self.paths.values())


@dataclass(frozen=True, slots=True)
class Totals:
    strings: int
    modules: int
    paths: int
    cpu: int
    wall: int
    calls: int
    alloc_count: int
    alloc_bytes: int
    free_count: int
    free_realloc_count: int
    freed_bytes: int
    unknown_frees: int
    live_bytes: int
    live_count: int


class ProfileTables:
    """Accumulates decoded entries into tables (see the module docstring)."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.strings: dict[int, str] = {}
        self.modules: dict[int, int] = {}  # module ID -> name string ID
        self.paths: dict[int, PathNode] = {}
        self.counters: dict[int, list[int]] = {UNKNOWN_PATH: [0] * _N}
        self.line_cpu: dict[tuple[int, int], list[int]] = {}
        self.heap: dict[int, tuple[int, int]] = {}  # address -> (path, size)
        self.live_bytes = 0
        self.dangling = 0  # entries naming a path that was never defined
        self.replaced_allocations = 0  # alloc at an address that was still live
        self.untracked_allocations = 0  # allocations past the live-heap limit
        self.untracked_line_cpu = 0  # CPU entries whose line was not kept (table limit)
        self.warnings: list[str] = []
        self._baseline: dict[int, list[int]] = {}
        self._line_baseline: dict[tuple[int, int], list[int]] = {}
        self._stacks: dict[int, tuple[PathNode, ...]] = {}

    # -- accumulation ------------------------------------------------------------------------

    def apply(self, entries: list[Entry]) -> None:
        """Add decoded entries, in stream order."""
        counters = self.counters
        heap = self.heap
        line_cpu = self.line_cpu
        live = self.live_bytes
        max_live = self.limits.max_live_allocations
        max_line_keys = self.limits.max_line_keys
        try:
            for e in entries:
                kind = e[0]
                if kind == 3:  # memory operation
                    _, pid, op, _, addr, size = e
                    c = counters.get(pid) or self._unknown()
                    if op == 0:
                        c[3] += 1
                        c[4] += size
                        new = (pid, size)
                        old = heap.setdefault(addr, new)
                        if old is not new:  # the address was still live: replace it
                            heap[addr] = new
                            live += size - old[1]
                            self.replaced_allocations += 1
                        elif len(heap) > max_live:
                            del heap[addr]
                            self._heap_full()
                        else:
                            live += size
                    else:
                        c[5 if op == 1 else 6] += 1
                        old = heap.pop(addr, None)
                        if old is None:
                            c[8] += 1
                        else:
                            c[7] += old[1]
                            live -= old[1]
                elif kind == 4:  # CPU
                    _, pid, line_offset, cpu, wall = e
                    c = counters.get(pid) or self._unknown()
                    c[0] += cpu
                    c[1] += wall
                    if line_offset:
                        lc = line_cpu.get((pid, line_offset))
                        if lc is None:
                            if len(line_cpu) < max_line_keys:
                                line_cpu[(pid, line_offset)] = [cpu, wall]
                            else:
                                self._line_table_full()
                        else:
                            lc[0] += cpu
                            lc[1] += wall
                elif kind == 5:  # call count
                    c = counters.get(e[1]) or self._unknown()
                    c[2] += e[2]
                elif kind == 2:
                    self._define_path(e)
                elif kind == 0:
                    self.strings[e[1]] = e[2]
                elif kind == 1:
                    self.modules[e[1]] = e[2]
        finally:
            self.live_bytes = live

    def _unknown(self) -> list[int]:
        self.dangling += 1
        return self.counters[UNKNOWN_PATH]

    def _heap_full(self) -> None:
        if not self.untracked_allocations:
            self.warnings.append(
                f"live-heap tracking stopped at {self.limits.max_live_allocations} allocations "
                "(limit); later allocations are counted but not tracked"
            )
        self.untracked_allocations += 1

    def _line_table_full(self) -> None:
        if not self.untracked_line_cpu:
            self.warnings.append(
                f"line-level CPU stopped at {self.limits.max_line_keys} (path, line) pairs "
                "(limit); call-path totals are still complete"
            )
        self.untracked_line_cpu += 1

    def _define_path(self, e: Entry) -> None:
        _, pid, caller, module, line_offset, file_id, line, function_id = e
        depth = 0
        if caller:
            parent = self.paths.get(caller)
            if parent is None:
                self.dangling += 1
                module = 0
            else:
                module = parent.module
                depth = parent.depth + 1
        self.paths[pid] = PathNode(
            pid, caller, module, file_id, line, function_id, line_offset, depth
        )
        self.counters.setdefault(pid, [0] * _N)
        self._stacks.pop(pid, None)

    # -- views -------------------------------------------------------------------------------

    def string(self, sid: int) -> str:
        """The string with that ID; a placeholder for 0 or an undefined ID."""
        text = self.strings.get(sid)
        return text if text is not None else f"<string {sid}>"

    def module_name(self, module_id: int) -> str:
        name_id = self.modules.get(module_id)
        return self.string(name_id) if name_id is not None else f"<module {module_id}>"

    def stack(self, path_id: int) -> tuple[PathNode, ...]:
        """The call path's elements, leaf first, root last."""
        cached = self._stacks.get(path_id)
        if cached is not None:
            return cached
        nodes: list[PathNode] = []
        seen: set[int] = set()
        pid = path_id
        while pid and pid not in seen:  # a hostile stream may define a cycle
            node = self.paths.get(pid)
            if node is None:
                break
            nodes.append(node)
            seen.add(pid)
            pid = node.caller
        stack = tuple(nodes)
        self._stacks[path_id] = stack
        return stack

    def line_number(self, path_id: int, line_offset: int) -> int:
        """Source line of a line offset within the function at the leaf of ``path_id``."""
        node = self.paths.get(path_id)
        return (node.line if node else 0) + line_offset - 1

    def stats(self, path_id: int) -> PathStats:
        c = self.counters.get(path_id)
        return PathStats.of(c) if c else PathStats()

    def snapshot(self) -> dict[int, PathStats]:
        """Cumulative counters of every call path that has any."""
        return {p: PathStats.of(c) for p, c in self.counters.items() if any(c)}

    def take_delta(self, lines: bool = True) -> Delta:
        """Per call path, what changed since the previous call (the first call: since start).

        ``lines=False`` skips the line-level CPU table (its ``line_cpu`` is empty and its baseline
        stays where it was): consumers that only need call paths, like the chunk builder, then do
        not pay for diffing up to ``Limits.max_line_keys`` entries."""
        base = self._baseline
        changed: dict[int, PathStats] = {}
        for pid, c in self.counters.items():
            old = base.get(pid)
            if old is None:
                if any(c):
                    changed[pid] = PathStats.of(c)
                    base[pid] = c[:]
            elif c != old:
                changed[pid] = PathStats(*map(sub, c, old))
                base[pid] = c[:]
        line_changes: dict[tuple[int, int], tuple[int, int]] = {}
        line_base = self._line_baseline
        for key, lc in self.line_cpu.items() if lines else ():
            old = line_base.get(key, (0, 0))
            if lc[0] != old[0] or lc[1] != old[1]:
                line_changes[key] = (lc[0] - old[0], lc[1] - old[1])
                line_base[key] = lc[:]
        return Delta(changed, line_changes, self.live_bytes, len(self.heap))

    def totals(self) -> Totals:
        sums = [0] * _N
        for c in self.counters.values():
            for i in range(_N):
                sums[i] += c[i]
        return Totals(
            strings=len(self.strings),
            modules=len(self.modules),
            paths=len(self.paths),
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
            live_count=len(self.heap),
        )

    def leak_sites(self) -> list[tuple[int, int, int]]:
        """Allocating call paths of the allocations still live: ``(path, count, bytes)``,
        largest first."""
        sites: dict[int, list[int]] = {}
        for pid, size in self.heap.values():
            s = sites.get(pid)
            if s is None:
                sites[pid] = [1, size]
            else:
                s[0] += 1
                s[1] += size
        return sorted(
            ((p, n, b) for p, (n, b) in sites.items()), key=lambda t: (-t[2], -t[1], t[0])
        )
