"""Chrome DevTools CPU profiles, one per thread, on the run's own time axis (DevTools,
speedscope, FlameScope, ``nflxprofile``).

A ``.cpuprofile`` object holds one timeline where a sample lasts until the next, so threads that
ran at the same time cannot share one. The file is therefore a Trace Event array (the form
DevTools writes when it records a profile): ``M`` names for the process and each thread, then per
thread (executable module, ``tid`` = module ID) a ``Profile`` event (``id``, ``startTime`` = the
run's start) and a ``ProfileChunk`` holding that thread's whole ``cpuProfile`` (``nodes``,
``samples``), ``timeDeltas`` and ``endTime`` (the run's end). :func:`thread_profile` is the same
profile as a plain ``.cpuprofile`` object.

Per thread, the node tree is ``(root)`` -> the thread -> its frames, plus ``(idle)`` under the
root; the samples are the synthetic 101 Hz timeline of the Sentry chunks, an idle sample marks
where a busy run ends, and a last idle sample sits at the run's end. ``callFrame``:
``functionName``, ``url`` = the file, ``lineNumber`` = definition line - 1 (0-based),
``scriptId`` per file. Times are whole microseconds since 1970.
"""

from __future__ import annotations

import json

from rokuprof.export.calltree import CallTree
from rokuprof.export.model import IDLE, ExportInput
from rokuprof.export.names import drawn
from rokuprof.export.walk import samples_in_order, slot_us

PID = 1
CATEGORY = "disabled-by-default-v8.cpu_profiler"


def _samples(inp: ExportInput, thread: int, tree: CallTree) -> tuple[list[int], list[int], int]:
    """``(node ids, time deltas, end)`` of one thread, in µs since the run start."""
    timeline = inp.timeline
    nodes: list[int] = []
    deltas: list[int] = []
    last = 0
    for slot, sid in samples_in_order(timeline, thread):
        node = tree.idle() if sid == IDLE else tree.leaf(thread, sid)
        tree.node(node).hits += 1
        nodes.append(node)
        t = slot_us(timeline, slot)
        deltas.append(t - last)
        last = t
    end = last
    run = inp.run
    if run.start is not None and run.end is not None:
        end = max(end, round((run.end - run.start) * 1_000_000))
    if end > last or not nodes:  # an idle sample at the run's end
        tree.node(tree.idle()).hits += 1
        nodes.append(tree.idle())
        deltas.append(end - last)
    return nodes, deltas, end


def _origin(inp: ExportInput) -> int:
    return round(inp.run.start * 1_000_000) if inp.run.start is not None else 0


def thread_profile(inp: ExportInput, thread: int) -> dict:
    """One thread as a ``.cpuprofile`` object, from the run's start to its end."""
    tree = CallTree(inp, 1, "(root)")
    tree.idle()
    samples, deltas, end = _samples(inp, thread, tree)
    origin = _origin(inp)
    return {
        "nodes": _nodes(inp, tree),
        "startTime": origin,
        "endTime": origin + end,
        "samples": samples,
        "timeDeltas": deltas,
    }


def _nodes(inp: ExportInput, tree: CallTree) -> list[dict]:
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
                "functionName": node.name,
                "scriptId": script,
                "url": drawn(f.file),
                "lineNumber": f.line - 1 if f.line else -1,
                "columnNumber": -1,
            }
        entry: dict[str, object] = {"id": node.id, "callFrame": frame, "hitCount": node.hits}
        if node.parent is not None:
            entry["parent"] = node.parent
        if node.children:
            entry["children"] = node.children
        nodes.append(entry)
    return nodes


def events(inp: ExportInput) -> list[dict]:
    """The Trace Event array: names, then each thread's ``Profile`` and ``ProfileChunk``."""
    origin = _origin(inp)
    threads = [t for t in inp.thread_order() if inp.timeline.runs.get(t)]

    def event(name: str, ph: str, tid: int, args: dict, **more: object) -> dict:
        cat = "__metadata" if ph == "M" else CATEGORY
        return {
            "name": name,
            "ph": ph,
            "cat": cat,
            "pid": PID,
            "tid": tid,
            "ts": origin,
            **more,
            "args": args,
        }

    out = [event("process_name", "M", 0, {"name": inp.run.app or "BrightScript app"})]
    out += [event("thread_name", "M", t, {"name": inp.threads[t]}) for t in threads]
    for t in threads:
        profile = thread_profile(inp, t)
        pid = f"0x{t:x}"
        out.append(event("Profile", "P", t, {"data": {"startTime": profile["startTime"]}}, id=pid))
        data = {
            "cpuProfile": {"nodes": profile["nodes"], "samples": profile["samples"]},
            "timeDeltas": profile["timeDeltas"],
            "endTime": profile["endTime"],
        }
        out.append(event("ProfileChunk", "P", t, {"data": data}, id=pid))
    return out


def export(inp: ExportInput) -> bytes:
    return json.dumps(
        events(inp), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
