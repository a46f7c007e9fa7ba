"""Several uploads at once against a slow fake Sentry on loopback: they overlap up to the cap,
one per session, never the same chunk twice; rate limits, a refused key and failures still
hold every request back as with one upload at a time."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
from pathlib import Path

import pytest
from daemon_helpers import daemon_config
from fake_sentry import FakeSentry, Reply, Request, rate_limited
from store_helpers import write_chunks
from waiting import until

from rokuprof.daemon.config import ConfigError, build_config
from rokuprof.daemon.daemon import Daemon
from rokuprof.sentry.dsn import Dsn
from rokuprof.store.spool import Spool
from rokuprof.store.uploader import Uploader


def uploader_for(root: Path, dsn: str, **kwargs) -> Uploader:
    kwargs = {"timeout": 5.0, "backoff_base": 0.05, "backoff_cap": 0.2, "probe_base": 0.05} | kwargs
    return Uploader(Spool(root), Dsn.parse(dsn), **kwargs)


@contextlib.asynccontextmanager
async def running(uploader: Uploader):
    task = asyncio.create_task(uploader.run())
    try:
        yield task
    finally:
        uploader.stop()
        await asyncio.wait_for(task, 5)


def sessions(root: Path, count: int, chunks: int = 1) -> dict[str, str]:
    """``count`` devices with one session of ``chunks`` chunks each: chunk id -> device."""
    return {
        cid: f"tv-{i}"
        for i in range(count)
        for _, cid in write_chunks(root, f"tv-{i}", "s1", chunks)
    }


def overlapping(requests: list[Request]) -> bool:
    """Whether any of these requests was received before an earlier one was answered."""
    ordered = sorted(requests, key=lambda r: r.at)
    return any(b.at < a.answered_at for a, b in itertools.pairwise(ordered))


@pytest.mark.parametrize("cap", [1, 3])
async def test_uploads_overlap_up_to_the_cap(tmp_path: Path, cap: int) -> None:
    ids = sessions(tmp_path, 6)
    async with FakeSentry(delay=0.2) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=cap)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 6, 10)
            await until(lambda: up.pending == 0, 2)
    # never more at once than the cap, and with a cap over one the sends overlap (each answer
    # takes 0.2 s, so requests received before an earlier one was answered ran side by side)
    assert sentry.most_at_once == cap
    assert overlapping(sentry.requests) == (cap > 1)
    assert sorted(sentry.chunk_ids()) == sorted(ids) and len(sentry.requests) == 6
    assert up.stats.uploaded == 6 and up.in_flight == 0


async def test_the_cap_is_bounded_by_the_window_in_memory(tmp_path: Path) -> None:
    up = Uploader(Spool(tmp_path), None, window=2, max_in_flight=8)
    assert up.max_in_flight == 2
    assert Uploader(Spool(tmp_path), None, max_in_flight=1000).max_in_flight == 64
    assert Uploader(Spool(tmp_path), None, max_in_flight=0).max_in_flight == 1


async def test_one_session_at_a_time_in_order_sessions_side_by_side(tmp_path: Path) -> None:
    a = write_chunks(tmp_path, "tv-a", "s1", 5)
    b = write_chunks(tmp_path, "tv-b", "s1", 5)
    async with FakeSentry(delay=0.1) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=4)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 10, 10)
    assert sentry.most_at_once == 2  # one per session, though the cap is 4
    for chunks in (a, b):
        ours = {cid for _, cid in chunks}
        mine = [r for r in sentry.requests if r.chunk()["chunk_id"] in ours]
        assert [r.chunk()["chunk_id"] for r in mine] == [cid for _, cid in chunks]
        assert not overlapping(mine)


async def test_no_chunk_is_sent_twice_while_scans_and_submits_race_the_uploads(
    tmp_path: Path,
) -> None:
    ids = sessions(tmp_path, 6, chunks=2)
    paths = sorted(tmp_path.glob("*/*/chunks/*.json"))
    async with FakeSentry(delay=0.15) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=4, rescan_seconds=0.03)
        async with running(up):

            def events() -> int:  # requests arrived and answered so far
                return len(sentry.requests) + len(sentry.accepted())

            # announce every chunk again and again while they are sent: at the start, and at
            # each request's arrival and each answer, until all 12 were accepted
            while True:
                for path in paths:
                    up.submit(path)
                if len(sentry.accepted()) == 12:
                    break
                seen = events()
                await until(lambda seen=seen: events() > seen, 10)
            await until(lambda: up.pending == 0, 2)
    sent = [r.chunk()["chunk_id"] for r in sentry.requests]
    assert sorted(sent) == sorted(ids)  # each exactly once
    assert up.stats.uploaded == 12 and up.pending == 0 and up.pending_bytes == 0


@pytest.mark.parametrize(
    "first",
    [Reply(200, {"X-Sentry-Rate-Limits": "0.8:profile_chunk:key"}), rate_limited(0.8)],
    ids=["limit-on-a-200", "429"],
)
async def test_a_rate_limit_holds_back_every_new_request(tmp_path: Path, first: Reply) -> None:
    ids = sessions(tmp_path, 8)
    async with FakeSentry(delay=0.2) as sentry:
        sentry.script(first)
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=4)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 8, 10)
    limited = sentry.requests[0]
    batch = sorted(sentry.requests, key=lambda r: r.at)[:4]
    assert limited in batch and all(r.at < limited.answered_at for r in batch)
    later = [r for r in sentry.requests if r not in batch]
    assert later and min(r.at for r in later) >= limited.answered_at + 0.75
    assert sorted(sentry.chunk_ids()) == sorted(ids)
    if first.status == 429:  # the refused chunk went again, after the wait
        assert len(sentry.requests) == 9 and up.stats.rate_limited == 1


async def test_a_limit_on_another_category_does_not_slow_uploads(tmp_path: Path) -> None:
    sessions(tmp_path, 8)
    other = Reply(200, {"X-Sentry-Rate-Limits": "60:error;transaction:key"})
    async with FakeSentry(lambda r: other, delay=0.2) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=4)
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 8, 10)
            # the other category's limit never held profile chunks back: all four at once,
            # and nothing to wait for
            assert up.policy.wait(up.clock()) == 0.0
        assert sentry.most_at_once == 4 and up.stats.rate_limited == 0


async def test_a_refused_key_pauses_every_upload_and_one_probe_goes_at_a_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    ids = sessions(tmp_path, 6)
    oldest = next(iter(ids))
    key_ok = False

    def policy(request: Request) -> Reply:
        return Reply() if key_ok else Reply(401, body=b'{"detail":"invalid key"}')

    async with FakeSentry(policy, delay=0.1) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=4)
        async with running(up):
            refused = lambda: [r for r in sentry.requests if r.status == 401]  # noqa: E731
            await sentry.wait_for(lambda: len(refused()) >= 4)
            assert sentry.most_at_once == 4  # the first batch went out together
            sentry.most_at_once = 0
            await sentry.wait_for(lambda: len(refused()) >= 8)
            assert sentry.most_at_once == 1  # paused: one probe at a time ...
            probes = refused()[4:]
            assert {r.chunk()["chunk_id"] for r in probes} == {oldest}  # ... the oldest chunk
            assert up.pause is not None and up.stats.rejected == 0 and up.pending == 6
            # the batch's four refusals pause once: later probes back off from there
            assert len(refused()) - 4 <= up.pause.refusals <= len(refused()) - 3
            key_ok = True
            sentry.most_at_once = 0
            await sentry.wait_for(lambda: len(sentry.accepted()) == 6, 10)
    assert sentry.most_at_once == 4  # resumed at full width
    assert sorted(sentry.chunk_ids()) == sorted(ids) and up.pause is None
    assert up.stats.key_refused == len(refused())
    said = [r.getMessage() for r in caplog.records]
    assert sum("uploads paused" in m for m in said) == 1
    assert sum("uploads resumed" in m for m in said) == 1


async def test_failures_in_flight_together_back_off_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    ids = sessions(tmp_path, 4)
    async with FakeSentry(delay=0.1) as sentry:
        sentry.script(*[Reply(503)] * 4)
        up = uploader_for(
            tmp_path,
            sentry.dsn,
            max_in_flight=4,
            backoff_base=0.3,
            backoff_cap=1.0,
            rng=lambda: 1.0,
        )
        async with running(up):
            await sentry.wait_for(lambda: len(sentry.accepted()) == 4, 10)
    first, probe, rest = sentry.requests[:4], sentry.requests[4], sentry.requests[5:]
    assert [r.status for r in first] == [503] * 4 and overlapping(first)
    # one backoff for the four (0.3 s, not 0.3 * 2**3), then one probe alone, then the rest
    last = max(r.answered_at for r in first)
    assert 0.25 <= probe.at - min(r.answered_at for r in first) < 1.0
    assert probe.at >= last and all(r.at >= probe.answered_at for r in rest)
    assert overlapping(rest)
    assert re.findall(r"next try in ([\d.]+) s", caplog.text) == ["0.3"]
    assert up.stats.send_errors == 4 and up.failures == 0
    assert sorted(sentry.chunk_ids()) == sorted(ids)


async def test_the_spool_limit_never_drops_a_chunk_in_flight(tmp_path: Path) -> None:
    old = [p for p, _ in write_chunks(tmp_path, "tv-a", "s1", 1)]
    old += [p for p, _ in write_chunks(tmp_path, "tv-b", "s1", 1)]
    size = old[0].stat().st_size
    async with FakeSentry(delay=0.5) as sentry:
        up = uploader_for(tmp_path, sentry.dsn, max_in_flight=2, max_spool_bytes=int(3.5 * size))
        async with running(up):
            await until(lambda: up.in_flight == 2, 2)
            new = [p for p, _ in write_chunks(tmp_path, "tv-c", "s1", 2)]
            for path in new:
                up.submit(path)
            await until(lambda: up.stats.dropped >= 1, 2)
            await sentry.wait_for(lambda: len(sentry.accepted()) >= 2, 5)
            await until(lambda: up.pending == 0, 5)
    assert all(p.exists() for p in old) and not new[0].exists()
    assert up.stats.uploaded == 3 and up.stats.dropped == 1


async def test_config_max_in_flight_is_checked_and_reaches_the_uploader(tmp_path: Path) -> None:
    dsn = "http://0123456789abcdef0123456789abcdef@127.0.0.1:9/42"
    cfg = daemon_config(tmp_path, [], dsn, sentry={"dsn": dsn, "max_in_flight": 8})
    assert cfg.sentry.max_in_flight == 8
    assert any("up to 8 upload(s) at once" in line for line in cfg.summary())
    assert Daemon(cfg).uploader.max_in_flight == 8
    assert build_config({}, env={}).sentry.max_in_flight == 4
    errors = []
    for bad in (0, 65, 2.5, "4", True):
        with pytest.raises(ConfigError) as info:
            build_config({"sentry": {"max_in_flight": bad}}, env={})
        errors += [str(e) for e in info.value.errors]
    assert errors == [
        "sentry.max_in_flight: must be 1 to 64, got 0",
        "sentry.max_in_flight: must be 1 to 64, got 65",
        "sentry.max_in_flight: must be a whole number, got 2.5",
        "sentry.max_in_flight: must be a whole number, got '4'",
        "sentry.max_in_flight: must be a whole number, got True",
    ]
