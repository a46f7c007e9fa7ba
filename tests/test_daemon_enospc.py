"""Proof: the disk fills up during a capture (a real, tiny tmpfs). The error is clear, no file is
left partial or corrupt, the session is closed, and capture and uploads resume once there is
space again. Needs root to mount the tmpfs; skipped otherwise."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from pathlib import Path

import pytest
from daemon_helpers import Running, chunk_files, daemon_config, record, sessions, sim
from disk_helpers import fill, mounted_small_disk
from fake_sentry import FakeSentry, Reply
from waiting import until

from rokuprof.simulator import SimulatedDevice


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MiB tmpfs (root only), unmounted afterwards."""
    with mounted_small_disk(tmp_path / "disk") as disk:
        yield disk


@pytest.mark.slow
async def test_disk_full_is_survived(small_disk: Path) -> None:
    out = small_disk / "out"
    async with (
        FakeSentry() as sentry,
        SimulatedDevice(sim("DISK1", runs=None, run_seconds=2.0)) as dev,
    ):
        # The real ENOSPC path: no free-space floor (1 GiB by default) on this 1 MiB disk.
        capture = {"out": str(out), "chunk_seconds": 1.0, "min_free_bytes": 0}
        cfg = daemon_config(out, [dev], sentry.dsn, capture=capture)
        async with Running(cfg, restart_backoff_cap=0.3) as run:
            await until(lambda: len(sentry.accepted()) >= 1, 10)
            (slot,) = run.daemon.slots.values()
            filler = fill(small_disk)
            await until(lambda: "No space left" in slot.counters.last_error, 10)
            before = slot.counters.sessions["complete"]
            filler.unlink()
            await until(lambda: slot.counters.sessions["complete"] > before, 15)
            up = run.daemon.uploader
            await until(lambda: up.pending == 0, 10)
            assert await run.finish() == 0
        runs = [dev.sent_bytes(i) for i in range(len(dev.runs))]

    assert all((s / "session.json").exists() for s in out.glob("*/*"))
    statuses = [record(s)["status"] for s in sessions(out)]
    assert "streaming" not in statuses and "complete" in statuses
    # The full disk held the run (reading paused, writes retried) instead of ending it: no
    # session ended by the write failure, and every complete one has every byte its run sent.
    assert not any(e["kind"] == "capture" for s in sessions(out) for e in record(s)["errors"])
    for session in sessions(out):
        archive = (session / "capture.bsprof").read_bytes()
        assert any(r.startswith(archive) for r in runs)
        if record(session)["status"] == "complete":
            assert archive in runs
    ids = {json.loads(p.read_bytes())["chunk_id"] for p in chunk_files(out)}  # all whole
    assert ids and ids <= set(sentry.chunk_ids())
    assert not list(out.rglob("*.tmp"))


@pytest.mark.slow
async def test_a_chunk_sentry_accepted_on_a_full_disk_is_sent_once(small_disk: Path) -> None:
    """Sentry accepts while the disk is too full for the delivered markers: each chunk reaches
    it once (kept in memory, its marker written once the disk allows), not again and again."""
    out = small_disk / "out"
    down = True
    policy = lambda request: Reply(503) if down else Reply(200)  # noqa: E731
    async with (
        FakeSentry(policy) as sentry,
        SimulatedDevice(sim("ONCE1", runs=None, run_seconds=2.0)) as dev,
    ):
        capture = {"out": str(out), "chunk_seconds": 1.0, "min_free_bytes": 0}
        cfg = daemon_config(out, [dev], sentry.dsn, capture=capture)
        async with Running(cfg, restart_backoff_cap=0.3) as run:
            up = run.daemon.uploader
            await until(lambda: up.pending >= 3, 15)  # chunks wait: Sentry answers 503
            filler = fill(small_disk)
            waiting = {json.loads(p.read_bytes())["chunk_id"] for p in chunk_files(out)}
            down = False  # Sentry accepts; the markers cannot be written
            with contextlib.suppress(TimeoutError):  # at 0e83a1a: stuck on the first one
                await until(lambda: waiting <= set(sentry.chunk_ids()), 10)
            # at 0e83a1a: the same chunk sent again every 0.05-0.3 s; here, four rescans of
            # the spool (each finds the unmarked chunks on disk) send none of them again
            scans = rescans(up)
            await until(lambda: len(scans) >= 4, 15)
            accepted = Counter(sentry.chunk_ids())
            assert max(accepted.values()) == 1, f"sent again: {accepted.most_common(2)}"
            assert waiting <= set(accepted)
            assert not delivered_markers(out)  # no room for them yet
            filler.unlink()
            await until(lambda: len(delivered_markers(out)) >= len(waiting), 15)
            await until(lambda: up.pending == 0, 15)
            assert await run.finish() == 0

    counts = Counter(sentry.chunk_ids())
    assert counts and max(counts.values()) == 1, counts.most_common(3)
    for chunk in chunk_files(out):  # every chunk marked delivered on disk in the end
        assert (chunk.parent.parent / "delivered" / chunk.name).exists(), chunk


def rescans(up) -> list[int]:
    """From now on, one entry per rescan of ``up``'s spool that has finished."""
    done: list[int] = []
    rescan = up.rescan

    async def counted():
        stats = await rescan()
        done.append(len(done))
        return stats

    up.rescan = counted
    return done


def delivered_markers(out: Path) -> list[Path]:
    return [p for p in out.glob("*/*/delivered/*.json")]
