"""Proof: `kill -9` the daemon at random moments, restart it, stop it with SIGTERM. Afterwards no
partial file, no session left `streaming`, every archive a prefix of what its device sent, and
every chunk on disk accepted by the fake Sentry (duplicates only of the same chunk_id)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from pathlib import Path

import pytest
from daemon_helpers import chunk_files, record, sessions, sim, until, write_config_file
from fake_sentry import FakeSentry

from rokuprof.simulator import SimulatedDevice


async def start_daemon(config: Path, log: Path) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.pop("ROKUPROF_SENTRY_DSN", None)
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


@pytest.mark.slow
async def test_kill_9_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(99)
    out = tmp_path / "out"
    config = tmp_path / "rokuprof.toml"
    log = tmp_path / "daemon.log"
    async with FakeSentry() as sentry:
        sims = [
            SimulatedDevice(sim(f"CRASH{i}", seed=20 + i, runs=None, run_seconds=3.0))
            for i in range(2)
        ]
        for dev in sims:
            await dev.start()
        proc = None
        try:
            write_config_file(config, out, sims, sentry.dsn, chunk_seconds=1)
            for _ in range(3):
                proc = await start_daemon(config, log)
                await asyncio.sleep(rng.uniform(2.0, 3.5))
                proc.kill()  # SIGKILL: no chance to clean up
                assert await asyncio.wait_for(proc.wait(), 10) == -signal.SIGKILL
            proc = await start_daemon(config, log)
            await until(lambda: len(sentry.accepted()) >= 8, 20)
            await asyncio.sleep(1.5)
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 40) == 0, log.read_text()[-3000:]
            sent = {
                dev.config.serial: [dev.sent_bytes(i) for i in range(len(dev.runs))] for dev in sims
            }
        finally:
            if proc is not None and proc.returncode is None:  # a failed wait: never leave it
                proc.kill()
                await proc.wait()
            for dev in sims:
                await dev.stop()

    text = log.read_text()
    assert "closed as interrupted" in text  # the restarts repaired crashed sessions
    assert not list(out.rglob("*.tmp"))
    found = sessions(out)
    assert len(found) >= 4
    for session in found:
        rec = record(session)
        assert rec["status"] in ("complete", "truncated", "interrupted", "failed"), session
        archive = (session / "capture.bsprof").read_bytes()
        runs = sent[session.parent.name]
        assert any(run.startswith(archive) for run in runs), session
    on_disk = set()
    for path in chunk_files(out):
        on_disk.add(json.loads(path.read_bytes())["chunk_id"])  # every chunk file whole
    assert len(on_disk) >= 8 and set(sentry.chunk_ids()) == on_disk
    # a duplicate is only ever a re-send of the same chunk
    assert len(sentry.chunk_ids()) - len(on_disk) <= 3
