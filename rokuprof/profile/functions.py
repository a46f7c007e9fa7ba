"""Per-function view of the call-path tables: self and total time, calls, allocated bytes."""

from __future__ import annotations

from dataclasses import dataclass

from rokuprof.path_model import PathNode
from rokuprof.profile.tables import ProfileTables

FunctionKey = tuple[str, str, str]  # (module name, function, file)

#: What ``inspect --json`` lists per function.
JSON_FIELDS = (
    "module",
    "function",
    "file",
    "self_cpu",
    "self_wall",
    "total_cpu",
    "total_wall",
    "calls",
)


@dataclass(slots=True)
class FunctionStats:
    module: str
    function: str
    file: str
    self_cpu: int = 0
    self_wall: int = 0
    total_cpu: int = 0
    total_wall: int = 0
    calls: int = 0
    alloc_bytes: int = 0  # self; counted only when asked for (the live view)

    def to_json(self) -> dict[str, object]:
        """The fields ``inspect --json`` lists (allocations are not among them)."""
        return {name: getattr(self, name) for name in JSON_FIELDS}


def function_key(tables: ProfileTables, node: PathNode) -> FunctionKey:
    return key_of(tables, node.module, node.function_id, node.file_id)


def key_of(tables: ProfileTables, module: int, function_id: int, file_id: int) -> FunctionKey:
    """The name of a (module, function, file) ID triple."""
    return (tables.module_name(module), tables.string(function_id), tables.string(file_id))


def aggregate_functions(tables: ProfileTables, *, allocations: bool = False) -> list[FunctionStats]:
    """Aggregate per (module, function, file), sorted by self wall time, descending.

    Self counts the call paths whose leaf is the function; total counts every call path that has
    it anywhere on its stack, once per path even when it recurses; calls are the call counts of
    the paths whose leaf it is. ``allocations`` also counts each function's self allocated bytes
    (``alloc_bytes``), listing the functions that only allocated too.

    The native tables sum in C by the same rule (``function_sums``: no object per call path,
    constant time per frame); the pure tables walk each path's stack here.
    """
    sums = getattr(tables, "function_sums", None)
    if sums is not None:
        rows = sums(allocations, lambda *ids: key_of(tables, *ids))
        return _ranked(FunctionStats(*key, *figures) for key, *figures in rows)
    return _ranked(_walk(tables, allocations).values())


def _ranked(functions) -> list[FunctionStats]:
    return sorted(
        functions, key=lambda f: (-f.self_wall, -f.total_wall, f.module, f.function, f.file)
    )


def _walk(tables: ProfileTables, allocations: bool) -> dict[FunctionKey, FunctionStats]:
    """The functions of every counted path's stack, walked in Python (the pure tables)."""
    result: dict[FunctionKey, FunctionStats] = {}
    by_ids: dict[tuple[int, int, int], FunctionStats] = {}  # names looked up once per function

    def get(node: PathNode) -> FunctionStats:
        ids = (node.module, node.function_id, node.file_id)
        stats = by_ids.get(ids)
        if stats is None:
            key = function_key(tables, node)
            stats = result.get(key)
            if stats is None:
                stats = result[key] = FunctionStats(*key)
            by_ids[ids] = stats
        return stats

    for pid, c in tables.snapshot().items():
        if not (c.cpu or c.wall or c.calls or (allocations and c.alloc_bytes)):
            continue
        stack = tables.stack(pid)
        if not stack:
            continue
        leaf = get(stack[0])
        leaf.self_cpu += c.cpu
        leaf.self_wall += c.wall
        leaf.calls += c.calls
        if allocations:
            leaf.alloc_bytes += c.alloc_bytes
        for stats in {id(s): s for s in map(get, stack)}.values():  # once per stack
            stats.total_cpu += c.cpu
            stats.total_wall += c.wall
    return result
