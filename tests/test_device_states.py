"""Device states a user can trust, end to end against the simulated Roku on 127.0.0.1: the same
state in the loop's status, the live view, the plain log, metrics and /healthz; notes that clear
with their cause; a repeated condition said once. The rules themselves are the device machine's,
tested event by event in test_device_machine.py; these tests show the shell carries them out.

Every run is ended by the test (Home) or quick (the simulator's app time runs fast), and every
wait is for an event (bounded), never a window of time."""

from __future__ import annotations

import asyncio
import io
import json
import socket
from pathlib import Path

import httpx
from capture_helpers import Recorder
from daemon_helpers import cap_config
from rich.console import Console
from waiting import until

from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.capture.status import CaptureStatus, NullObserver
from rokuprof.daemon.config import build_config
from rokuprof.device.control import control
from rokuprof.device.stream import ProfilerStream
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.views.live_log import PlainLog
from rokuprof.views.live_view import LiveView


def sim(**kw) -> DeviceConfig:
    base = dict(run_seconds=1.5, runs=1, run_gap=0.1, seed=3, burst_ticks=(2, 10), speed=4.0)
    return DeviceConfig(**(base | kw))


class Seen(NullObserver):
    """The states as the loop announced them (with the bytes and session at that moment), and
    its messages; every event also goes to a plain log."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.log = PlainLog(self.lines.append)
        self.states: list[tuple[str, int, str]] = []
        self.messages: list[str] = []

    def on_state(self, status: CaptureStatus) -> None:
        self.states.append((status.state, status.bytes, status.session))
        self.log.on_state(status)

    def on_session_start(self, status: CaptureStatus) -> None:
        self.log.on_session_start(status)

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        self.messages.append(text)
        self.log.on_message(status, level, text)


def screen(status: CaptureStatus) -> str:
    console = Console(file=io.StringIO(), width=200, height=30, record=True)
    console.print(LiveView(console, keys=False).render(status))
    return console.export_text()


def state_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("state"))


def free_port() -> int:
    """A port nothing listens on (connects to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def other_client(port: int) -> bytes:
    """A second profiler client that takes the stream and reads it to its end."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /bsprof/channel.bsprof HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    data = await reader.read()
    writer.close()
    await writer.wait_closed()
    return data


async def test_busy_is_said_once_never_streaming_before_data_and_its_note_clears(
    tmp_path: Path,
) -> None:
    """Another client has the stream (503): the state is busy (not "streaming run 1, 0:00:00"),
    said once however often the loop retries; the next, successful run shows no 503."""
    seen = Seen()
    async with SimulatedDevice(sim(auto_launch=False, runs=None, run_seconds=60)) as dev:
        await dev.launch()
        await dev.wait_listening(5)
        other = asyncio.ensure_future(other_client(dev.profiler_port))
        await dev.wait_until(lambda: dev.runs[0].status == "streaming", 5)
        config = cap_config(dev, tmp_path, runs=1, poll_interval=0.05, max_backoff=0.1)
        capture = DeviceCapture(config, observer=seen)
        task = asyncio.ensure_future(capture.run())
        await until(lambda: capture.status.state == "busy", 5)
        busy_screen = screen(capture.status)
        await until(lambda: dev.runs[0].refused >= 5, 10)  # asked again and again while busy
        await dev.home()  # the other client's run ends
        await dev.wait_run_end(0, 10)
        assert await asyncio.wait_for(other, 5)
        refused_before = dev.runs[0].refused
        await until(lambda: capture.status.state == "refused", 5)
        await dev.launch()
        await until(lambda: capture.status.state == "streaming", 5)
        streaming_screen = screen(capture.status)
        await until(lambda: capture.status.bytes > 3000, 5)
        await dev.home()  # the run ends, complete
        summary = await asyncio.wait_for(task, 15)
    assert refused_before >= 5  # the loop asked again and again while busy
    assert "busy" in state_line(busy_screen) and "503" in busy_screen
    assert "streaming" not in state_line(busy_screen)
    # "streaming" only once a session (its first byte) exists:
    streaming = [session for state, _, session in seen.states if state == "streaming"]
    assert streaming and all(streaming), seen.states
    head = [line for line in streaming_screen.splitlines() if line.startswith(("state", "note"))]
    assert not any("503" in line or "busy" in line for line in head), head
    assert state_line(streaming_screen).startswith("state    streaming  run 1, 0:00:0")
    assert "last data" in state_line(streaming_screen)
    assert not any("503" in m for m in seen.messages)
    text = "\n".join(seen.lines)
    assert text.count("busy: another profiler client") == 1, text
    assert text.count("refused: the profiler port refuses") == 1, text  # the other run ended
    assert [s.record.status for s in summary.sessions] == ["complete"]


async def test_a_paused_profiler_shows_as_paused_until_resumed(tmp_path: Path) -> None:
    """``rokuprof control HOST pause`` during a capture: the loop's console poll sees it."""
    seen = Seen()
    async with SimulatedDevice(sim(auto_launch=False, run_seconds=60)) as dev:
        config = cap_config(dev, tmp_path, console_poll=0.1)
        capture = DeviceCapture(config, observer=seen)
        task = asyncio.ensure_future(capture.run())
        await dev.launch()
        await until(lambda: capture.status.state == "streaming", 5)
        assert "paused" in (await control("127.0.0.1", "pause", dev.console_port, 2.0)).reply
        await until(lambda: capture.status.state == "paused", 8)
        paused_screen = screen(capture.status)
        assert "resumed" in (await control("127.0.0.1", "resume", dev.console_port, 2.0)).reply
        await until(lambda: capture.status.state == "streaming", 8)
        capture.request_stop()
        summary = await asyncio.wait_for(task, 10)
        await dev.home()
    assert state_line(paused_screen).startswith("state    paused  run 1, ")
    assert "rokuprof control 127.0.0.1 resume" in paused_screen
    text = "\n".join(seen.lines)
    assert text.count("paused: the app's profiler is paused") == 1, text
    assert text.count("resumed: streaming again") == 1, text
    assert summary.sessions[0].record.status == "interrupted"


async def test_ecp_limited_mode_is_said_once_with_the_setting(tmp_path: Path) -> None:
    seen = Seen()
    async with SimulatedDevice(sim(ecp_mode="limited", runs=2)) as dev:
        capture = DeviceCapture(cap_config(dev, tmp_path, runs=2), observer=seen)
        summary = await asyncio.wait_for(capture.run(), 20)
    said = [m for m in seen.messages if "limited mode" in m]
    assert len(said) == 1 and "Control by mobile apps > Network access" in said[0]
    assert said[0] in summary.problems
    assert [s.record.device["ecp_mode"] for s in summary.sessions] == ["limited", "limited"]
    assert capture.status.limited and "ECP limited" in screen(capture.status)
    assert "\n".join(seen.lines).count("limited mode") == 1


async def test_unreachable_and_refused_are_told_apart(tmp_path: Path) -> None:
    """Every port refuses: unreachable (ECP does not answer). ECP answers, the profiler port
    refuses: refused (no profiled app launched yet)."""
    dead = CaptureConfig(
        host="127.0.0.1",
        out=tmp_path,
        profiler_port=free_port(),
        ecp_port=free_port(),
        console_port=free_port(),
        poll_interval=0.05,
        ecp_timeout=1.0,
    )
    seen = Seen()
    capture = DeviceCapture(dead, observer=seen)
    task = asyncio.ensure_future(capture.run())
    await until(lambda: capture.status.state == "unreachable", 5)
    shown = screen(capture.status)
    capture.request_stop()
    await asyncio.wait_for(task, 5)
    assert "unreachable" in state_line(shown) and "ECP" in state_line(shown)
    assert "\n".join(seen.lines).count("unreachable") == 1
    attempts: list[tuple] = []

    async def connect(*args, **kw):
        attempts.append(args)
        return await ProfilerStream.open(*args, **kw)

    async with SimulatedDevice(sim(auto_launch=False)) as dev:
        recorder = Recorder()
        capture = DeviceCapture(cap_config(dev, tmp_path), observer=recorder, connect=connect)
        task = asyncio.ensure_future(capture.run())
        await until(lambda: capture.status.state == "refused", 5)
        polled = len(attempts)
        await until(lambda: len(attempts) >= polled + 3, 5)  # three more refused polls
        assert capture.status.state == "refused"
        assert recorder.states[recorder.states.index("refused") :] == ["refused"]  # no flips
        capture.request_stop()
        await asyncio.wait_for(task, 5)


# -- the daemon: metrics, /healthz, names -------------------------------------------------------


def daemon_config(out: Path, devices: list[dict]):
    return build_config(
        {
            "capture": {"out": str(out), "chunk_seconds": 1.0},
            "devices": devices,
            "sentry": {"dsn": "", "environment": "test"},
            "metrics": {"listen": "127.0.0.1:0"},
        },
        env={},
    )


async def scrape(daemon, path: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=2.0) as client:
        return await client.get(f"http://127.0.0.1:{daemon.metrics.port}{path}")


async def test_daemon_every_device_unreachable_is_degraded_and_named_so(tmp_path: Path) -> None:
    from daemon_helpers import Running

    dead = {
        "host": "127.0.0.1",
        "name": "attic",
        "profiler_port": free_port(),
        "ecp_port": free_port(),
        "console_port": free_port(),
    }
    async with Running(daemon_config(tmp_path / "out", [dead])) as run:
        daemon = run.daemon
        await until(lambda: [s.state for s in daemon.slots.values()] == ["unreachable"], 5)
        metrics = (await scrape(daemon, "/metrics")).text
        health = await scrape(daemon, "/healthz")
        assert await run.finish() == 0
    assert 'rokuprof_device_state{device="attic",state="unreachable"} 1' in metrics  # its name
    assert 'rokuprof_device_state{device="attic",state="refused"} 0' in metrics
    assert health.status_code == 503
    assert health.text.startswith("every device is unreachable:\nattic (127.0.0.1): ")


async def test_daemon_names_a_device_by_its_config_name_and_tells_refused_from_waiting(
    tmp_path: Path,
) -> None:
    from daemon_helpers import Running

    async with SimulatedDevice(sim(serial="YN00DEN00001", auto_launch=False, runs=2)) as dev:
        entry = {
            "host": "127.0.0.1",
            "name": "den",
            "profiler_port": dev.profiler_port,
            "ecp_port": dev.ecp_port,
            "console_port": dev.console_port,
        }
        out = tmp_path / "out"
        async with Running(daemon_config(out, [entry])) as run:
            daemon = run.daemon
            await until(lambda: daemon.slots, 5)
            [slot] = daemon.slots.values()
            known = lambda: slot.status is not None and slot.status.device_name  # noqa: E731
            await until(lambda: slot.state == "refused" and known(), 5)
            idle = (await scrape(daemon, "/metrics")).text
            idle_health = await scrape(daemon, "/healthz")
            await dev.launch()
            await until(lambda: slot.counters.sessions["complete"] == 1, 10)
            done = (await scrape(daemon, "/metrics")).text
            assert await run.finish() == 0
    assert idle_health.status_code == 200
    # the config's name names it (directory, labels); the serial is in session.json
    assert 'rokuprof_device_state{device="den",state="refused"} 1' in idle
    assert 'rokuprof_device_info{device="den",name="den",host="127.0.0.1"' in idle
    assert "rokuprof_device_last_data_age_seconds{" not in idle  # no byte yet
    assert 'rokuprof_sessions_total{device="den",status="complete"} 1' in done
    assert 'rokuprof_device_last_data_age_seconds{device="den"}' in done
    assert 'device="YN00DEN00001"' not in done
    assert [p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")] == ["den"]
    [session] = (out / "den").iterdir()
    assert json.loads((session / "session.json").read_text())["device"]["serial"] == "YN00DEN00001"


async def test_daemon_records_a_sigterm_as_sigterm(tmp_path: Path) -> None:
    """``rokuprof daemon`` stopped by SIGTERM mid-run: the log and session.json say SIGTERM."""

    from daemon_helpers import reap, record, sessions, start_daemon, stop_daemon, write_config_file

    out, config, log = tmp_path / "out", tmp_path / "rokuprof.toml", tmp_path / "daemon.log"
    async with SimulatedDevice(sim(serial="YN00TERM0001", run_seconds=60, speed=1.0)) as dev:
        write_config_file(config, out, [dev], "", chunk_seconds=1)
        proc = await start_daemon(config, log)
        try:
            await until(lambda: dev.runs and dev.runs[0].bytes_sent > 3000, 20)
            await stop_daemon(proc, log)
        finally:
            await reap(proc)
        await dev.home()
    [session] = sessions(out)
    assert record(session)["status"] == "interrupted"
    assert record(session)["end_reason"].startswith("stopped by SIGTERM")
    text = log.read_text()
    assert "received SIGTERM" in text and "stopping (stopped by SIGTERM)" in text
    assert "YN00TERM0001: capture ended: stopped by SIGTERM" in text
    assert "by the user" not in text
