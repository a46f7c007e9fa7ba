"""The `paused` hint of `rokuprof watch --console-port N` is a command that works as printed:
it names the console port in use, and running it resumes the app's profiler; a log offers no
key (the live view's ``r`` is offered in the live view only, test_live_top)."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sys

from watch_helpers import ROOT, finish, watching

from rokuprof.simulator import DeviceConfig, SimulatedDevice


async def _rokuprof(*args: str) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rokuprof", *args, stdout=asyncio.subprocess.PIPE, env=env
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 20)
    return proc.returncode or 0, out.decode()


async def _line_with(stream: asyncio.StreamReader, pattern: str) -> re.Match[str]:
    async with asyncio.timeout(15):
        while line := (await stream.readline()).decode():
            if found := re.search(pattern, line):
                return found
    raise AssertionError(f"no line matched {pattern!r}")


async def test_the_resume_hint_names_the_console_port_and_works(tmp_path) -> None:
    cfg = DeviceConfig(run_seconds=60.0, runs=1, seed=6, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev, watching(dev, tmp_path) as proc:
        assert dev.console_port != 8080
        assert proc.stdout is not None
        await _line_with(proc.stdout, r"streaming into")
        port = str(dev.console_port)
        code, reply = await _rokuprof("control", "127.0.0.1", "pause", "--console-port", port)
        assert code == 0 and "paused" in reply
        hint = await _line_with(proc.stdout, r"resume with `([^`]+)`")
        assert "key" not in hint.string  # a log reads no keys: the command is the only way
        words = shlex.split(hint.group(1))
        assert words == ["rokuprof", "control", "127.0.0.1", "resume", "--console-port", port]
        code, reply = await _rokuprof(*words[1:])  # as printed
        assert code == 0 and "resumed" in reply
        await _line_with(proc.stdout, r"resumed: streaming again")
        proc.terminate()
        await finish(proc)
        await dev.home()
