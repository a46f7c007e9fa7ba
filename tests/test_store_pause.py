"""Uploads that cannot fail forever: a refused key pauses (nothing rejected) and resumes, only
payload answers reject a chunk, retries wait at most 60 s, and the spool has a size limit."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
from pathlib import Path

import httpx
import pytest
from daemon_helpers import Running, daemon_config
from fake_sentry import FakeSentry, Reply
from store_helpers import write_chunks
from waiting import until

from rokuprof.sentry.coverage import chunk_samples
from rokuprof.sentry.dsn import Dsn
from rokuprof.store.spool import Spool
from rokuprof.store.uploader import Uploader


def uploader_for(root: Path, dsn: str | None, **kwargs) -> Uploader:
    kwargs = {"timeout": 2.0, "backoff_base": 0.05, "backoff_cap": 0.2, "probe_base": 0.05} | kwargs
    return Uploader(Spool(root), Dsn.parse(dsn) if dsn else None, **kwargs)


@contextlib.asynccontextmanager
async def running(uploader: Uploader):
    task = asyncio.create_task(uploader.run())
    try:
        yield task
    finally:
        uploader.stop()
        await asyncio.wait_for(task, 5)


def messages(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


@pytest.mark.parametrize("status", [401, 403])
async def test_a_refused_key_pauses_uploads_and_nothing_is_rejected(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    caplog.set_level(logging.INFO)
    out = tmp_path / "out"
    chunks = write_chunks(out, "dev", "20260101T000000.000Z-aaaa", 5)
    key_ok = False

    def sentry_policy(request):
        return Reply() if key_ok else Reply(status, body=b'{"detail":"invalid api key"}')

    async with FakeSentry(sentry_policy) as sentry:
        cfg = daemon_config(out, [], sentry.dsn)
        async with Running(cfg, uploader={"probe_base": 0.05}) as run:
            up = run.daemon.uploader
            await sentry.wait_for(lambda: len(sentry.requests) >= 4)
            late = write_chunks(out, "dev", "20260101T000000.000Z-aaaa", 1, start=6)
            up.submit(late[0][0])  # new chunks keep coming while paused: kept too
            await until(lambda: up.pending == 6, 2)
            base = f"http://127.0.0.1:{run.daemon.metrics.port}"
            async with httpx.AsyncClient(timeout=2.0) as client:
                health = await client.get(base + "/healthz")
                metrics = (await client.get(base + "/metrics")).text
                assert health.status_code == 200
                assert health.text.startswith(
                    f"ok\nuploads paused: Sentry refused the key (HTTP {status}) since "
                )
                assert health.text.endswith("; 6 chunk(s) wait on disk\n")
                assert "rokuprof_upload_paused 1\n" in metrics
                refused = re.search(r"rokuprof_upload_key_refused_total (\d+)", metrics)
                assert int(refused.group(1)) >= 4
                assert 'rokuprof_chunks_rejected_total{device="dev"}' not in metrics
                assert f"uploads paused: Sentry refused the key (HTTP {status})" in (
                    run.daemon.status_line()
                )

                key_ok = True  # the key works again (fixed, or Sentry recovered)
                await sentry.wait_for(lambda: len(sentry.accepted()) == 6, 10)
                await until(lambda: up.pending == 0, 2)
                assert (await client.get(base + "/healthz")).text == "ok\n"
                metrics = (await client.get(base + "/metrics")).text
                assert "rokuprof_upload_paused 0\n" in metrics
            assert await run.finish() == 0
    # every chunk delivered once, none rejected; the probes were the oldest chunk only
    assert sentry.chunk_ids() == [cid for _, cid in chunks + late]
    refusals = [r for r in sentry.requests if r.status == status]
    assert len(refusals) >= 4
    assert {r.chunk()["chunk_id"] for r in refusals} == {chunks[0][1]}
    assert not (out / "dev" / "20260101T000000.000Z-aaaa" / "rejected").exists()
    assert up.stats.rejected == 0 and up.stats.uploaded == 6 and up.pause is None
    # said once when it began and once when it ended, not once per chunk or probe
    assert len(messages(caplog, "uploads paused")) == 1
    assert "nothing is rejected" in messages(caplog, "uploads paused")[0]
    assert len(messages(caplog, "uploads resumed")) == 1


async def test_400_and_413_reject_only_that_chunk(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 4)
    async with FakeSentry() as sentry:
        sentry.script(
            Reply(400, body=b'{"detail":"invalid envelope"}'),
            Reply(200),
            Reply(413, body=b'{"detail":"envelope exceeded size limits"}'),
        )
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 2)
            await until(lambda: up.pending == 0, 2)
    rejected = tmp_path / "dev" / "s1" / "rejected"
    assert sorted(p.name for p in rejected.iterdir()) == [
        "000001.json",
        "000001.reason.json",
        "000003.json",
        "000003.reason.json",
    ]
    assert json.loads((rejected / "000001.reason.json").read_text())["status"] == 400
    assert json.loads((rejected / "000003.reason.json").read_text())["status"] == 413
    assert sentry.chunk_ids() == [chunks[1][1], chunks[3][1]]
    assert len(sentry.requests) == 4  # each chunk once: no pause, no retry
    assert up.pause is None and up.stats.rejected == 2 and up.stats.uploaded == 2


async def test_retries_wait_at_most_60_seconds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A scripted clock that jumps 1000 s per reading: every wait is over at once, and the
    delays the uploader chose show the policy (worst-case jitter: rng() == 1)."""
    caplog.set_level(logging.WARNING)
    chunks = write_chunks(tmp_path, "dev", "s1", 1)
    clock = itertools.count(0.0, 1000.0).__next__
    async with FakeSentry() as sentry:
        sentry.script(*[Reply(503)] * 10)
        up = uploader_for(
            tmp_path, sentry.dsn, backoff_base=1.0, backoff_cap=300.0, rng=lambda: 1.0, clock=clock
        )
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 1)
    delays = [float(m) for m in re.findall(r"next try in ([\d.]+) s", caplog.text)]
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]
    assert sentry.chunk_ids() == [chunks[0][1]] and up.failures == 0


