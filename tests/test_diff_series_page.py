"""``rokuprof diff A B --html`` shows the verdicts, and draws a page for a series on either side.

Two planted series, three runs of each build (launch-to-launch clock noise, each run a clock of
its own) in session directories ``main/dev/sN`` and ``branch/dev/sN``: the page is drawn from the
run of each series whose total self wall is its median, and says which (its subtitle and the
command's stderr line); its model carries every verdict of the whole series, with each side's
spread across its three runs. In headless Chromium, the Verdicts section names the regressed
function with its outcome, and a function whose name is markup shows as text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from diff_helpers import BUILD_A, BUILD_B, diff_in, stream

from rokuprof.export import input_from_bytes
from rokuprof.export.diff import Figures
from rokuprof.verdict.series import Run, Series, run_of
from tests.viewers import REPO, VIEWERS
from tests.viewers.report import model, open_reports, problems

SCHEMA = json.loads(
    (REPO / "rokuprof/export/report/report-model.schema.json").read_text(encoding="utf-8")
)
HOSTILE = "<img src=x onerror=alert(1)>"  # decodeImage, as the device names it in both builds
RUNS = 3


def plant(root: Path, name: str, build: dict) -> list[Path]:
    files = []
    for i in range(RUNS):
        session = root / name / "dev" / f"s{i + 1}"
        session.mkdir(parents=True)
        data = stream(
            6.0, clock_noise=0.05, clock_seed=f"{name}:{i}", names=(("decodeImage", HOSTILE),),
            **build,
        )  # fmt: skip
        (session / "capture.bsprof").write_bytes(data)
        files.append(session / "capture.bsprof")
    return files


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff-series-page")
    files = {"main": plant(tmp, "main", BUILD_A), "branch": plant(tmp, "branch", BUILD_B)}
    proc = diff_in(tmp, "main", "branch", "--html", "ab.html")
    html = (tmp / "ab.html").read_text(encoding="utf-8") if (tmp / "ab.html").exists() else ""
    return {"tmp": tmp, "files": files, "proc": proc, "html": html}


def median_run(files: list[Path]) -> int:
    """The run (from 0) whose total self wall is the median of the three, computed here."""
    runs = [run_of(input_from_bytes(f.read_bytes()), str(f)) for f in files]
    totals = Series("x", tuple(runs)).totals("self_wall")
    return totals.index(sorted(totals)[len(totals) // 2])


def test_the_page_of_two_series_is_written(planted):
    proc = planted["proc"]
    assert proc.returncode == 0, proc.stderr
    assert planted["html"], proc.stderr


def test_the_page_is_drawn_from_the_median_run_of_each_series_and_says_which(planted):
    diff = model(planted["html"])["diff"]
    stderr = planted["proc"].stderr
    for k, name in enumerate(("main", "branch")):
        index = median_run(planted["files"][name])
        run = f"{name}/dev/s{index + 1}"
        side = diff["series"][k]
        assert side["input"] == name and side["runs"] == RUNS, side
        assert side["index"] == index + 1 and side["run"].startswith(run), side
        assert diff["sides"][k]["input"] == side["run"]  # the figures drawn are that run's
        assert f"{'AB'[k]} drawn from run {side['run']} ({index + 1} of {RUNS}" in stderr, stderr
    assert diff["label"] == "main → branch"  # the title names the series


def test_the_model_has_every_verdict_of_the_whole_series(planted):
    page = model(planted["html"])
    jsonschema.Draft202012Validator(SCHEMA).validate(page)
    judgement = page["diff"]["verdicts"]["4800X"]  # the simulator's device model
    assert (judgement["runs"], judgement["baseline_runs"]) == (RUNS, RUNS)
    assert judgement["outcome"] == "regressed"
    assert sum(judgement["counts"].values()) == len(judgement["verdicts"])
    cpu = {(v["function"], v["metric"]): v for v in judgement["verdicts"]}
    slower = cpu["parseString", "self_cpu"]  # twice the work in B: a counter, by size alone
    assert slower["verdict"] == "regressed" and 95 <= slower["change_pct"] <= 105, slower
    assert slower["a"]["runs"] == slower["b"]["runs"] == RUNS
    wall = cpu["parseString", "self_wall"]  # the clock's spread: three runs, each its own noise
    assert wall["b"]["min"] < wall["b"]["max"] and wall["a"]["min"] < wall["a"]["max"], wall
    assert wall["b"]["q1"] <= wall["b"]["median"] <= wall["b"]["q3"]
    assert "parseString: self wall time" in wall["line"]
    assert cpu[HOSTILE, "self_live_bytes"]["verdict"] != "same"  # leaks in B


def test_a_page_of_two_captures_has_the_verdicts_and_no_series(planted):
    tmp = planted["tmp"]
    one, two = planted["files"]["main"][0], planted["files"]["branch"][0]
    proc = diff_in(tmp, str(one), str(two), "--html", "two.html")
    assert proc.returncode == 0, proc.stderr
    diff = model((tmp / "two.html").read_text(encoding="utf-8"))["diff"]
    assert diff["series"] is None and diff["verdict"] is None  # no --fail-over: no gate line
    judgement = diff["verdicts"]["4800X"]
    assert (judgement["runs"], judgement["baseline_runs"]) == (1, 1)
    assert any(v["verdict"] == "regressed" for v in judgement["verdicts"])


def series_with_totals(totals: list[float]) -> Series:
    """A series whose runs' total self wall are ``totals``, in run order."""
    key = ("m", "f", "f.brs")
    return Series("s", tuple(Run("r", {key: Figures(self_wall=t)}, 1.0) for t in totals))


