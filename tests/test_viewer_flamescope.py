"""FlameScope reads our Trace Event export (issue 19 row 2): its heat map and flame graph rules
(``tests/viewers/flamescope.py``, reimplemented from its backend) applied to our files draw the
run's time axis, every busy sample, and slices weighed by their CPU share."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import pytest

from rokuprof.export import export, export_parts
from rokuprof.export.chrome_trace import document
from tests.viewers import flamescope
from tests.viewers.samples import VIEWER_SAMPLES, load

TRACE_SAMPLES = (*VIEWER_SAMPLES, "cafe-tv-cut-short")


def trace(name: str) -> list[dict]:
    return json.loads(export(load(name), "chrome-trace"))


@pytest.mark.parametrize("name", TRACE_SAMPLES)
def test_flamescope_heat_map_spans_the_run_and_every_busy_sample(name):
    inp = load(name)
    heat = flamescope.trace_heatmap(trace(name))
    cells = heat.cells()  # raises where FlameScope would fail or misplace a sample
    run_seconds = inp.run.end - inp.run.start
    assert heat.start_s == 0
    assert heat.columns() == math.ceil(run_seconds)
    busy_bins = sum(inp.timeline.samples(t) for t in inp.threads) * inp.timeline.period_us / 1e4
    assert busy_bins <= sum(cells.values()) <= busy_bins * 1.01 + 100


@pytest.mark.parametrize("name", TRACE_SAMPLES)
def test_flamescope_flame_graph_weighs_slices_by_their_cpu_share(name):
    inp = load(name)
    events = trace(name)
    root, slices = flamescope.trace_flame_graph(events)
    assert slices and all(0 <= s.value <= 1.001 for s in slices)
    roots = {
        inp.frames[inp.timeline.stacks[sid][-1]].function
        for runs in inp.timeline.runs.values()
        for _, sid, _ in runs
        if sid
    }
    assert set(root.children) == roots
    # The thread clock advances with the thread's CPU: its share of all threads' clocks is the
    # thread's share of the run's CPU (of the call paths that have samples).
    clock: dict[int, float] = defaultdict(float)
    for e in events:
        if e["ph"] in ("B", "E"):
            clock[e["tid"]] = max(clock[e["tid"]], e["tts"])
    cpu: dict[int, int] = defaultdict(int)
    for p in inp.paths:
        cpu[p.thread] += p.cpu
    for thread in inp.threads:
        assert clock[thread] / sum(clock.values()) == pytest.approx(
            cpu[thread] / sum(cpu.values()), abs=0.002
        )


def test_flamescope_rules_catch_what_it_cannot_read():
    """The object form, a row without pid, a begin without tts or cat all fail as in FlameScope."""
    inp = load("cafe-tv-cpu-only")
    with pytest.raises(flamescope.Unreadable, match="top level is a dict"):
        flamescope.trace_heatmap(document(inp))
    events = trace("cafe-tv-cpu-only")
    for index, key in (
        (0, "pid"),
        (next(i for i, e in enumerate(events) if e["ph"] == "B"), "tts"),
    ):
        broken = json.loads(json.dumps(events))
        del broken[index][key]
        with pytest.raises(flamescope.Unreadable, match=repr(key)):
            flamescope.trace_heatmap(broken)
    broken = json.loads(json.dumps(events))
    del next(e for e in broken if e["ph"] == "B")["cat"]
    with pytest.raises(flamescope.Unreadable, match="'cat'"):
        flamescope.trace_flame_graph(broken)
    unordered = json.loads(json.dumps(events))
    unordered.append({**unordered[-1], "ts": 0})  # the last row is no longer the latest
    with pytest.raises(flamescope.Unreadable, match="outside the heat map"):
        flamescope.trace_heatmap(unordered).cells()


# -- the cpuprofile export (issue 19 row 3) ---------------------------------------------------


@pytest.mark.parametrize("name", TRACE_SAMPLES)
def test_flamescope_cpuprofile_heat_map_is_the_runs_time(name):
    """Every thread's file on the run's own time axis: its heat map starts and ends with the
    run and holds each of the thread's busy samples once (FlameScope reads one profile per
    ``.cpuprofile`` object)."""
    inp = load(name)
    files = export_parts(inp, "cpuprofile")
    assert len(files) == len(inp.threads)
    for thread, data in zip(inp.thread_order(), files.values(), strict=True):
        doc = json.loads(data)
        assert flamescope.cpuprofiles(doc) == [doc]
        heat = flamescope.cpuprofile_heatmap(doc)
        heat.cells()
        assert heat.start_s == pytest.approx(inp.run.start, abs=1e-6)
        assert heat.end_s == pytest.approx(inp.run.end, abs=1e-6)
        busy = sum(n for _, sid, n in inp.timeline.runs.get(thread, ()) if sid)
        assert len(heat.offsets) == busy
