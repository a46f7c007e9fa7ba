"""``rokuprof watch`` as a real process against a simulated device (the ``test_watch_*``
modules and test_export_on_capture): started, finished, killed and reaped however a test ends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from rokuprof.simulator import SimulatedDevice

ROOT = Path(__file__).resolve().parents[1]


@contextlib.asynccontextmanager
async def watching(
    dev: SimulatedDevice, out: Path, *extra: str, bootstrap: str | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``rokuprof watch`` (``bootstrap``: a script that runs the command line) as a process,
    killed and reaped however the test ends."""
    start = ["-c", bootstrap] if bootstrap else ["-m", "rokuprof"]
    ports = ["--profiler-port", str(dev.profiler_port), "--ecp-port", str(dev.ecp_port)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *start,
        "watch",
        "127.0.0.1",
        "--out",
        str(out),
        *ports,
        "--console-port",
        str(dev.console_port),
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200"),
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.communicate()


async def finish(proc: asyncio.subprocess.Process, timeout: float = 20) -> tuple[int, str, str]:
    """Its exit status, stdout and stderr once it ends (killed if it has not after
    ``timeout`` seconds)."""
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.communicate()
        raise
    return proc.returncode, out.decode(), err.decode()
