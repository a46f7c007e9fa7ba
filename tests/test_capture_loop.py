"""The capture loop end to end against the simulated device on 127.0.0.1 (every wait bounded)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import cap_config
from waiting import until

from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.capture.session import read_record
from rokuprof.device.errors import DeviceError
from rokuprof.device.stream import ProfilerStream
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry import validate_chunk
from rokuprof.simulator import Fault, SimulatedDevice


def chunk_files(session: Path) -> list[Path]:
    return sorted((session / "chunks").glob("*.json"))


def assert_valid_chunks(session: Path, profiler_id: str) -> list[dict]:
    chunks = []
    for path in chunk_files(session):
        payload = json.loads(path.read_bytes())
        assert validate_chunk(payload) == [], path
        assert payload["profiler_id"] == profiler_id
        chunks.append(payload)
    assert len({c["chunk_id"] for c in chunks}) == len(chunks)
    return chunks


async def test_a_run_is_archived_byte_for_byte_with_valid_chunks(
    tmp_path: Path,
) -> None:
    recorder = Recorder()
    # Real time, CPU data flushed 5 times a second, chunks every 0.5 s.
    device = sim(run_seconds=2.0, speed=1.0, cpu_flush_seconds=0.2)
    async with SimulatedDevice(device) as dev:
        config = cap_config(dev, tmp_path, runs=1, chunk_seconds=0.5, delta_seconds=0.1)
        capture = DeviceCapture(config, observer=recorder)
        summary = await run_capture(capture)
        run = await dev.wait_run_end(0, 5)
        sent = dev.sent_bytes(0)
    assert run.status == "complete"
    [session] = summary.sessions
    assert session.path.parent == tmp_path / "YN00AA000001"  # the serial from ECP
    assert session.path.name.startswith(time.strftime("%Y", time.gmtime()))
    assert (session.path / "capture.bsprof").read_bytes() == sent
    record = read_record(session.path)
    reader = ProfileReader.from_bytes(sent)
    assert record["status"] == "complete"
    assert record["bytes"] == len(sent)
    assert record["entries"] == reader.entry_count > 100
    assert record["app"]["name"] == "Café TV" and record["app"]["version"] == "2.4.1"
    assert record["app"]["ecp"]["id"] == "dev"
    assert record["device"]["serial"] == "YN00AA000001"
    assert record["profiler"]["end_ms"] == run.end_ms
    assert record["profiler"]["console_status"]["state"] == "running"
    assert record["errors"] == []
    assert record["start"].endswith("Z") and record["end"] >= record["start"]
    chunks = assert_valid_chunks(session.path, record["profiler_id"])
    assert record["chunks"] == len(chunks) >= 3
    assert record["chunk_report"]["chunks"] == len(chunks)
    assert all(c["release"] == "Café TV@2.4.1" for c in chunks)
    assert not list(tmp_path.rglob("*.tmp"))


async def test_chunks_are_written_while_the_run_streams(tmp_path: Path) -> None:
    """Each window's chunk is written once its window is over, not at the run's end: a long run
    is stopped only after two chunks were written, so they were written while it streamed."""
    recorder = Recorder()
    device = sim(run_seconds=60.0, speed=1.0, cpu_flush_seconds=0.2)
    async with SimulatedDevice(device) as dev:
        config = cap_config(dev, tmp_path, chunk_seconds=0.5, delta_seconds=0.1)
        capture = DeviceCapture(config, observer=recorder)
        task = asyncio.ensure_future(capture.run())
        await until(lambda: len(recorder.chunks) >= 2, 20)
        sending = dev.runs[0].status == "streaming"  # the device is still sending the run
        capture.request_stop()
        summary = await asyncio.wait_for(task, 10)
        await dev.home()
    assert sending
    assert [state for _, state, _ in recorder.chunks[:2]] == ["streaming", "streaming"]
    [session] = summary.sessions
    assert {path for *_, path in recorder.chunks[:2]} <= set(chunk_files(session.path))
    assert session.record.status == "interrupted"


async def test_live_samples_lie_inside_the_run_and_chunks_follow_their_windows(
    tmp_path: Path,
) -> None:
    """Live, the run starts at the connect and ends when the footer arrived: no sample lies
    outside, and each window's chunk is written once time passed its end (and the settling
    time), while the run still streams. Whatever the load: the test holds back what arrives
    once the device wrote its footer (and the stream's end) until the loop has ticked past
    every window's cut and written its chunk, then hands it over."""
    recorder = Recorder()
    streams: list[ProfilerStream] = []
    sinks: list = []
    held: list[bytes] = []
    held_at: list[float] = []  # the run's clock when the first byte was held back
    released: list[bool] = []

    device = sim(run_seconds=2.0, speed=1.0, cpu_flush_seconds=0.1)
    async with SimulatedDevice(device) as dev:

        async def connect(*args, **kw):
            stream = await ProfilerStream.open(*args, **kw)
            deliver, streams[:] = stream.deliver, [stream]

            def gate(data: bytes) -> None:
                if released:
                    sinks[0](data)
                elif held or dev.runs[0].end_ms is not None:  # the footer is on its way
                    if not held:
                        held_at.append(time.time())
                        stream.hold()  # and the stream's end with it
                    held.append(data)
                else:
                    sinks[0](data)

            stream.deliver = lambda sink: (sinks.append(sink), deliver(gate))
            return stream

        config = cap_config(dev, tmp_path, runs=1, chunk_seconds=0.5, delta_seconds=0.1)
        capture = DeviceCapture(config, observer=recorder, connect=connect)
        task = asyncio.ensure_future(capture.run())
        await until(lambda: held, 10)
        settings, machine = config.chunk_settings, capture.current_run.machine
        cut_by = held_at[0] + settings.chunk_seconds + settings.settle_seconds + 2 * 0.1
        await until(lambda: machine.next_tick() > cut_by, 10)  # ticked past every cut
        await until(lambda: len(recorder.chunks) == machine.chunks, 10)  # and written
        released.append(True)
        sinks[0](b"".join(held))  # the footer arrives
        streams[0].release()  # then the rest and the stream's end
        summary = await asyncio.wait_for(task, 10)
        run = await dev.wait_run_end(0, 5)
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "complete"
    start, end = session.record.start, session.record.end
    footer_end = run.end_ms / 1000  # the simulator's clock is ours
    chunks = assert_valid_chunks(session.path, record["profiler_id"])
    times = [s["timestamp"] for c in chunks for s in c["profile"]["samples"]]
    # Exact, whatever the load: the samples lie between the connect and the footer's arrival
    # (the run's recorded end), and the device wrote its footer before it arrived (its end_ms is
    # whole milliseconds, rounded).
    assert end is not None and footer_end <= end + 0.001
    assert times and start <= min(times) and max(times) <= end
    # Every sample that arrived before the footer is in a chunk written while the run streamed.
    streamed = {p for _, state, p in recorder.chunks if state == "streaming"}
    early = sorted(t for t in times if t <= held_at[0])
    in_streamed = sorted(
        s["timestamp"]
        for p in streamed
        for s in json.loads(p.read_bytes())["profile"]["samples"]
        if s["timestamp"] <= held_at[0]
    )
    assert early and in_streamed == early
    assert len(streamed) >= len(chunks) - 2, (len(streamed), len(chunks))


async def test_two_consecutive_runs_become_two_sessions(tmp_path: Path) -> None:
    async with SimulatedDevice(sim(runs=2, run_seconds=1.0)) as dev:
        summary = await run_capture(DeviceCapture(cap_config(dev, tmp_path, runs=2)))
        sent = [dev.sent_bytes(0), dev.sent_bytes(1)]
    assert [s.record.status for s in summary.sessions] == ["complete", "complete"]
    paths = [s.path for s in summary.sessions]
    assert len(set(paths)) == 2
    assert sorted(paths) == paths  # names start with the start time, to the millisecond
    for path, data in zip(paths, sent, strict=True):
        assert (path / "capture.bsprof").read_bytes() == data
    ids = {read_record(p)["profiler_id"] for p in paths}
    assert len(ids) == 2
    assert summary.stop_reason == "--runs 2 reached"


async def test_a_connection_cut_mid_run_gives_a_truncated_session_with_its_data(
    tmp_path: Path,
) -> None:
    faults = (Fault("reset", after_bytes=6000, run=0),)
    async with SimulatedDevice(sim(run_seconds=3.0, faults=faults)) as dev:
        summary = await run_capture(DeviceCapture(cap_config(dev, tmp_path, runs=1)))
        sent = dev.sent_bytes(0)
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "truncated"
    assert 6000 <= len(sent) < 7000
    # After a reset TCP promises nothing about bytes still in flight (the simulator waits for
    # the client's ACKs, but only so long): the archive is a prefix of what was sent, and
    # everything the session reports is derived from exactly what was archived.
    archive = (session.path / "capture.bsprof").read_bytes()
    assert archive and sent.startswith(archive)
    assert record["bytes"] == len(archive)
    assert record["entries"] == ProfileReader.from_bytes(archive).entry_count > 0
    assert record["errors"][0]["kind"] == "connection_lost"
    assert "incomplete" in record["end_reason"]
    assert_valid_chunks(session.path, record["profiler_id"])


async def test_an_idle_stream_times_out_as_truncated(tmp_path: Path) -> None:
    faults = (Fault("stall", after_bytes=3000, run=0),)
    async with SimulatedDevice(sim(run_seconds=4.0, faults=faults)) as dev:
        config = cap_config(dev, tmp_path, runs=1, idle_timeout=0.4)
        summary = await run_capture(DeviceCapture(config))
        sent = dev.sent_bytes(0)
    record = summary.sessions[0].record
    assert record.status == "truncated"
    assert record.errors[0]["kind"] == "idle_timeout"
    assert (summary.sessions[0].path / "capture.bsprof").read_bytes() == sent[: record.bytes]
    assert record.bytes >= 3000


async def test_corrupt_data_fails_the_session_with_the_decoder_error_and_keeps_the_bytes(
    tmp_path: Path,
) -> None:
    faults = (Fault("garbage", after_bytes=5000, run=0),)
    async with SimulatedDevice(sim(faults=faults)) as dev:
        summary = await run_capture(DeviceCapture(cap_config(dev, tmp_path, runs=1)))
        sent = dev.sent_bytes(0)
    session = summary.sessions[0]
    record = read_record(session.path)
    assert (session.path / "capture.bsprof").read_bytes() == sent  # all of it, garbage included
    assert record["status"] == "failed"
    [error] = [e for e in record["errors"] if e["kind"] == "decoder"]
    expected = ProfileReader.from_bytes(sent).error
    assert (error["offset"], error["message"]) == (expected.offset, expected.message)
    assert 4900 < error["offset"] <= 5000
    assert f"byte {expected.offset}" in record["end_reason"]


async def test_stop_trigger_mid_run_interrupts_and_finishes_the_chunks(tmp_path: Path) -> None:
    stop = asyncio.Event()
    recorder = Recorder()
    device = sim(run_seconds=20.0, speed=1.0, cpu_flush_seconds=0.2)
    async with SimulatedDevice(device) as dev:
        config = cap_config(dev, tmp_path, chunk_seconds=0.5, delta_seconds=0.1)
        capture = DeviceCapture(config, observer=recorder, stop=stop)
        task = asyncio.ensure_future(capture.run())
        await until(lambda: dev.runs and dev.runs[0].bytes_sent > 3000, 10)
        await until(lambda: recorder.chunks, 10)  # a window's chunk was written: stop mid-run
        stop.set()
        summary = await asyncio.wait_for(task, 5)
        await dev.home()
        sent = dev.sent_bytes(0)
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "interrupted"
    assert summary.stop_reason == "stopped by a stop request"
    data = (session.path / "capture.bsprof").read_bytes()
    assert sent.startswith(data) and len(data) > 3000
    chunks = assert_valid_chunks(session.path, record["profiler_id"])
    assert record["chunks"] == len(chunks) >= 1
    assert capture.status.state == "stopped"


async def test_app_start_is_delayed_by_less_than_a_second(tmp_path: Path) -> None:
    """Launch while the loop polls: the loop's next connect after the launch is the run, so the
    app waits at most one poll interval (plus a connect) for its client. The launches come
    after 1, 2 and 3 refused polls; the exact polling interval is the device machine's rule
    (test_device_machine: a refusing port is polled every poll interval)."""
    attempts: list[list] = []  # [app launched before this attempt began, refused]
    launched = [False]

    async def connect(*args, **kw):
        attempt = [launched[0], False]
        attempts.append(attempt)
        try:
            stream = await ProfilerStream.open(*args, **kw)
        except DeviceError:
            attempt[1] = True
            raise
        launched[0] = False  # connected: the run is on
        return stream

    def refused_since(start: int) -> int:
        return sum(refused for _, refused in attempts[start:])

    config = sim(auto_launch=False, run_seconds=0.4, runs=None)
    async with SimulatedDevice(config) as dev:
        # The production poll interval, not the faster one the other tests use.
        config = cap_config(dev, tmp_path, runs=3, poll_interval=0.25)
        task = asyncio.ensure_future(DeviceCapture(config, connect=connect).run())
        for i in range(3):
            start = len(attempts)
            await until(lambda s=start, n=i + 1: refused_since(s) >= n, 10)  # polling
            launched[0] = True
            await dev.launch()
            await dev.wait_run_end(i, 5)
        summary = await asyncio.wait_for(task, 5)
    assert all(run.connect_delay is not None for run in dev.runs)
    # no connect begun after a launch was refused: the first one became the run
    assert [a for a in attempts if a == [True, True]] == [], attempts
    assert sum(not refused for _, refused in attempts) == len(summary.sessions) == 3


async def test_duration_stops_the_loop_while_waiting(tmp_path: Path) -> None:
    """``duration`` is one timer of exactly that length: the loop polls the refusing device
    until it fires (not before), then stops at once, with no session."""
    asked: list[float] = []
    fired = asyncio.Event()
    attempts: list[tuple] = []

    async def timer(seconds: float) -> None:  # the test says when the duration is over
        asked.append(seconds)
        await fired.wait()

    async def connect(*args, **kw):
        attempts.append(args)
        return await ProfilerStream.open(*args, **kw)

    async with SimulatedDevice(sim(auto_launch=False)) as dev:
        config = cap_config(dev, tmp_path, duration=0.5)
        capture = DeviceCapture(config, connect=connect, timer=timer)
        task = asyncio.ensure_future(capture.run())
        await until(lambda: len(attempts) >= 3 and capture.status.state == "refused", 10)
        assert asked == [0.5] and not task.done()  # polling on, the duration not over yet
        fired.set()
        summary = await asyncio.wait_for(task, 5)
    assert summary.sessions == [] and summary.stop_reason == "--duration 0.5 s reached"


async def test_without_ecp_the_device_directory_is_the_host(tmp_path: Path) -> None:
    async with SimulatedDevice(sim(ecp_mode="disabled")) as dev:
        recorder = Recorder()
        summary = await run_capture(
            DeviceCapture(cap_config(dev, tmp_path, runs=1), observer=recorder)
        )
    assert summary.sessions[0].path.parent == tmp_path / "127.0.0.1"
    assert summary.sessions[0].record.status == "complete"
    assert any("Network access" in m for m in recorder.messages)  # the limited-mode advice


async def test_a_failing_chunk_builder_does_not_stop_the_raw_capture(tmp_path: Path) -> None:
    class Broken:
        def add(self, delta, arrival):
            raise RuntimeError("boom")

    async with SimulatedDevice(sim()) as dev:
        capture = DeviceCapture(
            cap_config(dev, tmp_path, runs=1), sink_factory=lambda context: Broken()
        )
        summary = await run_capture(capture)
        sent = dev.sent_bytes(0)
    record = summary.sessions[0].record
    assert record.status == "complete"
    assert (summary.sessions[0].path / "capture.bsprof").read_bytes() == sent
    assert record.errors[0]["kind"] == "chunks" and "boom" in record.errors[0]["message"]


async def test_a_refused_second_client_is_not_a_session(tmp_path: Path) -> None:
    """While another client holds the stream the device answers 503: no session, keep polling."""
    async with SimulatedDevice(sim(run_seconds=1.0, auto_launch=False)) as dev:
        await dev.launch()
        _, writer = await asyncio.open_connection("127.0.0.1", dev.profiler_port)
        writer.write(b"GET /bsprof/channel.bsprof HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        recorder = Recorder()
        capture = DeviceCapture(cap_config(dev, tmp_path, duration=0.6), observer=recorder)
        summary = await run_capture(capture)
        writer.close()
        await writer.wait_closed()
    assert summary.sessions == []
    assert "busy" in recorder.states and "streaming" not in recorder.states


@pytest.mark.parametrize("bad", [{"runs": 0}, {"idle_timeout": 0}])
def test_config_is_checked(bad: dict) -> None:
    with pytest.raises(ValueError):
        CaptureConfig(host="h", **bad)


async def test_a_capture_writes_owner_only_files_and_directories(tmp_path: Path) -> None:
    import os
    import stat

    old = os.umask(0o022)
    try:
        async with SimulatedDevice(sim(run_seconds=1.0)) as dev:
            summary = await run_capture(DeviceCapture(cap_config(dev, tmp_path / "out", runs=1)))
    finally:
        os.umask(old)
    [session] = summary.sessions
    made = [p for p in (tmp_path / "out").rglob("*")]
    assert session.path / "capture.bsprof" in made and session.path / "chunks" in made
    for path in [tmp_path / "out", *made]:
        want = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.stat().st_mode) == want, path