def set_mtimes(paths: list[Path], start: float = 1_000_000.0) -> None:
    for i, path in enumerate(paths):
        os.utime(path, (start + i, start + i))


async def test_a_full_spool_drops_the_oldest_undelivered_chunks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    a = write_chunks(tmp_path, "tv-a", "s1", 5)
    b = write_chunks(tmp_path, "tv-b", "s2", 5)
    # oldest first: interleaved across the two sessions
    order = [p for pair in zip(a, b, strict=True) for p, _ in pair]
    set_mtimes(order)
    size = max(p.stat().st_size for p in order)
    assert all(p.stat().st_size == size for p in order)
    limit = 6 * size  # 10 chunks pending: cut down to at most 90 % of 6, i.e. 5 chunks
    async with FakeSentry(lambda r: Reply(401)) as sentry:  # nothing gets delivered
        up = uploader_for(tmp_path, sentry.dsn, max_spool_bytes=limit, probe_base=60.0)
        async with running(up):
            await until(lambda: up.stats.dropped == 5 and up.pause is not None, 5)
            assert (up.pending, up.pending_bytes) == (5, 5 * size)
            assert [p.exists() for p in order] == [False] * 5 + [True] * 5
            # two more chunks: over the limit again, the two oldest go
            new = write_chunks(tmp_path, "tv-a", "s1", 2, start=6)
            set_mtimes([p for p, _ in new], start=2_000_000.0)
            for path, _ in new:
                up.submit(path)
            await until(lambda: up.stats.dropped == 7, 5)
    assert [p.exists() for p in order] == [False] * 7 + [True] * 3
    assert all(p.exists() for p, _ in new)
    assert up.stats.dropped_bytes == 7 * size
    assert (up.stats.per_device["tv-a"].dropped, up.stats.per_device["tv-b"].dropped) == (4, 3)
    dropped_markers = sorted(tmp_path.glob("*/*/dropped/*.json"))
    # each marker keeps what its chunk covered (every chunk here has the same samples)
    covered = chunk_samples(json.loads(new[0][0].read_bytes()))
    markers = [json.loads(m.read_bytes()) for m in dropped_markers]
    assert len(markers) == 7 and all(chunk_samples(m) == covered for m in markers)
    assert not list(tmp_path.glob("*/*/rejected"))  # dropped, not rejected
    logged = messages(caplog, "spool full")
    assert len(logged) == 2
    assert "dropped the 5 oldest undelivered chunk(s)" in logged[0]
    assert "tv-a/s1, tv-b/s2" in logged[0] and "rokuprof convert rebuilds them" in logged[0]
    # a restart sees the same: 5 pending, 7 dropped
    _, stats = Spool(tmp_path).scan()
    assert (stats.pending, stats.dropped, stats.pending_bytes) == (5, 7, 5 * size)


async def test_without_a_dsn_the_spool_limit_drops_nothing(tmp_path: Path) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 4)
    up = uploader_for(tmp_path, None, max_spool_bytes=1)
    async with running(up):
        await up.drain(1.0)
    assert all(p.exists() for p, _ in chunks) and up.stats.dropped == 0


async def test_a_backlog_larger_than_the_window_is_sent_oldest_first(tmp_path: Path) -> None:
    a = write_chunks(tmp_path, "tv-a", "s1", 6)
    b = write_chunks(tmp_path, "tv-b", "s2", 6)
    ordered = [x for pair in zip(b, a, strict=True) for x in pair]
    set_mtimes([p for p, _ in ordered])
    held: list[int] = []

    def policy(request):  # what the uploader holds while each chunk is on the wire
        held.append(up.in_memory)
        return Reply()

    async with FakeSentry(policy) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, window=3)
        await up.rescan()
        assert (up.pending, up.in_memory) == (12, 3)
        assert up.pending_bytes == sum(p.stat().st_size for p, _ in ordered)
        late = write_chunks(tmp_path, "tv-a", "s1", 1, start=7)
        up.submit(late[0][0])  # newest: counted, read from disk when its turn comes
        assert (up.pending, up.in_memory) == (13, 3)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 13)
            await until(lambda: up.pending == 0, 2)
    assert len(held) == 13 and min(held) >= 1 and max(held) <= 3
    assert sentry.chunk_ids() == [cid for _, cid in ordered + late]
