"""``rokuprof watch`` as a real process against the simulated device on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from typer.testing import CliRunner

from rokuprof.cli import app
from rokuprof.sentry import validate_chunk
from rokuprof.simulator import DeviceConfig, SimulatedDevice

ROOT = Path(__file__).resolve().parents[1]


@contextlib.asynccontextmanager
async def watching(
    dev: SimulatedDevice, out: Path, *extra: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``rokuprof watch`` as a subprocess, killed and reaped however the test ends."""
    proc = await start_watch(dev, out, *extra)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.communicate()


async def start_watch(dev: SimulatedDevice, out: Path, *extra: str) -> asyncio.subprocess.Process:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rokuprof",
        "watch",
        "127.0.0.1",
        "--out",
        str(out),
        "--profiler-port",
        str(dev.profiler_port),
        "--ecp-port",
        str(dev.ecp_port),
        "--console-port",
        str(dev.console_port),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def finish(proc: asyncio.subprocess.Process, timeout: float = 20) -> tuple[int, str, str]:
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.communicate()
        raise
    return proc.returncode, out.decode(), err.decode()


async def test_watch_runs_1_end_to_end(tmp_path: Path) -> None:
    cfg = DeviceConfig(run_seconds=2.0, runs=1, auto_launch=False, seed=5, speed=2.0)
    async with SimulatedDevice(cfg) as dev:
        async with watching(dev, tmp_path, "--runs", "1", "--chunk-seconds", "1") as proc:
            await asyncio.sleep(0.3)  # the app is launched while watch is already polling
            await dev.launch()
            code, out, err = await finish(proc)
        sent = dev.sent_bytes(0)
        delay = dev.runs[0].connect_delay
    assert code == 0, err
    [session] = list((tmp_path / "YN00AA000001").iterdir())
    assert (session / "capture.bsprof").read_bytes() == sent
    record = json.loads((session / "session.json").read_text("utf-8"))
    assert record["status"] == "complete"
    chunks = sorted((session / "chunks").glob("*.json"))
    assert chunks and all(validate_chunk(json.loads(p.read_bytes())) == [] for p in chunks)
    assert "1 run(s) captured from YN00AA000001 (--runs 1 reached)" in out
    assert "complete" in out and str(session) in out
    assert "waiting for an app run" in out  # stdout is a pipe: plain log lines
    assert delay is not None and delay < 1.0


async def test_ctrl_c_marks_the_session_interrupted_and_exits_0(tmp_path: Path) -> None:
    cfg = DeviceConfig(run_seconds=30.0, runs=1, seed=6, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev:
        async with watching(dev, tmp_path, "--chunk-seconds", "0.3") as proc:
            async with asyncio.timeout(15):
                while not (dev.runs and dev.runs[0].bytes_sent > 3000):
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.7)  # a couple of chunk intervals
            proc.send_signal(signal.SIGINT)
            code, out, err = await finish(proc, 10)
        await dev.home()
        sent = dev.sent_bytes(0)
    assert code == 0, err
    [session] = list((tmp_path / "YN00AA000001").iterdir())
    record = json.loads((session / "session.json").read_text("utf-8"))
    assert record["status"] == "interrupted"
    data = (session / "capture.bsprof").read_bytes()
    assert len(data) > 3000 and sent.startswith(data)
    assert (
        record["chunks"] >= 1 and len(list((session / "chunks").glob("*.json"))) == record["chunks"]
    )
    assert "interrupted (Ctrl-C)" in out
    assert "Traceback" not in err


async def test_quiet_prints_only_the_summary(tmp_path: Path) -> None:
    cfg = DeviceConfig(run_seconds=0.5, runs=1, seed=7, speed=4.0)
    async with (
        SimulatedDevice(cfg) as dev,
        watching(dev, tmp_path, "--runs", "1", "--quiet") as proc,
    ):
        code, out, err = await finish(proc)
    assert code == 0, err
    assert out.splitlines()[0].startswith("1 run(s) captured")
    assert "waiting" not in out


def test_bad_options_are_usage_errors() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["watch", "127.0.0.1", "--chunk-seconds", "61"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["watch", "127.0.0.1", "--view", "fancy"])
    assert result.exit_code == 2
