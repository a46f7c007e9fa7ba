"""The report's data model: an :class:`~rokuprof.export.model.ExportInput` as compact JSON-ready
columns for the page's script.

Everything is an index into a table: ``strings`` holds every name and file once, ``functions``
are ``inspect``'s keys ``(module, function, file)``, ``nodes`` the call tree merged by function
(the thread roots first), ``paths`` the ``.bsprof`` call paths with their exact counters (a node's
self figures are the sums of its paths), and the timeline gives, per thread, runs of synthetic
samples as ``(gap, node, count)`` triples so that the page can add up any time range per node.
The call tree's columns are number arrays (8 bytes a node). A capture with very many call paths
has its cold ones added up per thread into one ``[other call paths]`` node, and ``other`` says
so (:mod:`~rokuprof.export.report.cold`). A session's capture may add ``session``: its marks
and device vitals in seconds since the run start
(:mod:`~rokuprof.export.report.timeline_extras`).
Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from rokuprof import __version__
from rokuprof.export.interning import Interner
from rokuprof.export.model import ExportInput
from rokuprof.export.report.cold import (
    COLD_SHARE,
    OTHER_FILE,
    OTHER_FUNCTION,
    hot_stacks,
    other_note,
)
from rokuprof.export.report.memory import memory_buckets as memory_buckets  # its home
from rokuprof.export.report.tree import NodeColumns
from rokuprof.path_model import root_module
from rokuprof.timeline import IDLE

SCHEMA = "rokuprof-report/1"

#: Path counters in the model, in ``paths`` column order after ``node`` and ``id``.
PATH_COLUMNS = (
    "cpu",
    "wall",
    "calls",
    "allocCount",
    "allocBytes",
    "frees",
    "reallocs",
    "freedBytes",
    "liveCount",
    "liveBytes",
    "callLine",
)

#: The memory columns of ``memory`` rows after the path, in order (the model's names of the
#: :data:`~rokuprof.path_model.MEMORY_COUNTERS`).
MEMORY_COLUMNS = ("allocCount", "allocBytes", "frees", "reallocs", "freedBytes")

#: The model's ``strings``: each text once, referred to by its index (``id``). Given an existing
#: list, it interns into it (a diff page adds A's names to B's model).
StringTable = Interner[str]


def _number(value: float | None) -> float | None:
    """A float JSON can carry (a device may send NaN or infinity as a sample ratio)."""
    return value if value is not None and math.isfinite(value) else None


def capture_label(start: float | None) -> str:
    """How the page names the capture: by its start time (``capture of 2026-11-21 15:04:05
    UTC``), the one thing that tells two captures of one app apart in the stream itself."""
    if start is None or not math.isfinite(start):
        return "capture"
    try:
        when = datetime.fromtimestamp(start, UTC)
    except (OverflowError, OSError, ValueError):
        return "capture"
    return f"capture of {when:%Y-%m-%d %H:%M:%S} UTC"


def _facts(inp: ExportInput) -> dict[str, object]:
    run, reader = inp.run, inp.reader
    header = reader.header
    return {
        "app": run.app,
        "appVersion": run.app_version,
        "capture": capture_label(run.start),
        "supplemental": header.supplemental if header else None,
        "vendor": run.vendor,
        "model": run.model,
        "firmware": run.firmware,
        "format": f"{header.major}.{header.minor}.{header.patch}" if header else None,
        "sampleRatio": [_number(header.requested_sample_ratio), _number(header.actual_sample_ratio)]
        if header
        else None,
        "lineData": run.line_data,
        "memoryOps": run.memory_ops,
        "start": _number(run.start),
        "end": _number(run.end),
        "duration": _number(run.duration) or 0.0,
        "status": run.status,
        "problem": run.problem,
        "warnings": list(run.warnings),
        "bytes": reader.decoder.received,
        "entries": reader.entry_count,
        "rokuprof": __version__,
        "wallUnit": run.wall_unit,
        "wallPerSecond": run.units_per_second,
    }


def _totals(inp: ExportInput) -> dict[str, int]:
    t = inp.reader.tables.totals()
    return {
        "cpu": t.cpu,
        "wall": t.wall,
        "calls": t.calls,
        "allocCount": t.alloc_count,
        "allocBytes": t.alloc_bytes,
        "frees": t.free_count,
        "reallocs": t.free_realloc_count,
        "freedBytes": t.freed_bytes,
        "unknownFrees": t.unknown_frees,
        "liveBytes": t.live_bytes,
        "liveCount": t.live_count,
        "paths": t.paths,
    }


def build_model(inp: ExportInput, *, session: dict[str, object] | None = None) -> dict[str, object]:
    """The report's data (see the module docstring): plain lists, dicts, strings and ints.
    ``session``: a session's marks and vitals for the timeline
    (:func:`~rokuprof.export.report.timeline_extras.timeline_extras`); the model has a
    ``session`` entry only when it is given."""
    strings = StringTable()
    threads = inp.thread_order()
    thread_index = {m: i for i, m in enumerate(threads)}

    fn_cols: dict[str, list[int]] = {"thread": [], "name": [], "file": [], "line": []}
    fn_ids: dict[tuple[int, str, str], int] = {}

    def function(thread: int, frame: int) -> int:
        f = inp.frames[frame]
        key = (thread, f.function, f.file)
        i = fn_ids.get(key)
        if i is None:
            i = fn_ids[key] = len(fn_cols["name"])
            fn_cols["thread"].append(thread)
            fn_cols["name"].append(strings.id(f.function))
            fn_cols["file"].append(strings.id(f.file))
            fn_cols["line"].append(f.line)
        return i

    def function_named(thread: int, name: str, file: str) -> int:
        i = fn_ids[(thread, name, file)] = len(fn_cols["name"])
        fn_cols["thread"].append(thread)
        fn_cols["name"].append(strings.id(name))
        fn_cols["file"].append(strings.id(file))
        fn_cols["line"].append(0)
        return i

    tree = NodeColumns(len(threads))

    def node_of(thread: int, frames: tuple[int, ...]) -> int:
        """The node of a stack (leaf first), created on first use."""
        node = thread
        for frame in reversed(frames):
            node = tree.child(node, function(thread, frame))
        return node

    # Paths first (their order decides node order: stable and deterministic). Cold paths (a
    # capture with very many, see cold.py) are added up per thread, in the thread's "other" row.
    hot = hot_stacks(inp.paths)
    tables = inp.reader.tables
    cols: dict[str, list[int]] = {"node": [], "id": []} | {c: [] for c in PATH_COLUMNS}
    other: dict[int, list[int]] = {}  # thread index -> summed PATH_COLUMNS
    other_count = 0
    sites: list[list[object]] = []
    lines: list[int] = []
    alloc_lines: list[int] = []
    for p in inp.paths:
        t = thread_index[p.thread]
        stats = tables.stats(p.id)
        row = (
            p.cpu,
            p.wall,
            p.calls,
            p.alloc_count,
            p.alloc_bytes,
            stats.free_count,
            stats.free_realloc_count,
            stats.freed_bytes,
            p.live_count,
            p.live_bytes,
            p.lines[1] if len(p.lines) > 1 else 0,
        )
        if hot is not None and (p.thread, p.frames) not in hot:
            sums = other.get(t)
            other[t] = [a + b for a, b in zip(sums or [0] * len(row), row, strict=True)]
            other_count += 1
            continue
        index = len(cols["node"])
        cols["node"].append(node_of(t, p.frames))
        cols["id"].append(p.id)
        for name, value in zip(PATH_COLUMNS, row, strict=True):
            cols[name].append(value)
        if p.alloc_count or p.live_bytes:
            sites.append([index, list(p.lines)])
        for line, cpu, wall in p.line_cpu:
            lines += (index, line, cpu, wall)
        for line, count, size in p.line_alloc:
            alloc_lines += (index, line, count, size)
    other_nodes: dict[int, int] = {}  # thread index -> its "other" node
    other_rows: dict[int, int] = {}  # thread module -> its "other" path row
    for t in sorted(other):
        fn = function_named(threads[t], OTHER_FUNCTION, OTHER_FILE)
        other_nodes[t] = tree.child(t, fn)
        other_rows[threads[t]] = len(cols["node"])
        cols["node"].append(other_nodes[t])
        cols["id"].append(0)
        for name, value in zip(PATH_COLUMNS, other[t], strict=True):
            cols[name].append(0 if name == "callLine" else value)

    # The timeline, per thread: (gap since the previous run's end, node, samples).
    lanes = []
    tl = inp.timeline
    for thread in threads:
        runs = tl.runs.get(thread)
        if not runs:
            continue
        t = thread_index[thread]
        node_of_stack: dict[int, int] = {}  # the thread's stack ID -> its node
        flat: list[int] = []
        end = 0
        last = None  # the node of the last triple in flat
        for slot, sid, n in runs:
            if sid == IDLE:
                continue  # an idle sample only ends a run
            node = node_of_stack.get(sid)
            if node is None:
                stack = tl.stacks[sid]
                if hot is not None and (thread, stack) not in hot and t in other_nodes:
                    node = other_nodes[t]
                else:
                    node = node_of(t, stack)
                node_of_stack[sid] = node
            if slot == end and node == last:
                flat[-1] += n
            else:
                flat += (slot - end, node, n)
                last = node
            end = slot + n
        lanes.append([t, flat])
    heap: list[int] = []
    prev_slot = prev_bytes = 0
    for slot, value in tl.heap:
        heap += (slot - prev_slot, value - prev_bytes)
        prev_slot, prev_bytes = slot, value

    path_index = {pid: i for i, pid in enumerate(cols["id"]) if pid}

    def cold(pid: int) -> int | None:
        """A cold call path's row: its thread's ``other`` row."""
        thread = root_module(tables, pid)
        return other_rows.get(thread) if thread is not None else None

    model: dict[str, object] = {
        "schema": SCHEMA,
        "facts": _facts(inp),
        "totals": _totals(inp),
        "threads": [[m, strings.id(inp.threads[m])] for m in threads],
        "functions": fn_cols,
        "nodes": {"parent": tree.parent, "fn": tree.fn},
        "paths": cols,
        "sites": sites,
        "lines": lines,
        "allocLines": alloc_lines,
        "timeline": {
            "hz": tl.hz,
            "slots": tl.last_slot(),
            "lanes": lanes,
            "heap": heap,
            "memory": memory_buckets(tl.memory, path_index, cold=cold if other_rows else None),
        },
        "strings": strings.items,
    }
    if other:
        model["other"] = {
            "paths": other_count,
            "share": COLD_SHARE,
            "note": other_note(other_count, len(other)),
        }
    if session is not None:
        model["session"] = session
    return model


def node_selves(model: dict, column: str) -> list[int]:
    """Per node of ``model``: the sum of its call paths' ``column`` (its self figure)."""
    nodes = model["nodes"]["parent"]
    paths = model["paths"]
    out = [0] * len(nodes)
    for node, value in zip(paths["node"], paths[column], strict=True):
        out[node] += value
    return out
