"""The app trace captured beside the ``.bsprof``: a loopback stand-in for the device's trace
socket that splits packets across messages, firmware without tracing, and hostile sockets
(garbage, a message announcing 1 GiB, endless small messages) that must leave the ``.bsprof``
run complete and the memory bounded. The profile stream is the simulator's."""

from __future__ import annotations

from pathlib import Path

from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import cap_config
from trace_helpers import FakeTraceDevice, roku_app_trace

from rokuprof.capture.loop import DeviceCapture
from rokuprof.capture.session import read_record
from rokuprof.capture.trace_tap import END_LIMIT, END_RUN, FLUSH_BYTES, NO_TRACING
from rokuprof.simulator import SimulatedDevice
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report


async def _capture(fake: FakeTraceDevice, out: Path, **kw) -> tuple:
    """One simulated run captured with the trace socket on ``fake``."""
    recorder = Recorder()
    async with SimulatedDevice(sim(run_seconds=2.0, speed=2.0)) as dev:
        config = cap_config(dev, out, runs=1, trace=True, ecp_port=fake.port, use_ecp=False, **kw)
        capture = DeviceCapture(config, observer=recorder)
        summary = await run_capture(capture, timeout=30)
        run = await dev.wait_run_end(0, 5)
        sent = dev.sent_bytes(0)
    [session] = summary.sessions
    return session, run, sent, recorder


async def test_the_run_s_trace_is_the_bytes_as_they_arrived(tmp_path: Path) -> None:
    data = roku_app_trace(interned=True).data()
    async with FakeTraceDevice("split", data, message_bytes=37) as fake:  # cut inside packets
        session, run, sent, _ = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    assert (session.path / "trace.perfetto-trace").read_bytes() == data
    record = read_record(session.path)
    assert record["trace"] == {
        "file": "trace.perfetto-trace",
        "bytes": len(data),
        "messages": -(-len(data) // 37),
        "end_reason": END_RUN,
        "dropped_bytes": 0,
        "problems": [],
    }
    assert fake.enables >= 1
    report = trace_report(read_trace((session.path / "trace.perfetto-trace").read_bytes()))
    assert report["complete"] and report["frames"]["missed"] == 3


async def test_a_trace_of_megabytes_goes_through_the_spool(tmp_path: Path) -> None:
    """Past a megabyte the payloads are written to the spool as they come (memory holds no
    more), and the session gets the same bytes; no spool is left behind."""
    data = roku_app_trace(interned=False).data() * 1200  # about 3 MiB
    async with FakeTraceDevice("split", data, message_bytes=64 * 1024 + 3) as fake:
        session, run, _, _ = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert len(data) > 3 * FLUSH_BYTES
    assert (session.path / "trace.perfetto-trace").read_bytes() == data
    assert read_record(session.path)["trace"]["bytes"] == len(data)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".trace-")] == []


async def test_firmware_without_tracing_is_one_line_and_the_run_goes_on(tmp_path: Path) -> None:
    async with FakeTraceDevice(enable_status=404) as fake:
        session, run, sent, recorder = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    assert not (session.path / "trace.perfetto-trace").exists()
    assert read_record(session.path)["trace"] is None
    said = [m for m in recorder.messages if NO_TRACING in m]
    assert len(said) == 1 and "404" in said[0]
    assert fake.sockets == 0


async def test_garbage_on_the_socket_costs_the_profile_nothing(tmp_path: Path) -> None:
    async with FakeTraceDevice("garbage") as fake:
        session, run, sent, recorder = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    trace = read_record(session.path)["trace"]
    assert trace["bytes"] == 0 and trace["file"] is None
    assert any("not WebSocket frames" in p for p in trace["problems"]), trace
    assert 1 <= fake.sockets <= 8  # it reconnected, backing off
    assert sum("app trace:" in m for m in recorder.messages) == len(set(recorder.messages))


async def test_a_message_announcing_a_gigabyte_is_refused_before_its_payload(
    tmp_path: Path,
) -> None:
    async with FakeTraceDevice("huge") as fake:
        session, run, sent, _ = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    trace = read_record(session.path)["trace"]
    assert trace["bytes"] == 0
    assert any("a message larger than 4 MiB" in p for p in trace["problems"]), trace


async def test_endless_small_messages_stop_at_the_run_s_byte_limit(tmp_path: Path) -> None:
    limit = 64 * 1024
    async with FakeTraceDevice("flood") as fake:
        session, run, sent, _ = await _capture(fake, tmp_path, trace_max_run_bytes=limit)
        sockets = fake.sockets
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    trace = read_record(session.path)["trace"]
    assert trace["end_reason"] == END_LIMIT
    assert limit - 64 < trace["bytes"] <= limit
    assert (session.path / "trace.perfetto-trace").stat().st_size == trace["bytes"]
    assert trace["dropped_bytes"] > 0
    assert sockets == 1  # closed at the limit, not reopened before the run ended
