"""``rokuprof demo``: ``rokuprof profile`` of the sample app on a simulated Roku, in-process.

The only capture module that uses :mod:`rokuprof.simulator`: it starts a simulated device on
127.0.0.1 (ports chosen by the OS, its Application Installer included), packages the sample app
shipped with rokuprof (``rokuprof/sample_app``, also ``samples/app``), and runs it through the
same :func:`~rokuprof.workflows.profile_run.profile` a real device gets: sideload, capture, the
sample scenario's key presses and marks, exit-app, then the report. ``seconds`` instead of the
scenario lets the app run that long untouched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from rokuprof.app.manifest import ProfilerKeys
from rokuprof.app.package import package_app
from rokuprof.capture.config import DeviceAddress, capture_config
from rokuprof.capture.loop import CaptureSummary
from rokuprof.capture.signals import StopRequest
from rokuprof.demo_settings import DEMO_CHUNKS as DEMO_CHUNKS  # its home: demo_settings
from rokuprof.scenario.model import Scenario, load_scenario
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.store.layout import ARCHIVE_FILE, CHUNKS_DIR, RECORD_FILE, SessionDir
from rokuprof.workflows.profile_run import ProfilePlan, profile

DEMO_SERIAL = "YN00DEMO0001"
#: The sample app and its scenario, shipped inside the package.
SAMPLE_APP = Path(__file__).resolve().parent.parent / "sample_app"
SAMPLE_SCENARIO = SAMPLE_APP / "scenario.toml"
#: The sample app records everything the profiler can: memory and lines too.
DEMO_KEYS = ProfilerKeys(mem=True, lines=True)


@dataclass
class DemoResult:
    summary: CaptureSummary
    connect_delay: float | None  # seconds the app waited for rokuprof to connect
    device_status: str  # the simulated device's view of the run
    scenario: str = ""  # where the steps came from ("" without a scenario)
    marks: list[tuple[str, float]] = field(default_factory=list)
    keys: int = 0  # remote requests the simulated device answered during the run
    report: Path | None = None


async def run_demo(
    out: Path,
    *,
    seconds: float | None = None,
    scenario: Scenario | None = None,
    chunks: ChunkSettings = DEMO_CHUNKS,
    view: str = "auto",
    console: Console | None = None,
    say: Callable[[str], None] = lambda line: None,
    stop: StopRequest | None = None,
    signals: bool = True,
) -> DemoResult:
    """Profile the sample app on a simulated Roku into ``out``: its scenario (or ``scenario``),
    or, with ``seconds``, that long without one; the report is written into the session."""
    if seconds is None and scenario is None:
        scenario = load_scenario(SAMPLE_SCENARIO)
    device = DeviceConfig(
        host="127.0.0.1",
        serial=DEMO_SERIAL,
        name="rokuprof demo device",
        auto_launch=False,
        run_seconds=3600.0,  # the scenario (or --seconds) ends the run, through exit-app
        runs=None,
        seed=2024,
    )
    async with SimulatedDevice(device) as dev:
        plan = ProfilePlan(
            app=package_app(SAMPLE_APP, DEMO_KEYS),
            capture=capture_config(
                DeviceAddress("127.0.0.1", dev.profiler_port, dev.ecp_port, dev.console_port),
                out=out,
                chunks=chunks,
                runs=1,
            ),
            password=dev.password,
            installer_port=dev.installer_port,
            scenario=scenario,
            duration=seconds,
        )
        result = await profile(
            plan, say=say, view=view, console=console, stop=stop, signals=signals
        )
        run = dev.runs[0] if dev.runs else None
        if run is not None and run.active:
            await dev.home()  # interrupted: let the simulated app exit too
        demo = DemoResult(
            summary=result.summary,
            connect_delay=run.connect_delay if run else None,
            device_status=run.status if run else "not launched",
            scenario=_shown(scenario),
            marks=result.marks,
            keys=sum(1 for _, kind, _ in dev.remote_log if kind == "keypress"),
        )
    if demo.summary.sessions:
        from rokuprof.app.source import open_source
        from rokuprof.export.report.session import write_session_report

        demo.report = await asyncio.to_thread(
            write_session_report,
            demo.summary.sessions[0].path,
            wall_unit=chunks.wall_unit,
            source=open_source(SAMPLE_APP),  # as profile passes the app's: its lines shown
        )
    return demo


def _shown(scenario: Scenario | None) -> str:
    """How the lines name the scenario: the sample's as the built-in one, at the path it has
    where rokuprof is installed (``samples/app`` exists in a clone only)."""
    if scenario is None:
        return ""
    if scenario.source == str(SAMPLE_SCENARIO):
        return f"the sample app's, built in: {SAMPLE_SCENARIO}"
    return scenario.source


def demo_lines(result: DemoResult) -> list[str]:
    """Where to look and what to try next."""
    lines = []
    if result.connect_delay is not None:
        lines.append(
            f"The app waited {result.connect_delay:.2f} s for rokuprof to connect "
            "(a profiled app does not start until its profiler client connects)."
        )
    if result.scenario:
        marks = ", ".join(label for label, _ in result.marks) or "none"
        lines.append(
            f"The scenario ({result.scenario}) pressed {result.keys} key(s); marks: {marks}."
        )
    if not result.summary.sessions:
        lines.append("No run was captured.")
        return lines
    session = result.summary.sessions[0]
    path = session.path
    layout = SessionDir(path)
    lines += [
        "",
        f"Session ({session.record.status}): {path}",
        f"  {ARCHIVE_FILE:<15} {session.record.bytes:,} bytes, exactly as the device sent them",
        f"  {RECORD_FILE:<15} device, app, start/end, bytes, entries ({session.record.entries:,}),"
        " status, marks, vitals",
        f"  {CHUNKS_DIR + '/':<15} {len(layout.chunk_names())} Sentry V2 profile chunk(s), "
        "written while the run streamed",
    ]
    if result.report is not None:
        lines.append(f"  {result.report.name:<15} the HTML report (open it in a browser)")
    lines += [
        "",
        "Try next:",
        f"  rokuprof inspect {layout.archive}",
        f"  rokuprof report {path}",
        f"  rokuprof export {path} -f speedscope,pprof",
        f"  rokuprof convert {layout.archive} --out rokuprof-converted",
        f"  python -m json.tool {layout.record}",
        "Profile your own app on a real Roku in developer mode (ROKU_DEV_PASSWORD set): "
        "rokuprof profile path/to/app --device <roku-ip> --scenario path/to/scenario.toml",
    ]
    return lines
