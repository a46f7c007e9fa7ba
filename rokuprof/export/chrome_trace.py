"""Trace Event Format JSON (Perfetto, chrome://tracing, DevTools, speedscope, FlameScope).

Written in the JSON Array Format (a bare list of events: FlameScope reads only that form;
:func:`document` gives the ``{"traceEvents": [...]}`` object form). Every event has ``pid`` and
``tid``. Order: metadata; counters in time order, from the run's start; each thread's slices,
one thread after another (DevTools' trace engine pairs every ``B``/``E`` on one stack, whatever
the thread); the last ``cpu`` counter, at the run's end or the last event. FlameScope takes its
time range from the first and the last non-metadata event, so that range is the run's.

* ``M`` events name the process (the app; ``process_labels``: exporter, input status, run start)
  and one thread per executable module (``tid`` = module ID), in module order;
* ``B``/``E`` (begin/end) pairs lay out the synthetic 101 Hz timeline of the Sentry chunks: one
  pair per frame occurrence, ``ts`` in whole microseconds since the run start, ``cat``, ``name`` =
  function and ``args`` = file and definition line on both (readers match an ``E`` to its ``B`` by
  them; names longer than :data:`~rokuprof.export.names.NAME_LIMIT` characters are cut with an
  ellipsis), and ``tts``, the thread clock (:mod:`~rokuprof.export.threadclock`: CPU time, relative
  to the run's busiest stack), so a slice's ``(E.tts - B.tts) / (E.ts - B.ts)`` is its CPU share.
  Per thread they are in time order; where frames end as others begin (a stack changes), the ends
  come 1 ns before the begins, innermost first, then the begins outermost first, so readers that
  sort by ``ts`` cannot mis-nest them. (``X`` events cannot say that a child ends exactly when its
  parent does, which a sampled timeline has all the time.)
* ``C`` (counter) events: ``live heap`` (bytes, the values the chunks carry) and ``cpu`` (CPU
  operations per thread in each 100 ms, the exact CPU of each stack spread over its samples),
  from the run's start to its end.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator

from rokuprof import __version__
from rokuprof.export.model import ExportInput
from rokuprof.export.names import JsonWriter, drawn, dumps
from rokuprof.export.threadclock import ThreadClock, cpu_shares
from rokuprof.export.walk import OPEN, frame_events, slot_us, stack_cpu_rates
from rokuprof.timeline import IDLE

PID = 1
CATEGORY = "brightscript"
CPU_BUCKET_US = 100_000
#: Ends that hand over to a begin at the same moment come this much earlier (1 ns), so that no
#: reader can take the begin first (speedscope does when both name the same function).
HANDOVER_US = 0.001


def events(inp: ExportInput) -> list[dict]:
    """Every event, in the order the module docstring gives."""
    threads = [_thread_events(inp, thread, clock) for thread, clock in _clocks(inp)]
    heap = _heap_counters(inp)
    end_us = max((evs[-1]["ts"] for evs in (*threads, heap) if evs), default=0)
    cpu = _cpu_counters(inp, end_us)
    counters = heapq.merge(heap, cpu[:-1], key=lambda e: e["ts"])
    return [*_metadata(inp), *counters, *(e for evs in threads for e in evs), *cpu[-1:]]


def _metadata(inp: ExportInput) -> list[dict]:
    labels = [f"rokuprof {__version__}", f"input {inp.run.status}"]
    if inp.run.start is not None:
        labels.append(f"run start {round(inp.run.start * 1000)} ms since 1970")
    out: list[dict] = [
        _meta("process_name", 0, {"name": inp.run.app or "BrightScript app"}),
        _meta("process_labels", 0, {"labels": ", ".join(labels)}),
    ]
    for index, thread in enumerate(inp.thread_order()):
        out.append(_meta("thread_name", thread, {"name": inp.threads[thread]}))
        out.append(_meta("thread_sort_index", thread, {"sort_index": index}))
    return out


def _meta(name: str, tid: int, args: dict) -> dict:
    return {"name": name, "ph": "M", "ts": 0, "pid": PID, "tid": tid, "args": args}


def _clocks(inp: ExportInput) -> list[tuple[int, ThreadClock]]:
    shares = cpu_shares(inp)
    return [(t, ThreadClock(inp, t, shares)) for t in inp.thread_order()]


def _thread_events(inp: ExportInput, thread: int, clock: ThreadClock) -> list[dict]:
    timeline = inp.timeline
    frames = inp.frames
    out: list[dict] = []
    pending: list[dict] = []  # the ends at the current slot
    for kind, frame, slot, _ in frame_events(timeline, thread):
        f = frames[frame]
        args: dict[str, object] = {"file": drawn(f.file)}
        if f.line:
            args["line"] = f.line
        ts = slot_us(timeline, slot)
        event = {
            "name": drawn(f.function),
            "cat": CATEGORY,
            "ph": "B" if kind == OPEN else "E",
            "ts": ts,
            "tts": round(clock.at(slot), 3),
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
    return out


def _heap_counters(inp: ExportInput) -> list[dict]:
    return sorted(
        (
            {
                "name": "live heap",
                "ph": "C",
                "ts": slot_us(inp.timeline, slot),
                "pid": PID,
                "tid": 0,
                "args": {"bytes": value},
            }
            for slot, value in inp.timeline.heap
        ),
        key=lambda e: e["ts"],
    )


def _cpu_counters(inp: ExportInput, end_us: float) -> list[dict]:
    """Per 100 ms from the run's start to its end, or to ``end_us`` if that is later."""
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
    names = {t: inp.threads[t] for t in inp.thread_order()}
    if not names:
        return []
    # A final bucket of zeros ends the chart, at the run's end or later.
    last = max(max(buckets, default=-1) + 1, math.ceil(end_us / CPU_BUCKET_US))
    if inp.run.start is not None and inp.run.end is not None and inp.run.end > inp.run.start:
        last = max(last, math.ceil((inp.run.end - inp.run.start) * 1e6 / CPU_BUCKET_US))
    out = []
    for b in range(min(0, min(buckets, default=0)), last + 1):
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
    """The same events in the JSON Object Format, with ``otherData`` (not for FlameScope)."""
    other: dict[str, object] = {"exporter": f"rokuprof {__version__}", "input": inp.run.status}
    if inp.run.start is not None:
        other["run_start_epoch_ms"] = round(inp.run.start * 1000)
    if inp.run.app:
        other["app"] = inp.run.app
    if inp.run.app_version:
        other["app_version"] = inp.run.app_version
    return {"traceEvents": events(inp), "displayTimeUnit": "ms", "otherData": other}


