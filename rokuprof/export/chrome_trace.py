"""Trace Event Format JSON (Perfetto, chrome://tracing, DevTools, speedscope, FlameScope).

* ``M`` events name the process (the app) and one thread per executable module (``tid`` = module
  ID), in module order;
* ``B``/``E`` (begin/end) pairs lay out the synthetic 101 Hz timeline of the Sentry chunks: one
  pair per frame occurrence, ``ts`` in whole microseconds since the run start, ``name`` =
  function and ``args`` = file and definition line on both (readers match an ``E`` to its ``B``
  by them). Per thread they are in time order; where frames end as others begin (a stack
  changes), the ends come 1 ns before the begins, innermost first, then the begins outermost
  first, so readers that sort by ``ts`` cannot mis-nest them. (``X`` events cannot say that a
  child ends exactly when its parent does, which a sampled timeline has all the time.)
* ``C`` (counter) events: ``live heap`` (bytes, the values the chunks carry) and ``cpu`` (CPU
  operations per thread in each 100 ms, the exact CPU of each stack spread over its samples).
"""

from __future__ import annotations

import json

from rokuprof import __version__
from rokuprof.export.model import IDLE, ExportInput
from rokuprof.export.walk import OPEN, frame_events, slot_us, stack_cpu_rates

PID = 1
CATEGORY = "brightscript"
CPU_BUCKET_US = 100_000
#: Ends that hand over to a begin at the same moment come this much earlier (1 ns), so that no
#: reader can take the begin first (speedscope does when both name the same function).
HANDOVER_US = 0.001


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
    for thread in inp.thread_order():
        pending: list[dict] = []  # the ends at the current slot
        for kind, frame, slot, _ in frame_events(timeline, thread):
            f = frames[frame]
            args: dict[str, object] = {"file": f.file}
            if f.line:
                args["line"] = f.line
            ts = slot_us(timeline, slot)
            event = {
                "name": f.function,
                "cat": CATEGORY,
                "ph": "B" if kind == OPEN else "E",
                "ts": ts,
                "pid": PID,
                "tid": thread,
                "args": args,
            }
            if kind == OPEN:
                for end in pending:
                    if end["ts"] == ts:  # handing over: end just before the begin
                        end["ts"] = ts - HANDOVER_US
                pending = []
            else:
                pending.append(event)
            out.append(event)
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
