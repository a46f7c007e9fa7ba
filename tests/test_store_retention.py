"""Retention: oldest sessions go first, by age or total size; live sessions are never touched."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.store.retention import (
    RetentionPolicy,
    SessionInfo,
    chunk_cut,
    enforce,
    finish_deletions,
    keep,
    list_sessions,
    plan,
)

DAY = 86400.0
NOW = 1_800_000_000.0


def make_session(
    root: Path, device: str, name: str, size: int, age_days: float, status: str | None = "complete"
) -> Path:
    path = root / device / name
    (path / "chunks").mkdir(parents=True)
    (path / "capture.bsprof").write_bytes(b"x" * size)
    (path / "chunks" / "000001.json").write_text("{}")
    when = NOW - age_days * DAY
    if status is not None:
        (path / "session.json").write_text(json.dumps({"status": status}))
    for f in path.rglob("*"):
        os.utime(f, (when, when))
    os.utime(path, (when, when))
    return path


def names(root: Path) -> list[str]:
    return [s.path.name for s in list_sessions(root)]


def test_old_sessions_are_deleted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    make_session(tmp_path, "a", "20260101T000000Z-1", 100, age_days=40)
    make_session(tmp_path, "b", "20260201T000000Z-2", 100, age_days=20)
    make_session(tmp_path, "a", "20260301T000000Z-3", 100, age_days=1)
    done = enforce(tmp_path, RetentionPolicy(max_age_seconds=30 * DAY), now=NOW)
    assert [d.session.path.name for d in done] == ["20260101T000000Z-1"]
    assert names(tmp_path) == ["20260201T000000Z-2", "20260301T000000Z-3"]
    assert "retention: deleted session a/20260101T000000Z-1" in caplog.text
    assert "1 chunk(s) never delivered" in caplog.text
    assert not list(tmp_path.rglob(".*"))


def test_oldest_go_first_until_under_max_bytes(tmp_path: Path) -> None:
    for i, device in enumerate("abcd"):
        make_session(tmp_path, device, f"2026010{i + 1}T000000Z-{i}", 1000, age_days=5 - i)
    size = list_sessions(tmp_path)[0].bytes
    enforce(tmp_path, RetentionPolicy(max_bytes=2 * size), now=NOW)
    assert names(tmp_path) == ["20260103T000000Z-2", "20260104T000000Z-3"]


def test_sessions_being_captured_are_never_deleted(tmp_path: Path) -> None:
    live = make_session(tmp_path, "a", "20260101T000000Z-1", 1000, age_days=90, status="streaming")
    listed = make_session(tmp_path, "b", "20260102T000000Z-2", 1000, age_days=90)
    fresh = make_session(tmp_path, "c", "20260103T000000Z-3", 1000, age_days=0.01, status=None)
    old = make_session(tmp_path, "d", "20260104T000000Z-4", 1000, age_days=90)
    done = enforce(
        tmp_path, RetentionPolicy(max_age_seconds=DAY, max_bytes=0), active=[listed], now=NOW
    )
    assert [d.session.path for d in done] == [old]
    assert live.exists() and listed.exists() and fresh.exists()


def test_no_policy_deletes_nothing(tmp_path: Path) -> None:
    make_session(tmp_path, "a", "20200101T000000Z-1", 10, age_days=3000)
    assert enforce(tmp_path, RetentionPolicy(), now=NOW) == []
    assert len(names(tmp_path)) == 1


def test_a_deletion_cut_short_by_a_crash_is_finished(tmp_path: Path) -> None:
    path = make_session(tmp_path, "a", "20260101T000000Z-1", 10, age_days=1)
    doomed = path.with_name(".20260101T000000Z-1.deleting")
    path.rename(doomed)
    assert names(tmp_path) == []  # already invisible
    assert finish_deletions(tmp_path) == [doomed]
    assert not doomed.exists()


# -- one accounting: blocks; the floor ----------------------------------------------------------

MIB = 1024**2


def info(i: int, size: int, status: str | None = "complete") -> SessionInfo:
    path = Path(f"/out/dev/2026010{i // 10}T0000{i % 10}0Z-{i}")
    return SessionInfo(path, size, NOW - 10 * DAY, status, 0)


def test_a_session_counts_the_blocks_its_small_files_take(tmp_path: Path) -> None:
    path = make_session(tmp_path, "a", "20260101T000000Z-1", 10, age_days=1)
    for i in range(2, 30):
        (path / "chunks" / f"{i:06d}.json").write_text("{}")
    lengths = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    blocks = sum(f.stat().st_blocks * 512 for f in path.rglob("*"))
    blocks += path.stat().st_blocks * 512
    [found] = list_sessions(tmp_path)
    assert found.bytes == blocks > 10 * lengths


def test_the_floor_deletes_the_oldest_finished_sessions_with_headroom() -> None:
    sessions = [info(1, 2 * MIB), info(2, 3 * MIB, "streaming"), info(3, 2 * MIB), info(4, MIB)]
    policy = RetentionPolicy(max_bytes=100 * MIB, min_free_bytes=8 * MIB)
    assert policy.free_target == 9 * MIB  # an eighth of the floor, at least 1 MiB, to spare
    done = plan(sessions, policy, now=NOW, free=6 * MIB)
    assert [d.session for d in done] == [sessions[0], sessions[2]]  # the live one is skipped
    assert "free space below min_free_bytes" in done[0].reason
    assert plan(sessions, policy, now=NOW, free=9 * MIB) == []
    assert plan(sessions, RetentionPolicy(max_bytes=100 * MIB), now=NOW, free=0) == []


@settings(max_examples=60)
@given(
    sizes=st.lists(st.tuples(st.integers(0, 50), st.booleans()), max_size=12),
    free=st.integers(0, 100),
    max_bytes=st.one_of(st.none(), st.integers(0, 300)),
    floor=st.integers(0, 60),
)
def test_plan_deletes_the_shortest_oldest_prefix_that_keeps_both_limits(
    sizes: list[tuple[int, bool]], free: int, max_bytes: int | None, floor: int
) -> None:
    unit = 64 * 1024
    sessions = [
        info(i, size * unit, "streaming" if live else "complete")
        for i, (size, live) in enumerate(sizes)
    ]
    policy = RetentionPolicy(
        max_bytes=None if max_bytes is None else max_bytes * unit, min_free_bytes=floor * unit
    )
    done = [d.session for d in plan(sessions, policy, now=NOW, free=free * unit)]
    finished = [s for s in sessions if s.status != "streaming"]
    assert done == finished[: len(done)]  # never a live one; the oldest first

    def holds(deleted: list[SessionInfo]) -> bool:
        freed = sum(s.bytes for s in deleted)
        total = sum(s.bytes for s in sessions) - freed
        under = policy.max_bytes is None or total <= policy.max_bytes
        return under and (not floor or free * unit + freed >= policy.free_target)

    assert holds(done) or len(done) == len(finished)  # kept, or nothing deletable is left
    if done:
        assert not holds(done[:-1])  # not one more than needed


def test_chunk_cut_takes_the_oldest_until_enough() -> None:
    @dataclass(frozen=True)
    class Chunk:
        allocated: int

    chunks = [Chunk(4096), Chunk(8192), Chunk(4096)]
    assert chunk_cut(chunks, 0) == []
    assert chunk_cut(chunks, 5000) == chunks[:2]
    assert chunk_cut(chunks, 10**9) == chunks


def test_keep_drops_chunks_of_a_live_session_only_when_nothing_finished_is_left(
    tmp_path: Path,
) -> None:
    finished = make_session(tmp_path, "a", "20260101T000000Z-1", 100, age_days=2)
    live = make_session(tmp_path, "b", "20260102T000000Z-2", 100, age_days=0, status="streaming")
    for i in range(2, 6):
        (live / "chunks" / f"{i:06d}.json").write_text("{}")
    in_flight = str(live / "chunks" / "000001.json")
    policy = RetentionPolicy(max_bytes=10**12, min_free_bytes=4 * MIB)
    readings: list[int] = []

    def free_space(path: Path) -> int:  # the file system's answers, scripted
        return readings.pop(0) if len(readings) > 1 else readings[0]

    readings[:] = [4 * MIB, 5 * MIB]  # 1 MiB short of the floor's headroom; then enough
    first = keep(tmp_path, policy, now=NOW, free_space=free_space, skip={in_flight})
    assert [d.session.path for d in first.deletions] == [finished]
    assert first.dropped == [] and first.short == 0 and first.free == 5 * MIB

    readings[:] = [3 * MIB]  # short again, and only the live session is left
    second = keep(tmp_path, policy, now=NOW, free_space=free_space, skip={in_flight})
    assert second.deletions == [] and second.live == 1
    dropped = [c.item.path.name for c in second.dropped]
    assert dropped == ["000002.json", "000003.json", "000004.json", "000005.json"]  # not 1:
    for name in dropped:  # in flight, never dropped
        assert not (live / "chunks" / name).exists() and (live / "dropped" / name).exists()
    assert second.short == 1 * MIB  # the reading did not move: nothing deletable is left
