"""The session layout object on real directories: where each file is, which files are chunks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rokuprof.capture.session import SessionFiles, SessionRecord
from rokuprof.store.files import write_atomic
from rokuprof.store.layout import (
    SessionDir,
    chunk_index,
    chunk_name,
    deleting,
    is_chunk,
    sessions,
)

START = 1_795_282_956.25  # 2026-11-21T17:42:36.250Z


def make_session(root: Path, device: str = "YN00AA000001", start: float = START) -> SessionDir:
    s = SessionDir.new(root, device, start, "a1b2c3d4" + "0" * 24)
    s.chunks.mkdir(parents=True)
    return s


@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("000001.json", 1),
        ("1000000.json", 1_000_000),
        ("000001.json.tmp", None),  # an atomic write in progress (or a crash's leftover)
        ("000001.reason.json", None),  # a rejection's reason
        ("notes.json", None),
        (".000001.json", None),
        ("000001.JSON", None),
        ("０００００１.json", None),  # digits, but not ASCII ones
        ("000001", None),
        (".json", None),
    ],
)
def test_which_names_are_chunks(name: str, index: int | None) -> None:
    assert chunk_index(name) == index
    assert is_chunk(name) is (index is not None)


def test_chunk_names_round_trip() -> None:
    assert chunk_name(1) == "000001.json"
    assert chunk_index(chunk_name(1_234_567)) == 1_234_567


def test_paths_of_a_session(tmp_path: Path) -> None:
    s = SessionDir.new(tmp_path, "fe80::1%eth0", START, "a1b2c3d4" + "0" * 24)
    assert s.path == tmp_path / "fe80_1_eth0" / "20261121T174236.250Z-a1b2c3d4"
    assert s.device == "fe80_1_eth0"
    assert s.archive == s.path / "capture.bsprof"
    assert s.record == s.path / "session.json"
    assert s.chunk(3) == s.path / "chunks" / "000003.json"
    assert SessionDir.of_chunk(s.chunk(3)) == s
    assert SessionDir.of_chunk(s.delivered_marker("000003.json")) == s
    assert s.rejection_reason("000003.json") == s.path / "rejected" / "000003.reason.json"
    assert s.export(".pb.gz") == s.path / "capture.pb.gz"
    assert s.deleting == s.path.parent / ".20261121T174236.250Z-a1b2c3d4.deleting"


def test_only_chunk_files_count_and_markers_settle_them(tmp_path: Path) -> None:
    s = make_session(tmp_path)
    for i in (1, 2, 3, 4):
        write_atomic(s.chunk(i), b"{}")
    (s.chunks / "000005.json.tmp").write_bytes(b"{")  # half-written by a crash
    (s.chunks / "README.json").write_text("{}")  # a stray file
    (s.chunks / "000006.json").mkdir()  # named as one, but not a file
    assert s.chunk_names() == {chunk_name(i) for i in (1, 2, 3, 4)}
    write_atomic(s.delivered_marker("000001.json"), b"{}")
    s.rejected.mkdir()
    (s.chunks / "000002.json").rename(s.rejected / "000002.json")
    write_atomic(s.rejection_reason("000002.json"), b"{}")
    s.dropped.mkdir()
    (s.dropped / "000003.json").touch()
    (s.chunks / "000003.json").unlink()
    (s.delivered / "stray.json").write_text("{}")
    delivered, rejected, dropped = s.settled()
    assert (delivered, rejected, dropped) == ({"000001.json"}, {"000002.json"}, {"000003.json"})
    assert s.pending_names() == {"000004.json"}
    built = s.built_chunks()
    assert [p.relative_to(s.path).as_posix() for p in built] == [
        "chunks/000001.json",
        "rejected/000002.json",
        "chunks/000004.json",
    ]


def test_a_missing_session_has_nothing(tmp_path: Path) -> None:
    s = SessionDir(tmp_path / "gone" / "session")
    assert s.chunk_names() == set() and s.pending_names() == set() and s.built_chunks() == []
    with pytest.raises(FileNotFoundError):
        s.read_record()


def test_walk_skips_hidden_names_files_and_symlinks(tmp_path: Path) -> None:
    a = make_session(tmp_path, "A", START + 1)
    b = make_session(tmp_path, "A", START)
    c = make_session(tmp_path, "B", START)
    (tmp_path / "A" / "notes.txt").write_text("not a session")
    (tmp_path / ".hidden" / "s").mkdir(parents=True)
    doomed = make_session(tmp_path, "B", START + 2)
    doomed.path.rename(doomed.deleting)
    (tmp_path / "A" / "link").symlink_to(c.path)
    assert sessions(tmp_path) == [b, a, c]
    assert deleting(tmp_path) == [doomed.deleting]
    assert sessions(tmp_path / "missing") == []


async def test_session_files_write_where_the_layout_says(tmp_path: Path) -> None:
    files = SessionFiles(tmp_path, "YN00AA000001", START, "a1b2c3d4" + "0" * 24)
    s = SessionDir.new(tmp_path, "YN00AA000001", START, files.profiler_id)
    await files.create()
    await files.archive.write(b"bsprof")
    await files.archive.close()
    first = await files.write_chunk(b"{}")
    record = SessionRecord(files.name, files.profiler_id, {"dir": "YN00AA000001"}, START)
    await files.write_record(record)
    assert files.path == s.path and first == s.chunk(1)
    assert s.archive.read_bytes() == b"bsprof"
    assert s.chunk_names() == {"000001.json"}
    assert s.read_record()["status"] == "streaming"
    assert json.loads(s.record.read_text())["start"] == "2026-11-21T17:42:36.250Z"
