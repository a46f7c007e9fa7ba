"""A session's Perfetto app trace joined to its report (the model's ``trace``): real session
directories (a ``.bsprof`` of the simulated app, a trace written with Google's protos), the page
written by ``write_session_report`` and its embedded model read back: the trace's threads as
lanes on the capture's time axis (by its clock snapshot, else by arrival, and the page says
which), the missed frames with their causes, the rendezvous and observer findings with their
slices, script slices matched to the report's functions, the bounds, device text kept as data,
and a session without a trace unchanged."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from report_helpers import HOSTILE, START, make_session, stream
from report_trace_helpers import (
    MISSED,
    STACK_HOSTILE,
    STACK_KEY,
    STACK_PARSE,
    app_trace,
    trace_session,
)
from trace_helpers import roku_app_trace

from rokuprof.export.report import trace_lanes
from rokuprof.export.report.session import TRACE_FILE, write_session_report
from rokuprof.export.report.trace_lanes import FunctionIndex, parse_callstack, trace_entry
from rokuprof.trace.reader import read_trace
from tests.viewers import REPO
from tests.viewers.report import model

REPORT = REPO / "rokuprof" / "export" / "report"
SCHEMA = json.loads((REPORT / "report-model.schema.json").read_text(encoding="utf-8"))
CONTRACT = (REPORT / "assets" / "src" / "contract.js").read_text(encoding="utf-8")


def page_model(session) -> dict:
    return model(write_session_report(session).read_text())


def slices_of(t: dict) -> list[dict]:
    cols = t["slices"]
    return [
        {
            "lane": t["lanes"][cols["lane"][i]]["name"],
            "name": t["names"][cols["name"][i]],
            "start": cols["start"][i],
            "end": cols["end"][i],
            "depth": cols["depth"][i],
            "fn": cols["fn"][i],
        }
        for i in range(len(cols["lane"]))
    ]


def fn_key(m: dict, f: int) -> tuple[str, str, int]:
    s, fns = m["strings"], m["functions"]
    return s[fns["name"][f]], s[fns["file"][f]], fns["line"][f]


@pytest.fixture(scope="module")
def joined(tmp_path_factory):
    session = trace_session(tmp_path_factory.mktemp("joined") / "s", app_trace(at=1.0))
    return page_model(session)


def test_the_threads_are_lanes_on_the_captures_time_axis_by_the_trace_clock(joined):
    t = joined["trace"]
    assert t["alignment"] == "clock"
    assert "clock snapshot" in t["alignmentNote"]
    assert [lane["name"] for lane in t["lanes"]] == [
        "RenderThr:Main",
        f"TN:{HOSTILE}",
        "BrightScript",
    ]
    assert [lane["tid"] for lane in t["lanes"]] == [100, 103, 102]
    assert t["start"] == pytest.approx(1.0)  # the clock placed the first event 1 s in
    assert t["end"] == pytest.approx(1.0 + 0.42)
    got = slices_of(t)
    swaps = [s for s in got if s["name"] == "swapBuffers"]
    assert [round((s["start"] - 1.0) * 1000, 3) for s in swaps] == [
        0,
        16,
        32,
        48,
        80,
        130,
        170,
        196,
        212,
        228,
    ]
    assert all(s["lane"] == "RenderThr:Main" and s["depth"] == 0 for s in swaps)
    rv = [s for s in got if s["name"] == "Rendezvous"]
    assert [(s["depth"], round(s["end"] - s["start"], 6)) for s in rv] == [(1, 0.0058), (1, 0.001)]
    assert t["total"] == len(got)  # a small trace: every slice is on the page
    assert t["notes"] == []
    assert jsonschema.Draft202012Validator(SCHEMA).is_valid(joined)


def test_the_frames_lane_has_each_missed_frame_and_its_cause(joined):
    frames = joined["trace"]["frames"]
    assert frames["figures"]["missed"] == 3 and frames["figures"]["frames"] == 10
    got = [
        (round((a - 1.0) * 1000, 3), round((b - 1.0) * 1000, 3), frames["causes"][c])
        for a, b, c in frames["missed"]
    ]
    assert got == MISSED


def test_the_findings_name_their_slices(joined):
    t = joined["trace"]
    got = slices_of(t)
    f = t["findings"]
    [rv] = f["rendezvous"]
    assert rv["thread"] == f"TN:{HOSTILE}" and rv["field"] == "Video.content"
    assert (rv["count"], rv["total_ms"], rv["max_latency_ms"]) == (2, 6.8, 3.5)
    assert [got[i]["name"] for i in rv["refs"]] == ["Rendezvous", "Rendezvous"]
    assert f["observers"]["count"] == 3 and f["observers"]["max_depth"] == 3
    assert (f["observers"]["outermost_ms"], f["observers"]["naive_ms"]) == (10.0, 15.0)
    [outer] = f["observers"]["refs"]  # only the outermost one
    assert got[outer]["name"] == "observer.callback" and got[outer]["depth"] == 0
    stacks = {r["callstack"]: r for r in f["script"]}
    assert set(stacks) == {STACK_PARSE, STACK_KEY, STACK_HOSTILE}
    for row in stacks.values():
        [ref] = row["refs"]
        assert got[ref]["name"] == "ExecBrightScript" and got[ref]["fn"] == row["fn"]
    assert stacks[STACK_PARSE]["state"] == "busy" and stacks[STACK_KEY]["state"] == "blocked"


def test_a_script_slices_call_stack_selects_the_reports_function(joined):
    t = joined["trace"]
    by_stack = {stack: i for i, stack in t["stacks"]}
    fns = t["slices"]["fn"]
    # parseJSON starts at line 3 of json.brs: the stack's line 5 is inside it
    assert fn_key(joined, fns[by_stack[STACK_PARSE]]) == (
        "parseJSON",
        "pkg:/source/utils/json.brs",
        3,
    )
    assert fn_key(joined, fns[by_stack[STACK_KEY]])[:2] == ("onKeyEvent", "pkg:/source/main.brs")
    assert fns[by_stack[STACK_HOSTILE]] == -1  # a function the capture does not have
    # the other slices name no function
    assert sum(1 for f in fns if f >= 0) == 2


def test_call_stacks_are_matched_by_name_file_and_nearest_line_above():
    assert parse_callstack("onKeyEvent pkg:/components/Main.brs:42") == (
        "onKeyEvent",
        "pkg:/components/Main.brs",
        42,
    )
    assert parse_callstack("(no call stack)") is None and parse_callstack(7) is None
    strings = ["a", "pkg:/x.brs", "B"]
    fake = {
        "strings": strings,
        "functions": {"name": [0, 0, 2], "file": [1, 1, 1], "line": [10, 50, 3]},
    }
    index = FunctionIndex(fake)
    assert index.find("a pkg:/x.brs:12") == 0
    assert index.find("A PKG:/X.BRS:60") == 1  # BrightScript names: any case
    assert index.find("a pkg:/x.brs:2") == 0  # above every start: the first
    assert index.find("b pkg:/x.brs:4") == 2
    assert index.find("c pkg:/x.brs:4") == -1 and index.find(None) == -1


def test_without_a_clock_snapshot_the_trace_is_placed_by_arrival(tmp_path):
    m = page_model(trace_session(tmp_path / "s", app_trace(at=None, interned=False)))
    t = m["trace"]
    assert t["alignment"] == "arrival"
    assert t["alignmentNote"].startswith("by arrival (no clock snapshot)")
    assert t["start"] == 0.0  # its first event at the run's start
    assert [round(a * 1000, 3) for a, _, _ in t["frames"]["missed"]] == [48, 130, 170]


def test_a_clock_far_outside_the_run_falls_back_to_arrival_and_says_so(tmp_path):
    # Roku's synthetic trace: its clock says 2025, the capture 2023
    m = page_model(trace_session(tmp_path / "s", roku_app_trace(interned=True).data()))
    t = m["trace"]
    assert t["alignment"] == "arrival" and t["start"] == 0.0
    assert "outside the capture's run" in t["alignmentNote"]
    # the slice still open at the trace's end is drawn to it, and said
    assert any("1 slice still open" in n for n in t["notes"])


def test_what_the_page_gets_is_bounded_and_the_rest_said(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_lanes, "MAX_PER_LANE", 20)
    monkeypatch.setattr(trace_lanes, "MAX_FINDING_SLICES", 1)
    trace = read_trace(app_trace(at=1.0, extra=500))
    fake = {"strings": [], "functions": {"name": [], "file": [], "line": []}}
    t = trace_entry(trace, fake, START, 6.0)
    lanes = t["slices"]["lane"]
    per_lane = [lanes.count(k) for k in range(len(t["lanes"]))]
    main = [lane["name"] for lane in t["lanes"]].index("BrightScript")
    assert t["lanes"][main]["slices"] == 507
    # the 20 longest, plus the findings' own slices (observer, 3 script) not among them
    assert 20 <= per_lane[main] <= 24
    assert any("shorter slices not drawn" in n for n in t["notes"])
    kept = {
        t["names"][n] for n, lane in zip(t["slices"]["name"], lanes, strict=True) if lane == main
    }
    assert {"ExecBrightScript", "observer.callback"} <= kept
    # the findings' slices are there whatever the bound
    for row in t["findings"]["script"]:
        assert len(row["refs"]) == 1


def test_a_session_without_a_trace_has_no_trace_entry_and_the_same_page(tmp_path):
    plain = make_session(tmp_path / "a", stream(3.0))
    broken = make_session(tmp_path / "b", stream(3.0))
    (broken / TRACE_FILE).write_bytes(b"")  # an empty trace: nothing to draw
    a, b = (write_session_report(s).read_bytes() for s in (plain, broken))
    assert a == b
    assert "trace" not in model(a.decode())


def test_device_text_stays_data(joined):
    page_text = json.dumps(joined["trace"], ensure_ascii=False)
    assert HOSTILE in page_text  # kept as text in the model...
    assert STACK_HOSTILE in [s for _, s in joined["trace"]["stacks"]]


def test_the_page_escapes_the_trace_text(tmp_path):
    session = trace_session(tmp_path / "s", app_trace(at=1.0))
    html = write_session_report(session).read_text()
    data = re.search(r'<script id="report-data"[^>]*>(.*?)</script>', html, re.S).group(1)
    assert "<" not in data and "</script><script>" not in data


def test_the_page_type_of_the_trace_mirrors_the_schema():
    block = re.search(
        r"/\*\*((?:(?!\*/).)*?@typedef \{object\} ReportTrace\n.*?)\*/", CONTRACT, re.S
    )
    assert block
    fields = set(re.findall(r"@property \{.*?\} \[?(\w+)", block.group(1)))
    assert fields == set(SCHEMA["$defs"]["trace"]["properties"])


def test_many_lanes_share_the_pages_slice_budget(monkeypatch):
    monkeypatch.setattr(trace_lanes, "MAX_SLICES", 15)  # 3 lanes: 5 slices each at most
    monkeypatch.setattr(trace_lanes, "MAX_FINDING_SLICES", 1)
    trace = read_trace(app_trace(at=1.0))
    fake = {"strings": [], "functions": {"name": [], "file": [], "line": []}}
    t = trace_entry(trace, fake, START, 6.0)
    lanes = t["slices"]["lane"]
    render = [lane["name"] for lane in t["lanes"]].index("RenderThr:Main")
    assert lanes.count(render) == 5  # the render thread has no finding's slices
    durations = sorted(
        round(b - a, 6)
        for a, b, lane in zip(t["slices"]["start"], t["slices"]["end"], lanes, strict=True)
        if lane == render
    )
    assert durations == [0.004, 0.004, 0.018, 0.02, 0.026]  # its five longest
    assert any("the 5 longest of each thread" in n for n in t["notes"])


def test_a_trace_longer_than_the_reports_read_is_cut_and_said(tmp_path, monkeypatch):
    from rokuprof.export.report import session as report_session

    data = app_trace(at=1.0)
    monkeypatch.setattr(report_session, "MAX_TRACE_BYTES", len(data) // 2)
    t = page_model(trace_session(tmp_path / "s", data))["trace"]
    assert t["notes"][0].startswith(f"only the trace's first {(len(data) // 2) >> 20} MiB")
    assert 0 < t["total"] < len(read_trace(data).slices)
