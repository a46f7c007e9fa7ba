"""The app traces in the regression gate: missed frames and rendezvous time compared between two
sessions' traces (per second of trace when their spans differ), in ``diff``'s text and JSON
and its exit status, with ``--fail-over`` judging them as it judges functions."""

from __future__ import annotations

import json
from pathlib import Path

from diff_helpers import run_cli, stream
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from trace_helpers import RENDER, TASK, roku_app_trace

from rokuprof.trace.compare import compare_traces
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report
from tests.viewers import REPO
from tests.viewers.report import model, open_reports, problems

SCHEMA = json.loads((REPO / "rokuprof/export/report/report-model.schema.json").read_text())


def _report(missed: int, rendezvous_ms: float, span_ms: float) -> dict:
    return {
        "span_ms": span_ms,
        "frames": {"missed": missed},
        "rendezvous_total_ms": rendezvous_ms,
    }


@given(
    st.integers(0, 50),
    st.integers(0, 50),
    st.floats(0, 500, allow_nan=False),
    st.floats(0, 500, allow_nan=False),
    st.floats(0.5, 200),
)
def test_a_figure_regresses_when_b_is_over_a_by_more_than_the_percentage(
    missed_a: int, missed_b: int, ms_a: float, ms_b: float, pct: float
) -> None:
    c = compare_traces(_report(missed_a, ms_a, 10_000), _report(missed_b, ms_b, 10_000))
    assert not c.per_second
    failed = {f.key for f in c.regressions(pct)}
    for key, a, b in (("missed_frames", missed_a, missed_b), ("rendezvous_ms", ms_a, ms_b)):
        grew = b > 0 if a == 0 else b > a * (1 + pct / 100) * (1 + 1e-12)
        assert (key in failed) == grew or abs(b - a * (1 + pct / 100)) < 1e-9


def test_spans_that_differ_compare_per_second() -> None:
    c = compare_traces(_report(10, 100.0, 10_000), _report(20, 200.0, 20_000))
    assert c.per_second
    assert [(f.a, f.b) for f in c.figures] == [(1.0, 1.0), (10.0, 10.0)]
    assert c.regressions(0.1) == []
    within = compare_traces(_report(10, 100.0, 10_000), _report(11, 100.0, 10_100))
    assert not within.per_second  # 1 % apart: as they are
    assert [f.key for f in within.regressions(5)] == ["missed_frames"]


def test_new_in_b_grows_without_bound() -> None:
    c = compare_traces(_report(0, 0.0, 1000), _report(1, 0.0, 1000))
    [f] = c.regressions(1000)
    assert f.key == "missed_frames" and f.change_pct is None
    assert c.lines()[0] == "missed frames: 0 -> 1 (new in B)"


def _worse_trace() -> bytes:
    """The app trace's ten frames with every one of the render loop's intervals missed, and a
    longer rendezvous."""
    w = roku_app_trace(interned=True)
    for i in range(10):
        at = 500 + 40 * i
        w.slice(at, at + 2, RENDER, "swapBuffers")
        w.slice(at + 3, at + 30, RENDER, "render")
    w.begin(600, TASK, "roSGNode.getField", args={"component": "Video", "name": "content"})
    w.slice(600.5, 650, TASK, "Rendezvous")
    w.end(651, TASK)
    return w.data()


def _session(directory: Path, trace: bytes) -> Path:
    directory.mkdir()
    (directory / "capture.bsprof").write_bytes(stream(5))
    (directory / "trace.perfetto-trace").write_bytes(trace)
    return directory


