"""Roku's analyses of an app trace, against figures worked out by hand from the events
``trace_helpers.roku_app_trace`` writes, and against a brute-force reckoning of generated
render loops (a millisecond grid, not the analysis' own interval arithmetic)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trace_helpers import MAIN, RENDER, STACK_A, STACK_B, TraceWriter, roku_app_trace

from rokuprof.trace.analysis import analyse, frame_cadence
from rokuprof.trace.live_frames import LiveFrames
from rokuprof.trace.reader import TraceReader, read_trace
from rokuprof.trace.summary import trace_report


@pytest.mark.parametrize("interned", [False, True], ids=["plain", "interned"])
def test_the_app_trace_figures(interned: bool) -> None:
    r = trace_report(read_trace(roku_app_trace(interned=interned).data()))
    assert r["complete"] and r["problems"] == []
    assert r["threads"] == ["RenderThr:Main", "TN:ContentTask", "BrightScript"]
    # Swaps at 0 16 32 48 80 130 170 196 212 228: nine intervals, four over 16.7 ms (32, 50,
    # 40, 26). Busy on the render thread: 48->80 swap 2 + render 20 = 22 > 16 (missed: the
    # render is the largest part); 80->130 2 + 4 = 6 <= 25 (idle: not missed); 130->170
    # 2 + consumeAllTasks 26 + render 4 = 32 > 20 (missed: 28 ms from the swap's end to the
    # render); 170->196 the 18 ms swap > 13 (missed: the swap). Over 33.4 ms: the 40 only.
    assert r["frames"] == {
        "frames": 10,
        "intervals": 9,
        "over_budget": 4,
        "missed": 3,
        "missed_by_two": 1,
        "slow_swaps": 1,
        "worst_ms": 40.0,
    }
    assert [(m["start_ms"], m["interval_ms"], m["cause"]) for m in r["missed_frames"]] == [
        (48, 32, "slow render"),
        (130, 40, "late to render"),
        (170, 26, "slow swap"),
    ]
    # Rendezvous 20.2 -> 26 (5.8 ms; enqueued 20.5, dequeued 24: latency 3.5, the rest 2.3)
    # and 30 -> 31 (1 ms, no flow), both under getField(Video.content).
    assert r["rendezvous"] == [
        {
            "thread": "TN:ContentTask",
            "field": "Video.content",
            "count": 2,
            "total_ms": 6.8,
            "max_latency_ms": 3.5,
            "max_exec_ms": 2.3,
        }
    ]
    # Observers 300-310 > 302-306 > 303-304: outermost 10 ms, all of them 15, three deep.
    assert r["observers"] == {"count": 3, "outermost_ms": 10.0, "naive_ms": 15.0, "max_depth": 3}
    # Script: STACK_B 2 x 10 ms with 1.5 ms of CPU (blocked), STACK_A 10 ms with 9 (busy); the
    # STACK_A slice still open at the end is not summed.
    assert r["script"] == [
        {"callstack": STACK_B, "slices": 2, "wall_ms": 20.0, "cpu_ms": 1.5, "state": "blocked"},
        {"callstack": STACK_A, "slices": 1, "wall_ms": 10.0, "cpu_ms": 9.0, "state": "busy"},
    ]
    assert r["unfinished"] == 1
    # Video.state read four times in a row on the main thread; Video.content twice on the task.
    assert r["repeated_reads"] == [
        {"field": "Video.state", "run": 4},
        {"field": "Video.content", "run": 2},
    ]
    assert r["copies"] == [{"field": "Video.content", "count": 1, "total_ms": 0.3, "max_ms": 0.3}]
    assert (r["network"], r["key_events"]) == (1, 1)
    assert r["args"] == {"cpu_us": True, "depth": True, "id": True}
    assert r["flows"] == 1
    assert r["span_ms"] == 430.0
    assert r["start_unix_ms"] == 1_760_000_005_000.0


def test_an_older_build_without_the_later_arguments() -> None:
    r = analyse(read_trace(roku_app_trace(interned=True, later_args=False).data()))
    assert r["args"] == {"cpu_us": False, "depth": False, "id": False}
    assert [(x["callstack"], x["cpu_ms"], x["state"]) for x in r["script"]] == [
        (STACK_B, None, "unknown"),
        (STACK_A, None, "unknown"),
    ]
    assert r["observers"]["max_depth"] == 3  # from the nesting, not the argument
    assert r["frames"]["missed"] == 3


def test_zero_cpu_is_unmeasurable_not_blocked() -> None:
    w = TraceWriter()
    w.slice(0, 10, MAIN, "ExecBrightScript", args={"callstack": "f", "cpu_us": 0})
    [row] = analyse(read_trace(w.data()))["script"]
    assert row["state"] == "unknown" and row["cpu_ms"] is None


def _grid_figures(swaps: list[tuple[int, int]], work: list[tuple[int, int]]) -> tuple:
    """Over budget, missed, missed by two, worst: from a 1 ms occupancy grid of the render
    thread (swaps and work are whole milliseconds, disjoint)."""
    busy_ms = set()
    for a, b in [*swaps, *work]:
        busy_ms.update(range(a, b))
    over = missed = two = worst = 0
    for (a, _), (b, _) in pairwise(swaps):
        gap = b - a
        if gap <= 16.7:
            continue
        over += 1
        busy = sum(1 for t in range(a, b) if t in busy_ms)
        if busy * 2 > gap:
            missed += 1
            two += gap > 33.4
            worst = max(worst, gap)
    return over, missed, two, float(worst)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_frame_cadence_of_generated_render_loops(data: st.DataObject) -> None:
    w = TraceWriter(interned=data.draw(st.booleans()))
    swaps, work = [], []
    t = 0
    for _ in range(data.draw(st.integers(2, 25))):
        swap_ms = data.draw(st.integers(1, 20))
        swaps.append((t, t + swap_ms))
        w.slice(t, t + swap_ms, RENDER, "swapBuffers")
        t += swap_ms
        for _ in range(data.draw(st.integers(0, 3))):
            gap, length = data.draw(st.integers(0, 15)), data.draw(st.integers(1, 15))
            work.append((t + gap, t + gap + length))
            w.slice(t + gap, t + gap + length, RENDER, data.draw(st.sampled_from(["render", "x"])))
            t += gap + length
        t += data.draw(st.integers(0, 30))
    f = analyse(read_trace(w.data()))["frames"]
    assert f["frames"] == len(swaps) and f["intervals"] == len(swaps) - 1
    assert (f["over_budget"], f["missed"], f["missed_by_two"], f["worst_ms"]) == _grid_figures(
        swaps, work
    )
    assert f["slow_swaps"] == sum(1 for a, b in swaps[1:] if b - a > 16)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_observers_outermost_time_is_the_time_any_observer_ran(data: st.DataObject) -> None:
    """Outermost observers never overlap: their sum is the union of all observers' time (a
    millisecond grid here), and the naive sum is every observer's own."""
    w = TraceWriter()
    covered: set[int] = set()
    naive = deepest = 0
    t = 0

    def observer(depth: int) -> None:
        nonlocal t, naive, deepest
        start = t = t + data.draw(st.integers(0, 3))
        deepest = max(deepest, depth)
        w.begin(start, MAIN, "observer.callback")
        t += 1
        if depth < 5:
            for _ in range(data.draw(st.integers(0, 2))):
                observer(depth + 1)
        t += data.draw(st.integers(1, 3))
        w.end(t, MAIN)
        covered.update(range(start, t))
        naive += t - start

    for _ in range(data.draw(st.integers(1, 5))):
        if data.draw(st.booleans()):  # sometimes inside a script slice
            w.begin(t, MAIN, "ExecBrightScript")
            observer(1)
            w.end(t, MAIN)
        else:
            observer(1)
    o = analyse(read_trace(w.data()))["observers"]
    assert o["outermost_ms"] == len(covered)
    assert o["naive_ms"] == naive
    assert o["max_depth"] == deepest


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_live_frames_find_what_the_whole_trace_analysis_finds(data: st.DataObject) -> None:
    """The same generated render loops, read as they arrive (slices not kept, bytes in random
    pieces): the missed frames, their busy time and cause are the whole-trace analysis'."""
    w = TraceWriter(interned=data.draw(st.booleans()))
    t = 0
    for _ in range(data.draw(st.integers(2, 25))):
        swap_ms = data.draw(st.integers(1, 20))
        w.slice(t, t + swap_ms, RENDER, "swapBuffers")
        t += swap_ms
        for _ in range(data.draw(st.integers(0, 3))):
            gap, length = data.draw(st.integers(0, 15)), data.draw(st.integers(1, 15))
            name = data.draw(st.sampled_from(["render", "consumeAllTasks"]))
            w.begin(t + gap, RENDER, name)
            if data.draw(st.booleans()):  # something inside it
                w.slice(t + gap, t + gap + length / 2, RENDER, "render")
            w.end(t + gap + length, RENDER)
            t += gap + length
        t += data.draw(st.integers(0, 30))
    raw = w.data()
    live = LiveFrames()
    reader = TraceReader(keep_slices=False, on_slice_end=live.slice_ended)
    cuts = sorted(data.draw(st.lists(st.integers(1, len(raw) - 1), max_size=6)))
    found = []
    for a, b in pairwise([0, *cuts, len(raw)]):
        reader.feed(raw[a:b])
        found += live.take()
    trace = reader.close()
    assert trace.slices == []  # nothing kept
    _, expected = frame_cadence(read_trace(raw))
    assert found == expected
