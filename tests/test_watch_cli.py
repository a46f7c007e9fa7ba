"""``rokuprof watch`` as a real process against the simulated device on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import socket
from pathlib import Path

from typer.testing import CliRunner
from waiting import until
from watch_helpers import finish, watching

from rokuprof.cli import app, checks
from rokuprof.sentry import validate_chunk
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.config import Fault


async def test_watch_runs_1_end_to_end(tmp_path: Path) -> None:
    cfg = DeviceConfig(run_seconds=2.0, runs=1, auto_launch=False, seed=5, speed=2.0)
    async with SimulatedDevice(cfg) as dev:
        async with watching(dev, tmp_path, "--runs", "1", "--chunk-seconds", "1") as proc:
            # the app is launched while watch is already polling: once it has asked ECP who the
            # device is (a slow start under load is not the connect delay measured below)
            await until(lambda: dev.ecp_requests, 30)
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
    assert "streaming into" in out  # stdout is a pipe: plain log lines
    assert delay is not None and delay < 1.0


async def test_ctrl_c_marks_the_session_interrupted_and_exits_0(tmp_path: Path) -> None:
    cfg = DeviceConfig(run_seconds=30.0, runs=1, seed=6, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev:
        async with watching(dev, tmp_path, "--chunk-seconds", "0.3") as proc:
            await until(lambda: dev.runs and dev.runs[0].bytes_sent > 3000, 15)
            chunks = tmp_path / "YN00AA000001"
            await until(lambda: len(list(chunks.glob("*/chunks/*.json"))) >= 2, 15)  # two written
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
    assert "(stopped by Ctrl-C)" in out and "capture ended: stopped by Ctrl-C" in out
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


async def test_session_json_carries_the_chunks_release_and_environment(tmp_path: Path) -> None:
    """session.json says what every chunk says: `<app>@<version>` and `production`."""
    cfg = DeviceConfig(run_seconds=0.6, runs=1, seed=8, speed=4.0)
    async with (
        SimulatedDevice(cfg) as dev,
        watching(dev, tmp_path, "--runs", "1", "--chunk-seconds", "0.2", "-q") as proc,
    ):
        code, _, err = await finish(proc)
    assert code == 0, err
    [session] = list((tmp_path / "YN00AA000001").iterdir())
    record = json.loads((session / "session.json").read_text("utf-8"))
    chunks = [json.loads(p.read_bytes()) for p in sorted((session / "chunks").glob("*.json"))]
    assert chunks and record["release"] and record["environment"] == "production"
    app = record["app"]
    assert record["release"] == f"{app['name']}@{app['version']}"
    assert {(c["release"], c["environment"]) for c in chunks} == {
        (record["release"], record["environment"])
    }


async def test_a_cut_run_exits_3_and_json_reports_it(tmp_path: Path) -> None:
    """A run the device resets mid-stream ends `truncated`: exit 3, and `--json` is one
    document naming the session."""
    cfg = DeviceConfig(
        run_seconds=2.0, runs=1, seed=9, speed=4.0, faults=(Fault("reset", after_bytes=2000),)
    )
    async with SimulatedDevice(cfg) as dev, watching(dev, tmp_path, "--runs", "1", "-j") as proc:
        code, out, err = await finish(proc)
    assert code == 3, err
    report = json.loads(out)
    [session] = report["sessions"]
    assert session["status"] == "truncated" and Path(session["path"]).is_dir()
    assert "Traceback" not in err


def test_bad_host_and_output_fail_at_once_with_one_line(tmp_path: Path) -> None:
    """Before waiting for a run: a host with a port, an empty host, an output that is a file,
    a host that does not resolve (resolver injected: no DNS query leaves this machine)."""
    runner = CliRunner()
    (tmp_path / "file").write_text("")
    cases = [
        (["watch", "127.0.0.1:42411"], "is not a host name: give '127.0.0.1' alone"),
        (["watch", ""], "'' is not a host name"),
        (["watch", "127.0.0.1", "-o", str(tmp_path / "file")], "exists and is not a directory"),
        (["watch", "127.0.0.1", "-o", str(tmp_path / "file" / "sub")], "cannot write to"),
        (["watch", "no-such-roku.invalid"], "cannot resolve host 'no-such-roku.invalid'"),
    ]

    def resolver(host: str) -> object:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    original, checks.resolve = checks.resolve, resolver
    try:
        for args, message in cases:
            result = runner.invoke(app, [*args, "--duration", "0.5"])
            assert result.exit_code == 2, (args, result.output)
            (line,) = result.stderr.splitlines()
            assert line.startswith("error: ") and message in line, line
    finally:
        checks.resolve = original


async def test_sigterm_is_recorded_as_sigterm(tmp_path: Path) -> None:
    """A SIGTERM mid-run: session.json, the summary and the log say SIGTERM (not the user)."""
    cfg = DeviceConfig(run_seconds=30.0, runs=1, seed=6, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev:
        async with watching(dev, tmp_path) as proc:
            await until(lambda: dev.runs and dev.runs[0].bytes_sent > 3000, 15)
            proc.send_signal(signal.SIGTERM)
            code, out, err = await finish(proc, 10)
        await dev.home()
    assert code == 0, err
    [session] = list((tmp_path / "YN00AA000001").iterdir())
    record = json.loads((session / "session.json").read_text("utf-8"))
    assert record["status"] == "interrupted"
    assert record["end_reason"].startswith("stopped by SIGTERM")
    assert "1 run(s) captured from YN00AA000001 (stopped by SIGTERM)" in out
    assert "capture ended: stopped by SIGTERM" in out
