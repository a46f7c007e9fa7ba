"""``perfetto`` of a real session: captured with its app trace against the simulated Roku (app
tracing on, as Roku OS 15.1+), both files made by the run itself, then exported: the device's
packets first, byte for byte, and the .bsprof tracks on the wall clock the device trace's clock
snapshot gives, inside the span of the run's trace."""

from __future__ import annotations

from pathlib import Path

from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import cap_config
from test_export_perfetto import bsprof_tracks, check_tracks

from rokuprof.capture.loop import DeviceCapture
from rokuprof.export.perfetto_session import perfetto_with_session
from rokuprof.export.report.session import load_session_capture
from rokuprof.simulator import SimulatedDevice
from rokuprof.trace.reader import read_trace

#: The simulator makes both files from one run clock (the .bsprof's timeline ends where the
#: trace does); a sample's period of slack at either end.
SLACK_NS = 10_000_000


async def test_a_captured_session_exports_its_trace_and_its_tracks(tmp_path: Path) -> None:
    async with SimulatedDevice(sim(run_seconds=2.0, speed=1.0)) as dev:
        config = cap_config(dev, tmp_path, runs=1, trace=True)
        summary = await run_capture(DeviceCapture(config, observer=Recorder()), timeout=40)
    [session] = summary.sessions
    device = (session.path / "trace.perfetto-trace").read_bytes()
    assert device
    inp = load_session_capture(session.path)
    files, notes = perfetto_with_session(inp, session.path)
    data = b"".join(files[""])
    assert notes == []
    assert data.startswith(device)
    trace = read_trace(data)
    assert trace.error is None and not trace.problems
    check_tracks(inp, trace)
    alone = read_trace(device)
    assert "RenderThr:Main" in {t.name for t in trace.tracks.values()}
    offset = trace.wall_offset_ns()
    assert offset is not None
    first = alone.first_ts + offset
    last = max(s.end if s.end is not None else s.start for s in alone.slices) + offset
    ours = set(bsprof_tracks(trace).values())
    mine = [s for s in trace.slices if s.track in ours]
    assert mine
    assert first - SLACK_NS <= min(s.start for s in mine)
    assert max(s.end for s in mine) <= last + SLACK_NS
