"""``rokuprof profile --repeat`` as a real process against the simulated Roku: a series of runs
of one build in its own directory, the spread across them, a later build judged against the
whole series (its verdicts on the terminal, as JSON, as Markdown and as JUnit), runs added
while a verdict is unknown, and two devices run in parallel with a verdict per model."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from rokuprof.simulator import SimulatedDevice
from tests.profile_helpers import device, profile

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_APP = ROOT / "samples" / "app"

#: About two seconds of run: the same presses every time.
SCENARIO = """
[[steps]]
wait = 0.3

[[steps]]
press = "Down"
repeat = 3
interval = 0.4

[[steps]]
press = "Select"

[[steps]]
wait = 0.9
"""

#: The floors the "same build" runs are judged with. The sample app keeps working between key
#: presses, as a real one does: a run's tail (the exit after the last step) stretches with the
#: test machine's load, and in two-second runs one more background walk is a tenth of a small
#: function's count. A lab's runs last minutes, where that tail is noise.
SAME_BUILD_FLOORS = ("--fail-over", "25", "--counter-over", "15")

#: samples/app's ContentTask.brs: the function a "slower" build spends more in.
SLOW = "describe"

pytestmark = pytest.mark.slow


@pytest.fixture
def app(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    shutil.copytree(SAMPLE_APP, app)
    (tmp_path / "s.toml").write_text(SCENARIO)
    return app


def only_series(out: Path) -> Path:
    [series] = sorted(out.glob("series-*"))
    return series


async def test_a_series_then_a_build_judged_against_it(tmp_path: Path, app: Path) -> None:
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app), "--scenario", "s.toml", "--repeat", "3", "-o", "base"
        )
    assert status == 0, out + err
    series = only_series(tmp_path / "base")
    sessions = sorted(series.glob("*/*/capture.bsprof"))
    assert len(sessions) == 3
    assert all((s.parent / "report.html").is_file() for s in sessions)
    assert "3 runs: median and spread (IQR) per function" in out
    record = json.loads((series / "series.json").read_text())
    assert [Path(r["session"]).name for r in record["runs"]] == [s.parent.name for s in sessions]
    assert record["verdicts"] is None  # no baseline: the spread only
    work = {f["function"]: f for f in record["functions"]}
    assert work[SLOW]["self_cpu"]["runs"] == 3

    # The same build again, judged against the whole series: nothing moved.
    ci = ("--summary", "summary.md", "--junit", "verdicts.xml", "--json")
    gate = ("--baseline", str(series), *SAME_BUILD_FLOORS, *ci)
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app), "--scenario", "s.toml", "--repeat", "2", "-o", "same", *gate
        )
    assert status == 0, out + err
    doc = json.loads(out)  # --json: stdout is the document, the rest went to stderr
    assert doc["outcome"] == "passed" and len(doc["runs"]) == 2
    [(model, judgement)] = doc["verdicts"].items()
    assert judgement["baseline_runs"] == 3 and judgement["runs"] == 2
    assert judgement["counts"]["regressed"] == 0
    assert "--fail-over 25 %: passed: no verdict regressed or unknown" in err
    assert f"### {model}: ✅ passed" in (tmp_path / "summary.md").read_text()
    suites = ET.parse(tmp_path / "verdicts.xml").getroot()
    assert suites.get("failures") == "0" and int(suites.get("tests")) > 0

    # A build that spends four times as long in one function (and as many operations).
    slower = device(app_slower=((SLOW, 4.0),))
    async with SimulatedDevice(slower) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app), "--scenario", "s.toml", "-o", "slow", *gate
        )
    assert status == 1, out + err
    doc = json.loads(out)
    assert doc["outcome"] == "regressed"
    [judgement] = doc["verdicts"].values()
    cpu = [v for v in judgement["verdicts"] if v["function"] == SLOW and v["metric"] == "self_cpu"]
    assert cpu and cpu[0]["verdict"] == "regressed" and cpu[0]["kind"] == "counter"
    assert cpu[0]["b"]["runs"] == 1 and cpu[0]["a"]["runs"] == 3
    assert f"{SLOW}: CPU operations +" in err and "the run above every baseline run" in err
    suites = ET.parse(tmp_path / "verdicts.xml").getroot()
    failed = [c.get("name") for c in suites.iter("testcase") if c.find("failure") is not None]
    assert f"{SLOW}: CPU operations" in failed
    summary = (tmp_path / "summary.md").read_text()
    assert summary.count("## rokuprof verdict") == 2  # appended, as a step summary is
    assert "❌ regressed" in summary


async def test_runs_are_added_while_a_verdict_is_unknown(tmp_path: Path, app: Path) -> None:
    """A wall-only change (twice the time, the same operations) cannot be told from noise with
    one baseline run: --max-repeat adds runs up to its bound, then the gate says undecided."""
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(dev, tmp_path, str(app), "--scenario", "s.toml", "-o", "a")
    assert status == 0, out + err
    [baseline] = (tmp_path / "a").glob("*/*/capture.bsprof")
    wall_only = device(app_slower=((SLOW, 2.0),), app_heavier=((SLOW, 0.5),))
    async with SimulatedDevice(wall_only) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app), "--scenario", "s.toml", "-o", "b",
            "--baseline", str(baseline.parent), "--fail-over", "10", "--max-repeat", "3",
        )  # fmt: skip
    assert status == 4, out + err
    assert out.count("verdict unknown: one more run on 1 device(s) (at most 3 each)") == 2
    assert len(list(only_series(tmp_path / "b").glob("*/*/capture.bsprof"))) == 3
    assert f"{SLOW}: self wall time +" in out and "→ unknown (p ≥ 0.01" in out
    assert "--fail-over 10 %: undecided:" in out


async def test_two_devices_run_in_parallel_with_a_verdict_per_model(
    tmp_path: Path, app: Path
) -> None:
    first = replace(
        device(), host="127.0.0.2", model_number="4800X", serial="YN00AA000001",
        dev_password="rack-pass",
    )  # fmt: skip
    async with SimulatedDevice(first) as one:
        ports = dict(
            ecp_port=one.ecp_port,
            profiler_port=one.profiler_port,
            console_port=one.console_port,
            installer_port=one.installer_port,
        )
        second = replace(
            first, host="127.0.0.3", model_number="3930X", serial="YN00AA000002", **ports
        )
        async with SimulatedDevice(second):
            hosts = ("127.0.0.2", "127.0.0.3")
            status, out, err = await profile(
                one, tmp_path, str(app), "--scenario", "s.toml", "--repeat", "2", "-o", "base",
                hosts=hosts,
            )  # fmt: skip
            assert status == 0, out + err
            series = only_series(tmp_path / "base")
            status, out, err = await profile(
                one, tmp_path, str(app), "--scenario", "s.toml", "--repeat", "2", "-o", "next",
                "--baseline", str(series), "--json", hosts=hosts,
            )  # fmt: skip
    assert status == 0, out + err
    record = json.loads((series / "series.json").read_text())
    assert sorted(r["model"] for r in record["runs"]) == ["3930X", "3930X", "4800X", "4800X"]
    assert {p.name for p in series.iterdir() if p.is_dir()} == {"YN00AA000001", "YN00AA000002"}
    doc = json.loads(out)
    assert sorted(doc["verdicts"]) == ["3930X", "4800X"]
    for judgement in doc["verdicts"].values():
        assert judgement["baseline_runs"] == 2 and judgement["runs"] == 2