def test_diff_of_two_sessions_judges_their_traces(tmp_path: Path) -> None:
    a = _session(tmp_path / "a", roku_app_trace(interned=False).data())
    b = _session(tmp_path / "b", _worse_trace())
    ra, rb = (trace_report(read_trace((s / "trace.perfetto-trace").read_bytes())) for s in (a, b))
    assert (ra["frames"]["missed"], rb["frames"]["missed"]) == (3, 12)
    done = run_cli(str(a), str(b), "--json", "--fail-over", "50")
    assert done.returncode == 1, done.stderr
    trace = json.loads(done.stdout)["trace"]
    per_second = trace["per_second"]
    assert per_second  # the worse trace runs 480 ms longer
    scale_a, scale_b = ra["span_ms"] / 1000, rb["span_ms"] / 1000
    assert trace["missed_frames"]["a"] == 3 / scale_a
    assert trace["missed_frames"]["b"] == 12 / scale_b
    assert trace["failed"] == ["missed_frames", "rendezvous_ms"]
    assert json.loads(done.stdout).get("fail_over", {}).get("failed") == []  # functions alike
    text = run_cli(str(a), str(b), "--fail-over", "50")
    assert text.returncode == 1
    assert "app trace: missed frames a second:" in text.stdout
    assert "app trace: missed frames, rendezvous blocked ms grew by more than 50%" in text.stdout
    same = run_cli(str(a), str(a), "--fail-over", "1")
    assert same.returncode == 0, same.stdout
    assert "app trace: missed frames: 3 -> 3 (+0.0%)" in same.stdout


def test_a_session_without_a_trace_compares_the_functions_alone(tmp_path: Path) -> None:
    a = _session(tmp_path / "a", roku_app_trace(interned=False).data())
    b = tmp_path / "b"
    b.mkdir()
    (b / "capture.bsprof").write_bytes(stream(5))
    done = run_cli(str(a), str(b), "--json", "--fail-over", "50")
    assert done.returncode == 0, done.stderr
    assert "trace" not in json.loads(done.stdout)


def test_the_a_b_page_shows_the_traces_figures(tmp_path: Path) -> None:
    a = _session(tmp_path / "a", roku_app_trace(interned=False).data())
    b = _session(tmp_path / "b", _worse_trace())
    page = tmp_path / "ab.html"
    done = run_cli(str(a), str(b), "--fail-over", "50", "--html", str(page))
    assert done.returncode == 1, done.stderr
    said = [line.removeprefix("app trace: ") for line in done.stdout.splitlines()]
    trace = model(page.read_text())["diff"]["trace"]
    assert trace["lines"] and all(line in said for line in trace["lines"])
    assert trace["failed"] == ["missed_frames", "rendezvous_ms"]
    errors = sorted(Draft202012Validator(SCHEMA).iter_errors(model(page.read_text())), key=str)
    assert [e.message for e in errors] == []
    plain = tmp_path / "plain.html"  # no gate: the figures, nothing failed
    assert run_cli(str(a), str(b), "--html", str(plain)).returncode == 0
    shown = model(plain.read_text())["diff"]["trace"]
    assert shown["lines"] == trace["lines"] and "failed" not in shown


AB_TRACE_STEPS = """
export default async function (page) {
  return {
    abTrace: await page.$eval("#ab-trace", (e) => ({
      failed: e.classList.contains("failed"),
      heading: e.querySelector("h3").textContent,
      lines: [...e.querySelectorAll("p")].map((p) => p.textContent),
    })),
  };
}
"""


def test_the_a_b_page_draws_the_traces_figures_in_a_browser(tmp_path: Path) -> None:
    a = _session(tmp_path / "a", roku_app_trace(interned=False).data())
    b = _session(tmp_path / "b", _worse_trace())
    page = tmp_path / "ab.html"
    assert run_cli(str(a), str(b), "--fail-over", "50", "--html", str(page)).returncode == 1
    steps = tmp_path / "steps.mjs"
    steps.write_text(AB_TRACE_STEPS)
    [result] = open_reports([page], steps=steps)
    assert problems(result) == []
    shown = result["abTrace"]
    assert shown["heading"] == "App traces" and shown["failed"]
    assert shown["lines"] == model(page.read_text())["diff"]["trace"]["lines"]
