"""``rokuprof watch`` given an IPv6 literal (``::1`` and ``[::1]``), as a real process against
the simulated device listening on ::1; and a malformed bracket is one usage line."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from loopback import needs_ipv6
from typer.testing import CliRunner
from watch_helpers import ROOT, finish

from rokuprof.cli import app
from rokuprof.simulator import DeviceConfig, SimulatedDevice


@needs_ipv6
@pytest.mark.parametrize("spelling", ["::1", "[::1]"])
async def test_watch_captures_a_run_from_an_ipv6_literal(tmp_path: Path, spelling: str) -> None:
    cfg = DeviceConfig(host="::1", run_seconds=1.0, runs=1, seed=5, speed=4.0)
    async with SimulatedDevice(cfg) as dev:
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "rokuprof",
            "watch",
            spelling,
            "--out",
            str(tmp_path),
            "--no-ecp",
            "--profiler-port",
            str(dev.profiler_port),
            "--console-port",
            str(dev.console_port),
            "--runs",
            "1",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        code, out, err = await finish(proc)
        sent = dev.sent_bytes(0)
    assert code == 0, err
    assert "Traceback" not in err
    [device] = list(tmp_path.iterdir())
    assert device.name == "_1"  # not "1": an IPv6 host keeps its leading '_'
    [session] = list(device.iterdir())
    assert (session / "capture.bsprof").read_bytes() == sent
    assert json.loads((session / "session.json").read_text("utf-8"))["status"] == "complete"
    assert "polling [::1]:" in out and "captured from ::1 " in out
    assert " _1" not in out  # the file name is not how the log names the device


@pytest.mark.parametrize("host", ["[::1", "::1]", "[127.0.0.1]", "[[::1]]"])
def test_a_malformed_ipv6_literal_is_one_usage_line(host: str) -> None:
    result = CliRunner().invoke(app, ["watch", host, "--duration", "0.5"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and repr(host) in line
