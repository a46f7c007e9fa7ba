"""Leaks by iteration end to end: ``rokuprof profile --mem`` of the sample app on the simulator
with a scenario that opens and closes the details screen in iterations; a build whose
``describe`` (the details' Task) never frees is found leaking on that function's call path, the
same build without the leak is not; ``rokuprof inspect SESSION --leaks`` says the same."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.app_config import AppConfig
from rokuprof.workflows.leak_check import leak_report
from tests.profile_helpers import profile

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_APP = ROOT / "samples" / "app"

#: Six iterations of 2.2 s: the details open (its Task runs describe), then close; what is not
#: leaked is freed within about 2 s, so a flat call path is flat at each boundary.
SCENARIO = """
[[steps]]
wait = 1.0

[[steps]]
iterations = 6
mark = "open details"
[[steps.do]]
press = "Select"
[[steps.do]]
wait = 0.6
[[steps.do]]
press = "Back"
[[steps.do]]
wait = 1.6
"""


@dataclass(frozen=True)
class Build(DeviceConfig):
    """The simulated device, its app's allocations in ``leaking`` never freed."""

    leaking: tuple[str, ...] = ()

    def app_config(self, run_index: int) -> AppConfig:
        return replace(super().app_config(run_index), leaking=self.leaking)


async def run(tmp: Path, out: str, leaking: tuple[str, ...]) -> tuple[Path, str]:
    config = Build(
        host="127.0.0.1",
        auto_launch=False,
        run_seconds=3600.0,
        runs=None,
        seed=7,
        rate=20.0,  # a busier app: a capture of finer slices in time
        leaking=leaking,
    )
    async with SimulatedDevice(config) as dev:
        status, stdout, stderr = await profile(
            dev, tmp, str(SAMPLE_APP), "--scenario", "scenario.toml", "--mem", "-o", out
        )
    assert status == 0, stdout + stderr
    [session] = [p.parent for p in (tmp / out).glob("*/*/session.json")]
    return session, stdout


async def test_a_leak_per_iteration_is_found_on_its_call_path_and_not_without_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "scenario.toml").write_text(SCENARIO)
    (leaky, said_leaky), (clean, said_clean) = await asyncio.gather(
        run(tmp_path, "leaky", ("describe",)), run(tmp_path, "clean", ())
    )

    report = leak_report(leaky)
    [group] = report.groups
    assert (group.label, group.iterations, group.ended) == ("open details", 6, True)
    [leak] = report.leaks
    assert (leak.name.function, leak.name.file) == ("describe", "pkg:/components/ContentTask.brs")
    assert leak.grew == leak.measured == 4 and leak.slope > 1024
    [line] = report.lines()
    assert line.startswith("leak: describe (pkg:/components/ContentTask.brs) keeps +")
    assert 'per iteration of "open details" (6 iterations, 2 warm-up, growth in 4 of 4' in line

    assert line in said_leaky.splitlines()  # profile says it after the run

    calm = leak_report(clean)
    assert calm.leaks == [] and len(calm.groups) == 1
    assert calm.lines()[0].startswith('no leak: "open details" (6 iterations, 2 warm-up)')
    assert calm.lines()[0] in said_clean.splitlines() and "leak: " not in said_clean.replace(
        "no leak: ", ""
    )

    shown = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", str(leaky), "--leaks", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    data = json.loads(shown.stdout)
    assert data["leaks"] == 1 and data["groups"][0]["label"] == "open details"
    said = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", str(leaky), "--leaks"],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "", "COLUMNS": "300"},
    )
    assert said.stdout.splitlines() == [line]
