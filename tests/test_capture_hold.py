"""A full disk mid-run costs no received byte: a write the disk refuses (ENOSPC) is held in
memory, reading pauses (the device's buffer keeps the rest), the write is retried with backoff
and the run goes on when space returns; only a disk that stays full for ``hold_seconds`` (or a
hold past its budget) ends the session ``truncated``, saying why. Real tmpfs, real simulator."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import cap_config
from disk_helpers import fill, mounted_small_disk
from hypothesis import given, settings
from hypothesis import strategies as st
from waiting import until

from rokuprof.capture import DeviceCapture
from rokuprof.capture.hold import FIRST_RETRY, LONGEST_RETRY, SpaceHold, hold_budget
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.capture.session import read_record
from rokuprof.capture.unfinished import end_failed_capture
from rokuprof.simulator import SimulatedDevice


@pytest.fixture
def small_disk(tmp_path: Path):
    with mounted_small_disk(tmp_path / "disk", "4m") as disk:
        yield disk


def _archive_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("capture.bsprof"))


async def _capture_with_full_disk(disk: Path, hold_seconds: float, free: bool):
    """A capture onto ``disk``, filled mid-run; ``free``: the filler goes once the hold has
    retried its write in vain (the next retry moved on)."""
    out = disk / "out"
    recorder = Recorder()
    async with SimulatedDevice(sim(serial="HOLD1", runs=1, run_seconds=5.0)) as dev:
        limits = ArchiveLimits(min_free_bytes=0, hold_seconds=hold_seconds)  # only ENOSPC stops
        capture = DeviceCapture(
            cap_config(dev, out, runs=1, archive_limits=limits), observer=recorder
        )
        task = asyncio.ensure_future(run_capture(capture, timeout=40))
        await until(lambda: _archive_bytes(out) > 2048, 10)
        filler = fill(disk)  # another program takes every free byte at once
        await until(lambda: any("waiting for disk space" in m for m in recorder.messages), 10)
        if free:
            hold = capture.current_run._hold.policy
            first = hold.retry_at()
            await until(lambda: hold.retry_at() not in (None, first), 20)
            filler.unlink()
        try:
            summary = await task
        except OSError as error:  # as `watch` and the daemon do: the session ends truncated
            summary = await end_failed_capture(capture, error)
        sent = dev.sent_bytes(0)
    return summary, sent, recorder, capture


@pytest.mark.slow
async def test_a_disk_filled_mid_run_and_freed_loses_no_byte(small_disk: Path) -> None:
    summary, sent, recorder, _ = await _capture_with_full_disk(small_disk, 60.0, free=True)
    (session,) = summary.sessions
    assert (session.path / "capture.bsprof").read_bytes() == sent  # every byte, once, in order
    record = read_record(session.path)
    assert record["status"] == "complete", record["end_reason"]
    assert record["bytes"] == len(sent)
    assert any("disk space returned: capture resumed" in m for m in recorder.messages)


@pytest.mark.slow
async def test_a_disk_that_stays_full_ends_the_session_truncated_within_budget(
    small_disk: Path,
) -> None:
    summary, sent, _, capture = await _capture_with_full_disk(small_disk, 1.5, free=False)
    (session,) = summary.sessions  # its session.json too may not fit on the full disk
    kept = (session.path / "capture.bsprof").read_bytes()
    assert kept and sent.startswith(kept) and len(kept) < len(sent)
    record = session.record
    assert record.status == "truncated" and record.bytes == len(kept)
    assert "No space left" in record.end_reason
    assert "the disk stayed full for 1.5 s (hold_seconds)" in record.end_reason
    assert "hold_seconds" in summary.failure
    limits = capture.config.archive_limits
    budget = hold_budget(limits.hold_bytes, limits.max_bytes_after_error)
    assert 0 < capture.current_run._hold.policy.most_held <= budget


def test_the_hold_backs_off_and_gives_up_on_time_or_budget() -> None:
    hold = SpaceHold(seconds=10.0, budget=1000)
    assert hold.retry_at() is None and hold.give_up(0.0) is None
    hold.blocked(100, 5.0)
    delays, now = [], 5.0
    for _ in range(8):
        at = hold.retry_at()
        delays.append(round(at - now, 6))
        now = at
        hold.blocked(100, now)
    assert delays == [FIRST_RETRY, 0.2, 0.4, 0.8, 1.6, LONGEST_RETRY, LONGEST_RETRY, 2.0]
    assert hold.give_up(14.99) is None
    assert "hold_seconds" in hold.give_up(15.0)
    assert hold.cleared(15.5) == 10.5 and not hold.holding
    hold.blocked(1001, 20.0)  # a new episode: the backoff starts again
    assert hold.retry_at() == 20.0 + FIRST_RETRY and hold.episodes == 2
    assert "hold budget" in hold.give_up(20.0)


@given(
    gaps=st.lists(st.floats(0.0, 5.0), min_size=1, max_size=30),
    seconds=st.floats(0.5, 30.0),
    held=st.lists(st.integers(0, 2000), min_size=1, max_size=30),
)
@settings(max_examples=60, deadline=None)
def test_the_hold_retries_within_its_backoff_and_ends_exactly_at_its_limits(
    gaps: list[float], seconds: float, held: list[int]
) -> None:
    hold = SpaceHold(seconds=seconds, budget=1000)
    now = 100.0
    hold.blocked(held[0], now)
    began, most = now, held[0]
    for i, gap in enumerate(gaps):
        delay = hold.retry_at() - now
        assert FIRST_RETRY - 1e-9 <= delay <= LONGEST_RETRY + 1e-9
        now += gap
        amount = held[i % len(held)]
        hold.blocked(amount, now)
        reason = hold.give_up(now)
        expected = amount > 1000 or now - began >= seconds
        assert (reason is not None) == expected
        most = max(most, amount)
        assert hold.most_held == most and hold.held == amount
