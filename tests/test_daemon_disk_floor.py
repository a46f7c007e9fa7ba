"""Proof: retention and the free-space floor share one accounting, the file system's blocks, on a
real tmpfs of many small files (where blocks and file lengths differ fourfold and more). The
daemon deletes the oldest finished sessions to keep ``min_free_bytes`` free and the devices keep
capturing; when nothing deletable is left it says so once (log, ``/metrics``, ``/healthz``) and
capture resumes by itself once space returns. Needs root to mount the tmpfs; skipped otherwise."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path

import httpx
import pytest
from daemon_helpers import Running, daemon_config, record, sessions, sim
from disk_helpers import fill, mounted_small_disk
from scripted_clock import ScriptedClock
from waiting import until

from rokuprof.capture.limits import free_bytes
from rokuprof.daemon.disk import DiskKeeper
from rokuprof.simulator import SimulatedDevice
from rokuprof.store.retention import RetentionPolicy

MIB = 1024**2
FLOOR = 4 * MIB
OLD_SESSIONS = 250  # four small files each: ~1.5 kB of data in 16 kB of blocks


@pytest.fixture
def disk(tmp_path: Path):
    with mounted_small_disk(tmp_path / "disk", "16m") as disk:
        yield disk


def old_sessions(out: Path, count: int) -> list[Path]:
    """Finished sessions of an earlier capture: small files, as a long-running daemon leaves."""
    made = []
    for i in range(count):
        session = out / "OLDDEV" / f"20200101T{i // 60:02d}{i % 60:02d}00Z-{i:08x}"
        for sub in ("chunks", "delivered"):
            (session / sub).mkdir(parents=True)
        (session / "capture.bsprof").write_bytes(b"\0" * 600)
        (session / "chunks" / "000001.json").write_text(json.dumps({"chunk_id": f"{i:032x}"}))
        (session / "delivered" / "000001.json").write_text('{"status": 200}\n')
        (session / "session.json").write_text(json.dumps({"status": "complete"}))
        made.append(session)
    return made


def lengths_and_blocks(paths: list[Path]) -> tuple[int, int]:
    files = [f for p in paths for f in p.rglob("*") if f.is_file()]
    return sum(f.stat().st_size for f in files), sum(f.stat().st_blocks * 512 for f in files)


def take_free_down_to(disk: Path, free: int) -> Path:
    """Another program's file that leaves ``free`` bytes free."""
    filler = disk / "other-program.bin"
    with filler.open("ab") as f:
        while free_bytes(disk) > free + 64 * 1024:
            f.write(b"\1" * 64 * 1024)
            f.flush()
    return filler


def completed(slots) -> int:
    return sum(s.counters.sessions["complete"] + s.counters.sessions["truncated"] for s in slots)


async def scrape(run: Running, what: str) -> str:
    port = run.daemon.metrics.port
    async with httpx.AsyncClient(timeout=5.0) as client:
        return (await client.get(f"http://127.0.0.1:{port}/{what}")).text