def _write_thread(
    out: JsonWriter, inp: ExportInput, thread: int, clock: ThreadClock
) -> Iterator[bytes]:
    """The thread's slices as :func:`_thread_events` gives them, written as they are walked
    (each after a comma): only the ends at the current slot wait, for the begin that may follow
    them (at most a stack's depth)."""
    timeline = inp.timeline
    texts: dict[int, tuple[str, str]] = {}  # frame -> (its name, its args) as JSON
    tail = f',"pid":{PID},"tid":{thread},"args":'
    pending: list[tuple[int, int, str]] = []  # the ends at the current slot: (frame, ts, tts)

    def write(frame: int, ph: str, ts: float, tts: str) -> None:
        text = texts.get(frame)
        if text is None:
            f = inp.frames[frame]
            args: dict[str, object] = {"file": drawn(f.file)}
            if f.line:
                args["line"] = f.line
            text = texts[frame] = (dumps(drawn(f.function)), dumps(args))
        out.raw(
            f',{{"name":{text[0]},"cat":"{CATEGORY}","ph":"{ph}","ts":{dumps(ts)},'
            f'"tts":{tts}{tail}{text[1]}}}'
        )

    for kind, frame, slot, _ in frame_events(timeline, thread):
        ts = slot_us(timeline, slot)
        tts = dumps(round(clock.at(slot), 3))
        if kind == OPEN:
            for end, end_ts, end_tts in pending:
                write(end, "E", end_ts - HANDOVER_US if end_ts == ts else end_ts, end_tts)
            pending.clear()
            write(frame, "B", ts, tts)
        else:
            pending.append((frame, ts, tts))
        if out.ready:
            yield from out.take()
    for end, end_ts, end_tts in pending:
        write(end, "E", end_ts, end_tts)


def export(inp: ExportInput) -> bytes:
    """The JSON Array Format (what every reader takes, FlameScope only this): the same events
    as :func:`events`, without an object per slice."""
    return b"".join(pieces(inp))


def pieces(inp: ExportInput) -> Iterator[bytes]:
    """:func:`export`'s file in blocks of UTF-8, each yielded as soon as it is encoded."""
    clocks = _clocks(inp)
    heap = _heap_counters(inp)
    end_us = max((e["ts"] for e in heap[-1:]), default=0)
    for thread, _ in clocks:
        last = None
        for last in frame_events(inp.timeline, thread):  # noqa: B007 (only the last is wanted)
            pass
        if last is not None:
            end_us = max(end_us, slot_us(inp.timeline, last[2]))
    cpu = _cpu_counters(inp, end_us)
    out = JsonWriter()
    out.raw("[")
    head = [*_metadata(inp), *heapq.merge(heap, cpu[:-1], key=lambda e: e["ts"])]
    out.raw(",".join(dumps(e) for e in head))
    for thread, clock in clocks:
        yield from _write_thread(out, inp, thread, clock)
    for e in cpu[-1:]:
        out.raw("," + dumps(e))
    out.raw("]")
    yield from out.close()
