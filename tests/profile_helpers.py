"""``rokuprof profile`` as a process against a simulated device, for the tests that sideload
an app as a user does."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from rokuprof.simulator import DeviceConfig, SimulatedDevice

ROOT = Path(__file__).resolve().parent.parent
PASSWORD_ENV = "ROKU_DEV_PASSWORD"


def device(**overrides) -> DeviceConfig:
    return DeviceConfig(
        host="127.0.0.1", auto_launch=False, run_seconds=3600.0, runs=None, seed=7, **overrides
    )


async def profile(
    dev: SimulatedDevice,
    tmp: Path,
    *extra: str,
    password: str | None = None,
    timeout: float = 120,
    hosts: tuple[str, ...] = ("127.0.0.1",),
) -> tuple[int, str, str]:
    """Run ``rokuprof profile`` against ``dev`` (and, with ``hosts``, the devices listening on
    the same ports at those addresses); (status, stdout, stderr). Past ``timeout`` the process
    is killed and the test fails."""
    env = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    env[PASSWORD_ENV] = dev.password if password is None else password
    env["COLUMNS"] = "200"
    env["PYTHONPATH"] = str(ROOT)  # this checkout's rokuprof, wherever the process runs
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rokuprof",
        "profile",
        *extra,
        *(arg for host in hosts for arg in ("--device", host)),
        "--installer-port",
        str(dev.installer_port),
        "--ecp-port",
        str(dev.ecp_port),
        "--profiler-port",
        str(dev.profiler_port),
        "--console-port",
        str(dev.console_port),
        "--view",
        "plain",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=tmp,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"rokuprof profile took more than {timeout:g} s")
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
