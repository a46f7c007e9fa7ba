"""``rokuprof demo``: a simulated Roku in this process, and ``watch`` capturing one of its runs.

The only capture module that uses :mod:`rokuprof.simulator`: it starts a simulated device on
127.0.0.1 (ports chosen by the OS), starts the same capture loop ``watch`` uses, launches the
app the way a developer would (so the capture is already waiting), and returns where the
session went and how long the app waited for its profiler client.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from rokuprof.capture.loop import CaptureConfig, CaptureSummary
from rokuprof.capture.watch import watch
from rokuprof.sentry.chunk import ChunkSettings
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.store.layout import ARCHIVE_FILE, CHUNKS_DIR, RECORD_FILE, SessionDir

DEMO_SERIAL = "YN00DEMO0001"
#: A chunk every 5 s, so a short demo run shows several; environment "demo".
DEMO_CHUNKS = ChunkSettings(chunk_seconds=5.0, environment="demo")


@dataclass
class DemoResult:
    summary: CaptureSummary
    connect_delay: float | None  # seconds the app waited for rokuprof to connect
    device_status: str  # the simulated device's view of the run


async def run_demo(
    out: Path,
    *,
    seconds: float = 20.0,
    chunks: ChunkSettings = DEMO_CHUNKS,
    view: str = "auto",
    console: Console | None = None,
    launch_after: float = 1.0,
    stop: asyncio.Event | None = None,
    signals: bool = True,
) -> DemoResult:
    """Capture one simulated run of ``seconds`` into ``out``, making chunks by ``chunks``."""
    device = DeviceConfig(
        host="127.0.0.1",
        serial=DEMO_SERIAL,
        name="rokuprof demo device",
        auto_launch=False,
        run_seconds=seconds,
        runs=1,
        seed=2024,
    )
    async with SimulatedDevice(device) as dev:
        config = CaptureConfig(
            host="127.0.0.1",
            out=out,
            profiler_port=dev.profiler_port,
            ecp_port=dev.ecp_port,
            console_port=dev.console_port,
            chunk_settings=chunks,
            runs=1,
        )
        capture = asyncio.ensure_future(
            watch(config, view=view, console=console, stop=stop, signals=signals)
        )

        async def launch() -> None:
            await asyncio.sleep(launch_after)
            await dev.launch()

        launcher = asyncio.ensure_future(launch())
        try:
            summary = await capture
        finally:
            launcher.cancel()
            await asyncio.gather(launcher, return_exceptions=True)
        run = dev.runs[0] if dev.runs else None
        if run is not None and run.active:
            await dev.home()  # interrupted: let the simulated app exit too
        return DemoResult(
            summary=summary,
            connect_delay=run.connect_delay if run else None,
            device_status=run.status if run else "not launched",
        )


def demo_lines(result: DemoResult) -> list[str]:
    """Where to look and what to try next."""
    lines = []
    if result.connect_delay is not None:
        lines.append(
            f"The app waited {result.connect_delay:.2f} s for rokuprof to connect "
            "(a profiled app does not start until its profiler client connects)."
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
        " status, errors",
        f"  {CHUNKS_DIR + '/':<15} {len(layout.chunk_names())} Sentry V2 profile chunk(s), "
        "written while the run streamed",
        "",
        "Try next:",
        f"  rokuprof inspect {layout.archive}",
        f"  rokuprof report {path}",
        f"  rokuprof export {path} -f speedscope,pprof",
        f"  rokuprof convert {layout.archive} --out rokuprof-converted",
        f"  python -m json.tool {layout.record}",
        "Capture a real device: rokuprof watch <roku-ip>   (find it with: rokuprof discover)",
    ]
    return lines