@pytest.mark.slow
async def test_the_floor_is_kept_by_deleting_and_capture_resumes_by_itself(
    disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    out = disk / "out"
    old = old_sessions(out, OLD_SESSIONS)
    lengths, blocks = lengths_and_blocks(old)
    assert blocks > 4 * lengths  # what a file-length count misses
    filler = take_free_down_to(disk, FLOOR + MIB // 2)  # the floor is half a MiB away
    async with (
        SimulatedDevice(sim("FLOOR1", runs=None, run_seconds=1.0, run_gap=0.1)) as one,
        SimulatedDevice(sim("FLOOR2", runs=None, run_seconds=1.0, run_gap=0.1, seed=5)) as two,
    ):
        capture = {"out": str(out), "chunk_seconds": 0.5, "min_free_bytes": FLOOR}
        retention = {"max_bytes": 12 * MIB}
        cfg = daemon_config(out, [one, two], None, capture=capture, retention=retention)
        async with Running(cfg, space_check_seconds=0.2) as run:
            await run.ready()
            slots = list(run.daemon.slots.values())
            # 1. The floor is kept by deleting the oldest sessions; capture goes on. At
            # 0e83a1a nothing was deleted (the file lengths are far under max_bytes) and
            # capture stopped for good once free space fell under the floor.
            before = completed(slots)
            await until(lambda: sum(not s.exists() for s in old) >= 20, 60, step=0.1)
            await until(lambda: completed(slots) >= before + 10, 60, step=0.1)  # capture goes on
            gone = [not session.exists() for session in old]
            assert sum(gone) >= 20 and gone == sorted(gone, reverse=True)  # the oldest first
            assert free_bytes(disk) >= FLOOR
            assert "rokuprof_disk_waiting 0" in await scrape(run, "metrics")

            # 2. Another program takes the rest: nothing deletable is left; said once.
            def nothing_left() -> bool:
                fill(disk)
                return run.daemon.disk.waiting

            await until(nothing_left, 30, step=0.3)
            metrics = await scrape(run, "metrics")
            assert "rokuprof_disk_waiting 1" in metrics
            health = await scrape(run, "healthz")
            assert "capture waits for space since" in health and "min_free_bytes" in health
            assert "capture waits for disk space" in run.daemon.status_line()
            stopped = completed(slots)
            figures = run.daemon.disk.figures
            walks = figures.passes
            await until(lambda: figures.passes > walks, 30)  # another walk, in vain
            assert caplog.text.count("capture waits until space returns") == 1
            assert run.daemon.disk.waiting

            # 3. Space returns: capture resumes by itself.
            filler.unlink()
            (disk / "filler").unlink()
            await until(lambda: completed(slots) >= stopped + 3, 30)
            await until(lambda: not run.daemon.disk.waiting, 10)
            assert "rokuprof_disk_waiting 0" in await scrape(run, "metrics")
            assert "capture resumes" in caplog.text
            assert await run.finish() == 0
    assert all(record(s)["status"] != "streaming" for s in sessions(out))
    assert not list(out.rglob("*.tmp"))
    assert os.statvfs(disk).f_bavail > 0


async def test_a_floor_that_cannot_be_kept_is_said_once_and_costs_no_busy_loop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nothing deletable (one session being captured), free space under the floor: the keeper
    looks at the free space often but walks the output at most every ``short_recheck``, says
    why once, and says so again once space is back."""
    caplog.set_level(logging.INFO)
    out = tmp_path / "out"
    live = out / "DEV" / "20260101T000000Z-00000001"
    (live / "chunks").mkdir(parents=True)
    (live / "session.json").write_text(json.dumps({"status": "streaming"}))
    free = {"bytes": FLOOR - 1}
    looks: list[float] = []
    clock = ScriptedClock()

    def free_space(path: Path) -> int:
        looks.append(clock())
        return free["bytes"]

    policy = RetentionPolicy(max_bytes=100 * MIB, min_free_bytes=FLOOR)
    keeper = DiskKeeper(
        out, policy, free_space=free_space, check_seconds=0.02, short_recheck=0.5, clock=clock
    )
    task = asyncio.create_task(keeper.run())
    try:
        await until(lambda: keeper.waiting, 5)
        assert "nothing is left to delete (1 session(s) being captured" in keeper.note()
        passes = keeper.figures.passes
        # looks, not walks: ten looks at each step of the keeper's clock, and a walk only once
        # short_recheck (0.5 s) has passed since the last one (steps exact in binary)
        for step, walks in ((0.0, 0), (0.25, 0), (0.25, 1), (0.375, 1), (0.125, 2)):
            clock.advance(step)
            seen = len(looks)
            await until(lambda seen=seen: len(looks) >= seen + 10, 5)
            assert keeper.figures.passes - passes == walks, (clock(), keeper.figures.passes)
        free["bytes"] = FLOOR + 1
        await until(lambda: not keeper.waiting, 5)
    finally:
        task.cancel()
    assert caplog.text.count("capture waits until space returns") == 1
    assert caplog.text.count("capture resumes") == 1
    assert live.exists()
