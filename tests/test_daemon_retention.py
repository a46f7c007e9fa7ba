"""Retention inside the daemon: old sessions go, the session being captured never does."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from daemon_helpers import Running, daemon_config, sessions, sim
from waiting import until

from rokuprof.simulator import SimulatedDevice
from rokuprof.store.files import write_atomic


def status_of(session: Path) -> str | None:
    try:
        return json.loads((session / "session.json").read_text())["status"]
    except FileNotFoundError:
        return None


async def test_retention_spares_the_live_session(tmp_path: Path) -> None:
    out = tmp_path / "out"
    old = out / "OLD1" / "20200101T000000Z-00000000"
    write_atomic(old / "session.json", json.dumps({"status": "complete"}))
    write_atomic(old / "capture.bsprof", b"x" * 1000)
    ancient = time.time() - 90 * 86400
    for f in (old / "session.json", old / "capture.bsprof"):
        os.utime(f, (ancient, ancient))
    async with SimulatedDevice(sim("RET01", run_seconds=60.0)) as dev:
        cfg = daemon_config(out, [dev], None, retention={"max_age_days": 30, "max_bytes": "1"})
        async with Running(cfg, retention_interval=0.05) as run:
            await until(lambda: not old.exists(), 5)  # too old and over the size budget
            await until(lambda: len(sessions(out)) == 1, 5)
            (live,) = sessions(out)
            figures = run.daemon.disk.figures
            passes = figures.passes
            await until(lambda: figures.passes >= passes + 5, 10)  # five passes over it
            assert status_of(live) == "streaming"  # over max_bytes, but being captured: kept
            assert await dev.home()  # the run ends
            await until(lambda: not live.exists(), 5)  # finished: now it may go
            assert await run.finish() == 0
