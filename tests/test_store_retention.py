"""Retention: oldest sessions go first, by age or total size; live sessions are never touched."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from rokuprof.store.retention import RetentionPolicy, enforce, finish_deletions, list_sessions

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
