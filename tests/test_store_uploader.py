"""The uploader against a fake Sentry on loopback: delivery, rate limits, retries, rejects."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path

import pytest
from fake_sentry import KEY, FakeSentry, Reply, rate_limited
from hostile_servers import FloodingAnswer, measured
from store_helpers import write_chunks
from waiting import until

from rokuprof.sentry.dsn import Dsn
from rokuprof.store.spool import Spool
from rokuprof.store.uploader import Uploader

MIB = 1 << 20


def uploader_for(root: Path, dsn: str | None, **kwargs) -> Uploader:
    kwargs.setdefault("timeout", 2.0)
    kwargs.setdefault("backoff_base", 0.05)
    kwargs.setdefault("backoff_cap", 0.2)
    kwargs.setdefault("probe_base", 0.05)
    return Uploader(Spool(root), Dsn.parse(dsn) if dsn else None, **kwargs)


@contextlib.asynccontextmanager
async def running(uploader: Uploader):
    task = asyncio.create_task(uploader.run())
    try:
        yield task
    finally:
        uploader.stop()
        await asyncio.wait_for(task, 5)


async def test_delivers_every_chunk_once_and_resumes_after_restart(tmp_path: Path) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 3)
    async with FakeSentry() as sentry:
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 3)
            late = write_chunks(tmp_path, "dev", "s1", 1, start=4)
            up.submit(late[0][0])
            await sentry.wait_for(lambda: len(sentry.accepted()) == 4)
        assert sentry.chunk_ids() == [cid for _, cid in chunks + late]
        request = sentry.requests[0]
        assert request.path == "/api/42/envelope/"
        assert request.headers["content-encoding"] == "gzip"
        assert request.headers["content-type"] == "application/x-sentry-envelope"
        assert f"sentry_key={KEY}" in request.headers["x-sentry-auth"]
        envelope = request.envelope()
        assert envelope.headers["event_id"] == chunks[0][1]
        assert [item.type for item in envelope.items] == ["profile_chunk"]
        assert up.stats.uploaded == 4 and up.stats.per_device["dev"].uploaded == 4
        # a restart sends nothing again
        up2 = uploader_for(tmp_path, sentry.dsn)
        async with running(up2):
            await up2.drain(1.0)
        assert len(sentry.requests) == 4
        assert len(list((tmp_path / "dev" / "s1" / "delivered").iterdir())) == 4


async def test_rate_limit_with_both_headers_is_honoured(tmp_path: Path) -> None:
    write_chunks(tmp_path, "dev", "s1", 2)
    async with FakeSentry() as sentry:
        sentry.script(rate_limited(0.6))
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 2)
        first, second = sentry.requests[0], sentry.requests[1]
        assert first.status == 429
        assert second.at - first.at >= 0.55  # waited as told, no earlier retry
        assert up.stats.rate_limited == 1
        assert sentry.chunk_ids()[0] == first.chunk()["chunk_id"]  # the same chunk again


async def test_rate_limit_header_on_a_200_blocks_the_next_send(tmp_path: Path) -> None:
    write_chunks(tmp_path, "dev", "s1", 2)
    async with FakeSentry() as sentry:
        sentry.script(Reply(200, {"X-Sentry-Rate-Limits": "0.5:profile_chunk:key"}))
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 2)
        assert sentry.requests[1].at - sentry.requests[0].at >= 0.45


async def test_server_errors_and_hangs_are_retried_with_backoff(tmp_path: Path) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 2)
    async with FakeSentry() as sentry:
        sentry.script(Reply(500), Reply(503), Reply(hang=True))
        up = uploader_for(tmp_path, sentry.dsn, timeout=0.3)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 2)
        assert [r.status for r in sentry.requests] == [500, 503, None, 200, 200]
        assert sentry.chunk_ids() == [cid for _, cid in chunks]
        assert up.stats.send_errors == 3 and up.failures == 0
        assert "timed out" in up.stats.last_error or "no answer" in up.stats.last_error


async def test_refused_chunks_move_to_rejected_with_the_reason(tmp_path: Path) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 3)
    async with FakeSentry() as sentry:
        sentry.script(Reply(413, body=b'{"detail":"envelope exceeded size limits"}'))
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 2)
        assert len(sentry.requests) == 3
    rejected = tmp_path / "dev" / "s1" / "rejected"
    assert (rejected / "000001.json").read_bytes() != b""
    assert not chunks[0][0].exists()
    reason = json.loads((rejected / "000001.reason.json").read_text())
    assert reason["status"] == 413 and "exceeded size limits" in reason["reason"]
    assert up.stats.rejected == 1 and up.stats.per_device["dev"].rejected == 1


async def test_invalid_chunk_is_rejected_without_sending(tmp_path: Path) -> None:
    write_chunks(tmp_path, "dev", "s1", 1)
    bad = tmp_path / "dev" / "s1" / "chunks" / "000002.json"
    bad.write_text(json.dumps({"version": "2", "platform": "brightscript"}))
    async with FakeSentry() as sentry:
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 1 and up.stats.rejected == 1)
        assert len(sentry.requests) == 1
    reason = json.loads((tmp_path / "dev" / "s1" / "rejected" / "000002.reason.json").read_text())
    assert reason["status"] is None and "profiling_invalid_json" in reason["reason"]


async def test_without_a_dsn_chunks_stay_on_disk(tmp_path: Path) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 2)
    up = uploader_for(tmp_path, None)
    async with running(up):
        await up.drain(1.0)
    assert all(p.exists() for p, _ in chunks)
    assert up.stats.spool.pending == 2 and up.stats.uploaded == 0


async def test_drain_stops_at_its_deadline(tmp_path: Path) -> None:
    write_chunks(tmp_path, "dev", "s1", 2)
    async with FakeSentry(lambda r: rate_limited(30)) as sentry:
        up = uploader_for(tmp_path, sentry.dsn)
        task = asyncio.create_task(up.run())
        await sentry.wait_for(lambda: len(sentry.requests) == 1)
        # Sentry holds the chunks back for 30 s: drain gives up at its 0.3 s deadline (within
        # the 5 s guard), the run task stopped, nothing more asked of Sentry
        assert await asyncio.wait_for(up.drain(0.3, task), 5) == 2
        assert task.done() and len(sentry.requests) == 1


async def test_the_dsn_key_never_reaches_the_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_chunks(tmp_path, "dev", "s1", 2)
    caplog.set_level(logging.DEBUG)
    async with FakeSentry() as sentry:
        sentry.script(
            Reply(500, body=f"bad key {KEY}".encode()),
            Reply(401, body=f'{{"detail":"invalid key {KEY}"}}'.encode()),
        )
        up = uploader_for(tmp_path, sentry.dsn)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 1)
    assert up.stats.rejected == 0 and up.stats.key_refused == 1
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP 401" in text and "<key>" in text
    assert KEY not in text and KEY not in up.stats.last_error


@pytest.mark.parametrize("size", [2 << 30, None], ids=["2GiB", "endless"])
async def test_a_huge_answer_is_read_up_to_its_cap(tmp_path: Path, size: int | None) -> None:
    """Sentry answers four uploads at once with 200 and a 2 GiB (or endless) body: each chunk is
    delivered after a few KiB of it, the connection closed; Python allocations stay small."""
    for n in range(4):
        write_chunks(tmp_path, "dev", f"s{n}", 1)
    async with FloodingAnswer(size) as peer:
        dsn = f"http://{KEY}@127.0.0.1:{peer.port}/42"
        up = uploader_for(tmp_path, dsn, max_in_flight=4, request_deadline=3.0)

        async def upload_all() -> None:
            async with running(up):
                await until(lambda: up.stats.uploaded == 4, 10)

        _, error, peak = await measured(upload_all())
        assert error is None, up.stats.last_error
        await until(lambda: len(peer.gone) == 4, 5)
    assert up.stats.send_errors == 0 and peer.connections == 4
    # each client went long before the peer's 32 MiB: what it sent sat in socket buffers
    assert max(peer.gone) < peer.limit // 2
    assert peak < 8 * MIB  # the client's first TLS context is most of it; before: 4 x 32 MiB


async def test_every_time_it_states_comes_from_its_clocks(tmp_path: Path) -> None:
    """The shell reads no wall clock of its own: envelopes' sent_at, the pause's start and
    the latest error's time are the injected wall clock's."""
    write_chunks(tmp_path, "dev", "s1", 1)
    wall = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    key_ok = False
    async with FakeSentry(lambda r: Reply() if key_ok else Reply(401)) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, wall_clock=lambda: wall)
        async with running(up):
            await until(lambda: up.pause is not None, 5)
            assert up.pause.since == wall and up.stats.last_error_at == wall
            key_ok = True
            await sentry.wait_for(lambda: len(sentry.accepted()) == 1)
    assert {r.status for r in sentry.requests} == {401, 200}  # refused, then delivered
    assert {r.envelope().headers["sent_at"][:19] for r in sentry.requests} == {
        "2027-01-15T08:00:00"
    }
    assert up.pause is None and up.stats.uploaded == 1
