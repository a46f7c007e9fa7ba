"""The call-path model every table engine hands out: :class:`PathNode` (one element of a call
path, known by its leaf and its caller), the counters of a path (:class:`PathStats`, in a
:class:`Delta` or :class:`Totals`), and the one folding rule for stacks deeper than the limit
(pure: no I/O). Both table engines speak it, the Python one (:mod:`rokuprof.profile`) and the
native one (:mod:`rokuprof._native`), so neither package needs the other's vocabulary: it is the
interface between them."""

from __future__ import annotations

from dataclasses import dataclass, fields

# Positions of the nine counters of a call path (and the fields of PathStats, in this order).
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


#: The marked frame that stands for the root-side frames of a stack deeper than the limit: its
#: node ID and string IDs lie outside the uint32 range of a device's IDs.
FOLDED_PATH = 1 << 32
FOLDED_FUNCTION = FOLDED_PATH
FOLDED_FILE = FOLDED_PATH + 1
#: Texts of the reserved string IDs (what :meth:`ProfileTables.string` gives for them).
RESERVED_STRINGS = {FOLDED_FUNCTION: "[deeper frames folded]", FOLDED_FILE: "rokuprof:/folded"}

# The warnings both table engines give, once each, when a limit is reached: templates formatted
# with ``limits`` (the stream's :class:`~rokuprof.bsprof.model.Limits`) and ``leaf`` (its
# ``max_stack_depth - 1``), so the two engines word them alike.
HEAP_FULL_WARNING = (
    "live-heap tracking stopped at {limits.max_live_allocations} allocations (limit); "
    "later allocations are counted but not tracked"
)
LINES_FULL_WARNING = (
    "line-level CPU stopped at {limits.max_line_keys} (path, line) pairs (limit); "
    "call-path totals are still complete"
)
ALLOC_LINES_FULL_WARNING = (
    "allocations per line stopped at {limits.max_line_keys} (path, line) pairs (limit); "
    "call-path totals are still complete"
)
SATURATED_WARNING = "a counter reached 2**64 - 1 and stays there (saturated)"
DEEP_PATHS_WARNING = (
    "call paths deeper than {limits.max_stack_depth} frames: each stack shows its leaf-most "
    "{leaf} frames and one '[deeper frames folded]' frame for the rest (limit)"
)


def limit_warning(template: str, limits) -> str:
    """One of the warnings above, worded for ``limits``."""
    return template.format(limits=limits, leaf=limits.max_stack_depth - 1)


def fold_stack(nodes: list[PathNode] | tuple[PathNode, ...], limit: int) -> tuple[PathNode, ...]:
    """A stack as every output shows it, from up to ``limit + 1`` nodes walked from the leaf:
    unchanged when it has at most ``limit`` nodes; else its leaf-most ``limit - 1`` nodes and a
    marked node (:data:`FOLDED_PATH`, in the module of the path, ``depth`` of the first folded
    node) for the rest. Both engines walk and fold by this one rule."""
    if len(nodes) <= limit:
        return tuple(nodes)
    cut = nodes[limit - 1]
    marker = PathNode(FOLDED_PATH, 0, cut.module, FOLDED_FILE, 0, FOLDED_FUNCTION, 0, cut.depth)
    return (*nodes[: limit - 1], marker)


def root_module(tables, path_id: int) -> int | None:
    """The executable module (Sentry thread) of a call path: its root's, which every node
    carries, so no stack is walked unless the path was defined under a caller not yet defined;
    ``None`` for an undefined path. ``tables``: either core's."""
    node = tables.node(path_id) if path_id else None
    if node is not None and node.caller and not node.depth:  # defined dangling
        stack = tables.stack(path_id)
        node = stack[-1] if stack else None
    return node.module if node is not None else None


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
    def of(cls, counters) -> PathStats:
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


#: The memory counters of a :class:`WallDelta`'s rows (:class:`PathStats` names, in order).
MEMORY_COUNTERS = ("alloc_count", "alloc_bytes", "free_count", "free_realloc_count", "freed_bytes")


@dataclass(frozen=True, slots=True)
class WallDelta:
    """A :class:`Delta` as the chunk builder and the timeline use it (``take_walls``): no
    object per call path, so taking one every few kilobytes of a stream stays cheap."""

    walls: dict[int, int]  # call path -> its wall-self difference, for the paths that have one
    #: per call path with memory operations: its ID and its :data:`MEMORY_COUNTERS`
    #: differences, six numbers a row, one flat list (empty: no memory operation)
    memory: list[int]
    live_bytes: int  # current, not a difference


def wall_delta(delta: Delta) -> WallDelta:
    """The :class:`WallDelta` of a :class:`Delta` (the definition both engines' ``take_walls``
    are checked against)."""
    walls: dict[int, int] = {}
    memory: list[int] = []
    for path, st in delta.paths.items():
        if st.wall:
            walls[path] = st.wall
        if st.alloc_count or st.free_count or st.free_realloc_count:
            memory += (
                path,
                st.alloc_count,
                st.alloc_bytes,
                st.free_count,
                st.free_realloc_count,
                st.freed_bytes,
            )
    return WallDelta(walls, memory, delta.live_bytes)


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
