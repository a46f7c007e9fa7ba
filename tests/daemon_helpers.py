"""Helpers for daemon tests: simulated devices, a config pointing at them, a stoppable daemon,
a finished session and one made to look crashed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from waiting import until

from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.daemon.config import build_config
from rokuprof.daemon.daemon import Daemon, DaemonOptions
from rokuprof.daemon.notify import Notifier
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.simulator import DeviceConfig, SimulatedDevice

FAST_CAPTURE = {
    "delta_seconds": 0.2,
    "poll_interval": 0.05,
    "connect_timeout": 1.0,
    "ecp_timeout": 1.0,
    "idle_timeout": 3.0,
}
FAST_UPLOADS = {"timeout": 1.0, "backoff_base": 0.05, "backoff_cap": 0.3, "rescan_seconds": 0.5}


def sim(serial: str, **kw) -> DeviceConfig:
    base = dict(
        serial=serial,
        name=f"Sim {serial}",
        run_seconds=1.5,
        runs=1,
        run_gap=0.2,
        seed=3,
        burst_ticks=(2, 10),
    )
    return DeviceConfig(**(base | kw))


def daemon_config(out: Path, devices: list[SimulatedDevice], dsn: str | None, **sections):
    data = {
        "capture": {"out": str(out), "chunk_seconds": 1.0},
        "devices": [
            {
                "host": "127.0.0.1",
                "name": dev.config.serial,
                "profiler_port": dev.profiler_port,
                "ecp_port": dev.ecp_port,
                "console_port": dev.console_port,
            }
            for dev in devices
        ],
        "sentry": {"dsn": dsn or "", "environment": "test"},
        "metrics": {"listen": "127.0.0.1:0"},
    }
    data.update(sections)
    return build_config(data, env={})


class ReadyNotifier(Notifier):
    """A notifier with no socket that remembers when the daemon said ``READY=1``."""

    def __init__(self) -> None:
        super().__init__({})
        self.is_ready = asyncio.Event()

    def ready(self, status: str = "") -> bool:
        self.is_ready.set()
        return super().ready(status)


class Running:
    """A daemon running as a task, stopped by an event instead of a signal."""

    def __init__(self, config, notifier: Notifier | None = None, **options) -> None:
        self.stop = asyncio.Event()
        opts = DaemonOptions(
            capture=FAST_CAPTURE | options.pop("capture", {}),
            uploader=FAST_UPLOADS | options.pop("uploader", {}),
            **({"stop_seconds": 5.0, "drain_seconds": 3.0, "status_interval": 0.2} | options),
        )
        self.daemon = Daemon(
            config,
            shutdown_trigger=self.stop.wait,
            notifier=notifier or ReadyNotifier(),
            options=opts,
        )
        self.task: asyncio.Task | None = None

    async def __aenter__(self) -> Running:
        self.task = asyncio.create_task(self.daemon.run())
        return self

    async def ready(self, timeout: float = 15.0) -> None:
        """Until the daemon is ready: the output repaired (recovery done), every part started."""
        notifier = self.daemon.notifier
        assert isinstance(notifier, ReadyNotifier), "ready() needs Running's own notifier"
        await asyncio.wait_for(notifier.is_ready.wait(), timeout)

    async def finish(self, timeout: float = 15.0) -> int:
        self.stop.set()
        return await asyncio.wait_for(self.task, timeout)

    async def __aexit__(self, *exc) -> None:
        if self.task is not None and not self.task.done():
            self.stop.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.task, 15)


def write_config_file(
    path: Path,
    out: Path,
    devices: list[SimulatedDevice],
    dsn: str,
    *,
    chunk_seconds: float = 60,
    metrics_listen: str = "",
    environment: str = "test",
    max_in_flight: int | None = None,
) -> None:
    """A daemon TOML config file capturing ``devices`` (for tests and benchmarks that run the
    daemon as a subprocess)."""
    lines = [
        "[capture]",
        f'out = "{out}"',
        f"chunk_seconds = {chunk_seconds:g}",
        "[sentry]",
        f'dsn = "{dsn}"',
        f'environment = "{environment}"',
        *([f"max_in_flight = {max_in_flight}"] if max_in_flight is not None else []),
        "[metrics]",
        f'listen = "{metrics_listen}"',
    ]
    for dev in devices:
        lines += [
            "[[devices]]",
            'host = "127.0.0.1"',
            f'name = "{dev.config.serial}"',
            f"profiler_port = {dev.profiler_port}",
            f"ecp_port = {dev.ecp_port}",
            f"console_port = {dev.console_port}",
        ]
    path.write_text("\n".join(lines) + "\n")


def sessions(out: Path) -> list[Path]:
    return sorted(p.parent for p in out.glob("*/*/session.json"))


def record(session: Path) -> dict:
    return json.loads((session / "session.json").read_text())


def chunk_files(out: Path) -> list[Path]:
    return sorted(out.glob("*/*/chunks/*.json"))


def chunk_ids(out: Path) -> set[str]:
    return {json.loads(p.read_bytes())["chunk_id"] for p in chunk_files(out)}


def cap_config(dev: SimulatedDevice, out: Path, **kw) -> CaptureConfig:
    """A capture config for one simulated device, quick to poll; ``chunk_seconds`` (default 1)
    becomes the chunk settings' window, every other keyword a field of the config."""
    base = dict(
        host="127.0.0.1",
        out=out,
        profiler_port=dev.profiler_port,
        ecp_port=dev.ecp_port,
        console_port=dev.console_port,
        delta_seconds=0.2,
        poll_interval=0.1,
        ecp_timeout=2.0,
    )
    window = kw.pop("chunk_seconds", 1.0)
    return CaptureConfig(**(base | kw), chunk_settings=ChunkSettings(chunk_seconds=window))


