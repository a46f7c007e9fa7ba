"""Trace Event JSON exports: Chrome DevTools' trace engine parses exactly the events we wrote and
their time per function is inspect's (within one sample period per call path); the speedscope
app imports them without a warning and its Sandwich view shows the same figures.
"""

from __future__ import annotations

import json

import pytest

from tests.viewers import speedscope, trace_engine
from tests.viewers.expected import SAMPLE_PERIOD_US, differences
from tests.viewers.samples import VIEWER_SAMPLES, expected, write_export


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("chrome-trace")
    return {
        name: write_export(name, "chrome-trace", directory, ".trace.json")
        for name in VIEWER_SAMPLES
    }


def written(path):
    doc = json.loads(path.read_text())
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def period_tolerance(figures, column):
    return lambda key: SAMPLE_PERIOD_US * getattr(figures[key], column)["paths"]


# -- DevTools' trace engine -----------------------------------------------------------------


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_trace_engine_parses_every_event_we_wrote(files, name):
    events = written(files[name])
    parsed = trace_engine.parse(files[name])
    assert trace_engine.entry_problems(events, parsed) == []
    assert {t["name"] for t in parsed["threads"]} == expected(name).threads()
    counters = sorted(
        (c["name"], c["ts"], json.dumps(c["args"], sort_keys=True)) for c in parsed["counters"]
    )
    ours = sorted(
        (e["name"], e["ts"], json.dumps(e["args"], sort_keys=True))
        for e in events
        if e["ph"] == "C"
    )
    assert counters == ours
    assert {c[0] for c in ours} >= {"cpu"}


@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_trace_engine_times_per_function_are_inspects(files, name):
    parsed = trace_engine.parse(files[name])
    want = expected(name)
    problems = []
    for thread in parsed["threads"]:
        mine = {k[1:]: f for k, f in want.functions.items() if k[0] == thread["name"]}
        times = trace_engine.function_times(thread)
        for column, index in (("self", 0), ("total", 1)):
            got = {k: v[index] for k, v in times.items() if v[index]}
            ours = {
                k: getattr(f, column)["wall"] for k, f in mine.items() if getattr(f, column)["wall"]
            }
            problems += [
                f"{thread['name']} {column} {p}"
                for p in differences(got, ours, period_tolerance(mine, column))
            ]
    assert problems == []


def test_trace_engine_harness_catches_events_it_did_not_keep(files, tmp_path):
    events = written(files["cafe-tv-cpu-only"])
    tampered = json.loads(json.dumps(events))
    begins = [e for e in tampered if e["ph"] in ("B", "X")]
    begins[0]["ph"] = "Q"  # an unknown phase: dropped without a word
    begins[1]["ts"] = str(begins[1]["ts"])  # a string time: kept, but not as written
    path = tmp_path / "tampered.trace.json"
    path.write_text(json.dumps({"traceEvents": tampered}))
    problems = trace_engine.entry_problems(events, trace_engine.parse(path))
    assert problems and all("entries parsed" in p for p in problems)


# -- speedscope -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages(files, tmp_path_factory):
    broken = tmp_path_factory.mktemp("broken") / "misnested.trace.json"
    broken.write_text(
        json.dumps(
            [
                {"ph": "B", "name": "outer", "ts": 0, "pid": 1, "tid": 1},
                {"ph": "B", "name": "inner", "ts": 5, "pid": 1, "tid": 1},
                {"ph": "E", "name": "outer", "ts": 10, "pid": 1, "tid": 1},
                {"ph": "E", "name": "inner", "ts": 20, "pid": 1, "tid": 1},
            ]
        )
    )
    paths = [*files.values(), broken]
    return dict(zip([*files, "broken"], speedscope.open_files(paths), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_speedscope_imports_without_a_warning(pages, name):
    page = pages[name]
    assert page.importer == "Importing as Trace Event Format profile"
    assert page.problems() == []


@pytest.mark.slow
@pytest.mark.parametrize("name", VIEWER_SAMPLES)
def test_speedscope_sandwich_shows_our_times(pages, name):
    want = expected(name)
    profiles = {p.name: p for p in pages[name].profiles}
    assert len(profiles) == len(want.threads())
    problems = []
    for thread in sorted(want.threads()):
        profile = next(p for n, p in profiles.items() if f", {thread} (tid " in n)
        mine = {k[1:]: f for k, f in want.functions.items() if k[0] == thread}

        def key(row):  # speedscope names a frame "name {args as JSON}"
            fn, _, args = row.name.partition(" {")
            return (fn, json.loads("{" + args).get("file") if args else None)

        table = speedscope.sandwich(profile, "microseconds", key=key)
        for column, index in (("self", 1), ("total", 0)):
            got = {k: v[index][0] for k, v in table.items() if v[index][0]}
            ours = {
                k: getattr(f, column)["wall"] for k, f in mine.items() if getattr(f, column)["wall"]
            }
            slack = period_tolerance(mine, column)

            def tolerance(k, slack=slack, table=table, index=index):
                return slack(k) + (table[k][index][1] if k in table else 0)

            problems += [f"{thread} {column} {p}" for p in differences(got, ours, tolerance)]
    assert problems == []


@pytest.mark.slow
def test_speedscope_harness_reports_a_misnested_trace(pages):
    problems = pages["broken"].problems()
    assert any(
        'Tried to end "outer" when "inner" was on the top of the stack' in p for p in problems
    )
