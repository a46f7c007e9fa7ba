"""Chrome DevTools ``.cpuprofile`` (DevTools, speedscope, FlameScope, ``nflxprofile``).

The node tree is ``(root)`` -> one node per thread (executable module) -> its frames, plus
``(idle)`` under the root. The samples are the synthetic 101 Hz timeline of the Sentry chunks;
an idle sample marks where a busy run ends and lasts until the thread's next sample. A
``.cpuprofile`` holds one timeline and a sample lasts until the next one, so threads that ran at
the same time cannot share it: the threads are laid one after another (module order), each with
its own timing and idle gaps, which keeps every thread's time whole. ``callFrame``:
``functionName``, ``url`` = the file, ``lineNumber`` = definition line - 1 (0-based),
``scriptId`` per file. ``timeDeltas`` and times are whole microseconds.
"""

from __future__ import annotations

import json

from rokuprof.export.calltree import CallTree
from rokuprof.export.model import IDLE, ExportInput
from rokuprof.export.walk import samples_in_order, slot_us


def sequential_samples(inp: ExportInput, tree: CallTree) -> tuple[list[int], list[int], int]:
    """``(node ids, times in µs since the run start, end time)``: the threads one after
    another."""
    timeline = inp.timeline
    period = round(timeline.period_us)
    nodes: list[int] = []
    times: list[int] = []
    cursor: int | None = None
    for thread in inp.thread_order():
        runs = timeline.runs.get(thread)
        if not runs:
            continue
        base = 0 if cursor is None else cursor - slot_us(timeline, runs[0][0])
        for slot, sid in samples_in_order(timeline, thread):
            node = tree.idle() if sid == IDLE else tree.leaf(thread, sid)
            tree.node(node).hits += 1
            nodes.append(node)
            times.append(base + slot_us(timeline, slot))
        cursor = times[-1] + period
    return nodes, times, cursor or 0


def document(inp: ExportInput) -> dict:
    tree = CallTree(inp, 1, "(root)")
    samples, times, end = sequential_samples(inp, tree)
    scripts: dict[str, str] = {}
    nodes = []
    for node in tree.nodes:
        if node.frame is None:
            frame = {
                "functionName": node.name,
                "scriptId": "0",
                "url": "",
                "lineNumber": -1,
                "columnNumber": -1,
            }
        else:
            f = inp.frames[node.frame]
            script = scripts.setdefault(f.file, str(len(scripts) + 1))
            frame = {
                "functionName": f.function,
                "scriptId": script,
                "url": f.file,
                "lineNumber": f.line - 1 if f.line else -1,
                "columnNumber": -1,
            }
        entry: dict[str, object] = {"id": node.id, "callFrame": frame, "hitCount": node.hits}
        if node.children:
            entry["children"] = node.children
        nodes.append(entry)
    origin = round(inp.run.start * 1_000_000) if inp.run.start is not None else 0
    first = times[0] if times else 0
    deltas = [0] * len(times)
    for i in range(1, len(times)):
        deltas[i] = times[i] - times[i - 1]
    return {
        "nodes": nodes,
        "startTime": origin + first,
        "endTime": origin + max(end, first),
        "samples": samples,
        "timeDeltas": deltas,
    }


def export(inp: ExportInput) -> bytes:
    return json.dumps(
        document(inp), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
