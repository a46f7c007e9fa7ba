"""``rokuprof watch HOST --view plain | head -2``: the reader of the log goes away mid-run.

The run is finished and recorded (``interrupted``, cause ``output closed``), every byte read is
kept, nothing is said (no traceback), and the status is the run's own (0), under pipefail too.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from rokuprof.simulator import DeviceConfig, SimulatedDevice

ROOT = Path(__file__).resolve().parents[1]


async def test_a_closed_log_pipe_ends_the_run_interrupted_and_keeps_its_bytes(
    tmp_path: Path,
) -> None:
    cfg = DeviceConfig(run_seconds=60.0, runs=1, seed=9, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev:
        watch = (
            f"{sys.executable} -m rokuprof watch 127.0.0.1 --out {tmp_path / 'out'}"
            f" --profiler-port {dev.profiler_port} --ecp-port {dev.ecp_port}"
            f" --console-port {dev.console_port} --view plain --chunk-seconds 1 --duration 50"
        )
        proc = await asyncio.create_subprocess_exec(
            "bash", "-c", f"set -o pipefail; {watch} | head -2 >/dev/null",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 40)  # well before --duration
    assert (proc.returncode, err.decode()) == (0, "")
    (record_path,) = (tmp_path / "out").glob("*/*/session.json")
    record = json.loads(record_path.read_text())
    assert record["status"] == "interrupted", record
    assert record["end_reason"].startswith("output closed during the run"), record
    archive = record_path.parent / "capture.bsprof"
    assert record["bytes"] == archive.stat().st_size > 0
