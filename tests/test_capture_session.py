"""Session directories: names, archive writer, atomic session.json and chunk files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from waiting import until

from rokuprof.capture.archive import ArchiveWriter
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.session import SessionFiles, read_record, safe_name, session_name
from rokuprof.timefmt import utc_iso_or_none as iso

START = 1_795_282_956.25  # 2026-11-21T17:42:36.250Z


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("YN00AA000001", "YN00AA000001"),
        ("192.168.1.20", "192.168.1.20"),
        ("fe80::1%eth0", "fe80_1_eth0"),
        ("../../etc", "etc"),
        ("", "device"),
        ("..", "device"),
    ],
)
def test_safe_name(text: str, name: str) -> None:
    assert safe_name(text) == name


def test_session_names_sort_by_start_time() -> None:
    a = session_name(START, "ffffffff" + "0" * 24)
    b = session_name(START + 0.001, "00000000" + "0" * 24)  # a millisecond later
    assert a == "20261121T174236.250Z-ffffffff"
    assert sorted([b, a]) == [a, b]
    assert iso(START) == "2026-11-21T17:42:36.250Z"


async def test_session_files_layout_and_atomic_writes(tmp_path: Path) -> None:
    files = SessionFiles(tmp_path, "fe80::1", START, profiler_id="ab" * 16)
    await files.create()
    assert files.path == tmp_path / "fe80_1" / "20261121T174236.250Z-abababab"
    await files.archive.write(b"bsprof\x00\x00")
    await files.archive.write(b"more")
    await files.archive.close()
    assert (files.path / "capture.bsprof").read_bytes() == b"bsprof\x00\x00more"
    first = await files.write_chunk(b'{"chunk":1}')
    second = await files.write_chunk(b'{"chunk":2}')
    assert [first.name, second.name] == ["000001.json", "000002.json"]
    assert json.loads(second.read_bytes()) == {"chunk": 2}
    record = SessionRecord("s", "ab" * 16, {"dir": "fe80_1"}, START, end=START + 2.5)
    record.add_error("connection_lost", "gone")
    await files.write_record(record)
    saved = read_record(files.path)
    assert saved["status"] == "streaming"
    assert saved["start"] == "2026-11-21T17:42:36.250Z"
    assert saved["duration_seconds"] == 2.5
    assert saved["errors"] == [{"kind": "connection_lost", "message": "gone"}]
    assert saved["format"] == 1
    assert not list(tmp_path.rglob("*.tmp"))
    with pytest.raises(FileExistsError):  # a session directory is never reused
        await SessionFiles(tmp_path, "fe80::1", START, profiler_id="ab" * 16).create()


async def test_archive_syncs_periodically_and_at_close(tmp_path: Path) -> None:
    path = tmp_path / "a" / "capture.bsprof"
    archive = ArchiveWriter(path, sync_seconds=0.0)
    await archive.open()
    await archive.write(b"x" * 10)
    assert path.read_bytes() == b"x" * 10  # in the kernel before write() returns: no buffer
    # sync_seconds=0: a background fsync follows every write
    await until(lambda: archive.synced_bytes >= 10, 5, step=0.005)
    archive.sync_seconds = 3600
    await archive.write(b"y" * 5)
    assert path.read_bytes() == b"x" * 10 + b"y" * 5
    assert (archive.bytes, archive.synced_bytes) == (15, 10)
    await archive.close()
    assert archive.synced_bytes == 15
    assert path.stat().st_mode & 0o777 == 0o600  # app internals: owner-only
    await archive.close()  # idempotent


async def test_archive_write_does_not_wait_for_fsync(tmp_path: Path, monkeypatch) -> None:
    """A slow disk must not hold up the stream: fsync runs in a thread, write() goes on."""
    import os
    import threading

    release = threading.Event()
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        release.wait(5)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    archive = ArchiveWriter(tmp_path / "capture.bsprof", sync_seconds=0.0)
    await archive.open()
    async with asyncio.timeout(2):
        for _ in range(100):
            await archive.write(b"z" * 100)
    assert archive.bytes == 10_000 and archive.synced_bytes == 0
    release.set()
    await archive.close()
    assert archive.synced_bytes == 10_000


async def test_archive_never_reuses_a_file(tmp_path: Path) -> None:
    path = tmp_path / "capture.bsprof"
    path.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        await ArchiveWriter(path).open()
    assert path.read_bytes() == b"old"


def test_statuses_are_one_enum_written_as_text() -> None:
    from rokuprof.capture import record as session

    assert [s.value for s in session.SessionStatus] == [
        "streaming",
        "complete",
        "truncated",
        "interrupted",
        "failed",
    ]
    assert session.FAILED is session.SessionStatus.FAILED and session.FAILED == "failed"
    assert not session.STREAMING.final and session.TRUNCATED.final
    record = SessionRecord("s", "p" * 32, {}, START, status=session.INTERRUPTED)
    assert json.loads(json.dumps(record.to_json()))["status"] == "interrupted"
