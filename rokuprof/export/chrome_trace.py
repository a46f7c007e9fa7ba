"""Trace Event Format JSON (Perfetto, chrome://tracing, DevTools, speedscope, FlameScope).

* ``M`` events name the process (the app) and one thread per executable module (``tid`` = module
  ID), in module order;
* ``X`` (complete) events lay out the synthetic 101 Hz timeline of the Sentry chunks: one event
  per frame occurrence, nested by stack depth, ``ts`` and ``dur`` in whole microseconds since the
  run start, ``name`` = function, ``args`` = file and definition line;
* ``C`` (counter) events: ``live heap`` (bytes, the values the chunks carry) and ``cpu`` (CPU
  operations per thread in each 100 ms, the exact CPU of each stack spread over its samples).
"""

from __future__ import annotations

import json

from rokuprof import __version__
from rokuprof.export.model import IDLE, ExportInput
from rokuprof.export.walk import slot_us, spans, stack_cpu_rates

PID = 1
CATEGORY = "brightscript"
CPU_BUCKET_US = 100_000


def events(inp: ExportInput) -> list[dict]:
    timeline = inp.timeline
    frames = inp.frames
    out: list[dict] = [
        {
            "name": "process_name",
            "ph": "M",
            "ts": 0,
            "pid": PID,
            "tid": 0,
            "args": {"name": inp.run.app or "BrightScript app"},
        }
    ]
    for index, thread in enumerate(inp.thread_order()):
        out.append(
            {
                "name": "thread_name",
                "ph": "M",
                "ts": 0,
                "pid": PID,
                "tid": thread,
                "args": {"name": inp.threads[thread]},
            }
        )
        out.append(
            {
                "name": "thread_sort_index",
                "ph": "M",
                "ts": 0,
                "pid": PID,
                "tid": thread,
                "args": {"sort_index": index},
            }
        )
    complete: list[tuple[int, int, int, int, dict]] = []
    for thread in inp.thread_order():
        for frame, first, end, depth in spans(timeline, thread):
            ts = slot_us(timeline, first)
            dur = slot_us(timeline, end) - ts
            f = frames[frame]
            args: dict[str, object] = {"file": f.file}
            if f.line:
                args["line"] = f.line
            event = {
                "name": f.function,
                "cat": CATEGORY,
                "ph": "X",
                "ts": ts,
                "dur": dur,
                "pid": PID,
                "tid": thread,
                "args": args,
            }
            complete.append((thread, ts, -dur, depth, event))
    complete.sort(key=lambda e: e[:4])
    out.extend(e[4] for e in complete)
    out.extend(_heap_counters(inp))
    out.extend(_cpu_counters(inp))
    return out


def _heap_counters(inp: ExportInput) -> list[dict]:
    return [
        {
            "name": "live heap",
            "ph": "C",
            "ts": slot_us(inp.timeline, slot),
            "pid": PID,
            "tid": 0,
            "args": {"bytes": value},
        }
        for slot, value in inp.timeline.heap
    ]


def _cpu_counters(inp: ExportInput) -> list[dict]:
    timeline = inp.timeline
    rates = stack_cpu_rates(inp)
    buckets: dict[int, dict[int, float]] = {}
    for thread, runs in timeline.runs.items():
        for slot, sid, n in runs:
            rate = rates.get((thread, sid)) if sid != IDLE else None
            if not rate:
                continue
            for i in range(n):
                b = slot_us(timeline, slot + i) // CPU_BUCKET_US
                per = buckets.setdefault(b, {})
                per[thread] = per.get(thread, 0.0) + rate
    if not buckets:
        return []
    names = {t: inp.threads[t] for t in inp.thread_order()}
    out = []
    for b in range(min(buckets), max(buckets) + 2):  # a final bucket of zeros ends the chart
        per = buckets.get(b, {})
        out.append(
            {
                "name": "cpu",
                "ph": "C",
                "ts": b * CPU_BUCKET_US,
                "pid": PID,
                "tid": 0,
                "args": {names[t]: round(per.get(t, 0.0)) for t in names},
            }
        )
    return out


def document(inp: ExportInput) -> dict:
    other: dict[str, object] = {"exporter": f"rokuprof {__version__}", "input": inp.run.status}
    if inp.run.start is not None:
        other["run_start_epoch_ms"] = round(inp.run.start * 1000)
    if inp.run.app:
        other["app"] = inp.run.app
    if inp.run.app_version:
        other["app_version"] = inp.run.app_version
    return {"traceEvents": events(inp), "displayTimeUnit": "ms", "otherData": other}


def export(inp: ExportInput) -> bytes:
    return json.dumps(
        document(inp), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