async def stop_daemon(proc: asyncio.subprocess.Process, log: Path, timeout: float = 20.0) -> None:
    """SIGTERM; the daemon must exit 0 within ``timeout`` (a failure shows its log's tail)."""
    proc.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(proc.wait(), timeout)
    assert code == 0, f"exit status {code}; the log ends:\n{log.read_text()[-3000:]}"


async def reap(proc: asyncio.subprocess.Process | None) -> None:
    """Kill and reap a child process a failed test left running."""
    if proc is not None and proc.returncode is None:
        proc.kill()
        await proc.wait()


async def start_daemon(config: Path, log: Path) -> asyncio.subprocess.Process:
    """``rokuprof daemon --config CONFIG`` as a process (no systemd socket, no DSN from the
    environment), its stderr appended to ``log`` (with Python's fault handler on)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.pop("ROKUPROF_SENTRY_DSN", None)
    env["PYTHONFAULTHANDLER"] = "1"  # a fatal signal leaves its Python stack in the log
    with log.open("ab") as stderr:  # the child keeps its own copy of the descriptor
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "rokuprof",
            "daemon",
            "--config",
            str(config),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=stderr,
            env=env,
        )


def log_size(log: Path) -> int:
    """Where the daemon's log ends now (a later wait reads only what comes after)."""
    return log.stat().st_size if log.exists() else 0


async def until_a_session_starts(log: Path, since: int, timeout: float = 60.0) -> None:
    """Wait until the daemon's log, past byte ``since``, says a session started: the daemon is
    capturing, so a kill from then on lands inside a run however long its start-up took."""
    started = re.compile(rb"session \S+ started")
    await until(lambda: started.search(log.read_bytes()[since:]), timeout, step=0.05)


async def start_simulator(*args: str) -> asyncio.subprocess.Process:
    """``rokuprof simulate ARGS`` as a process, its output piped."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rokuprof",
        "simulate",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )


def crash(session: Path, keep_chunks: int) -> None:
    """Make a finished session look like a kill -9 left it: later chunks never written, the
    record still says streaming."""
    for path in sorted((session / "chunks").glob("*.json"))[keep_chunks:]:
        path.unlink()
    rec = record(session)
    rec.update(status="streaming", end=None, end_reason="", chunk_report={})
    (session / "session.json").write_text(json.dumps(rec))


async def finished_session(tmp_path: Path) -> Path:
    """A session of three chunks or more, captured from a simulated device to its end."""
    async with SimulatedDevice(sim("REC1", run_seconds=4.0, seed=7)) as dev:
        config = cap_config(dev, tmp_path, poll_interval=0.05, runs=1)
        summary = await asyncio.wait_for(DeviceCapture(config).run(), 20)
    [session] = summary.sessions
    assert len(list((session.path / "chunks").glob("*.json"))) >= 3
    return session.path


async def metrics_scrapes(
    port: int, timeout: float = 60.0, interval: float = 0.1
) -> AsyncIterator[str]:
    """Each ``/metrics`` exposition of the daemon listening on ``port``, as soon as it answers
    and then every ``interval`` seconds, until the caller stops asking (at most ``timeout``)."""
    async with httpx.AsyncClient(timeout=5) as client, asyncio.timeout(timeout):
        while True:
            try:
                text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
            except httpx.TransportError:
                await asyncio.sleep(0.1)
                continue
            yield text
            await asyncio.sleep(interval)