@pytest.mark.parametrize(
    ("totals", "index"),
    [([5.0], 0), ([3.0, 1.0, 2.0], 2), ([4.0, 1.0, 3.0, 2.0], 2), ([1.0, 2.0], 0), ([2.0, 2.0], 0)],
)
def test_the_representative_run_is_the_median_total_self_wall(totals, index):
    # of an even count, the first in run order of the two middle ones
    assert series_with_totals(totals).representative() == index


@pytest.fixture(scope="module")
def screen(planted):
    tmp = planted["tmp"]
    pages = [tmp / "ab.html", tmp / "two.html"]
    if not pages[1].exists():
        one, two = planted["files"]["main"][0], planted["files"]["branch"][0]
        assert diff_in(tmp, str(one), str(two), "--html", "two.html").returncode == 0
    results = open_reports(pages, steps=VIEWERS / "report_verdicts.mjs")
    return dict(zip(("series", "two"), results, strict=True))


def test_the_verdicts_section_names_the_regressed_function_and_its_outcome(screen):
    for name in ("series", "two"):
        result = screen[name]
        assert not problems(result), problems(result)
        seen = result
        assert seen["present"], seen
        text = seen["visible"]
        assert "Verdicts" in text and "4800X" in text, text
        row = next(r for r in seen["rows"] if r["function"] == "parseString")
        assert row["outcome"] == "regressed" and row["cells"][1] == "CPU operations", row
        assert row["cells"][-1] == "regressed" and row["cells"][2] == "+100.0 %", row
        assert row["title"].startswith("parseString: CPU operations +100.0 %"), row
        assert row["badge"] == "rgb(153, 27, 27)", row  # regressed: red
        assert "parseString" in text and "regressed" in text, text
        assert all(r["outcome"] != "same" for r in seen["rows"])
        assert re.search(r"; \d+ regressed, .*\d+ same$", seen["headlines"][0]), seen["headlines"]


def test_the_series_spread_and_the_drawn_runs_show(screen):
    seen = screen["series"]
    row = next(r for r in seen["rows"] if r["function"] == "parseString")
    assert f"{RUNS} runs, IQR" in row["cells"][3] and f"{RUNS} runs, IQR" in row["cells"][4], row
    assert "3 runs vs 3 baseline runs" in seen["headlines"][0], seen["headlines"]
    assert seen["subtitle"] and "drawn from A main/dev/s" in seen["subtitle"], seen["subtitle"]
    assert "B branch/dev/s" in seen["subtitle"], seen["subtitle"]
    single = screen["two"]
    assert single["subtitle"] is None
    assert "1 run vs 1 baseline run" in single["headlines"][0], single["headlines"]


def test_a_function_named_in_markup_shows_as_text(screen):
    for name in ("series", "two"):
        result, seen = screen[name], screen[name]
        assert result["dialogs"] == [] and seen["smuggled"] == 0, (result["dialogs"], seen)
        rows = [r for r in seen["rows"] if r["function"] == HOSTILE]
        assert rows and rows[0]["cells"][0].startswith(HOSTILE), rows
        assert rows[0]["outcome"] in ("unknown", "regressed") and HOSTILE in seen["visible"]
        assert rows[0]["badge"] in ("rgb(146, 64, 14)", "rgb(153, 27, 27)"), rows  # amber or red
