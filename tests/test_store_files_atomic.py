"""Durable writes: a file appears whole or not at all."""

import os

import pytest

from rokuprof.store.files import sweep_tmp, write_atomic, write_atomic_stream


def test_write_atomic_replaces_whole(tmp_path):
    target = tmp_path / "sub" / "a.json"
    write_atomic(target, "first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.json"]


def test_failed_write_leaves_old_file_and_no_tmp(tmp_path, monkeypatch):
    target = tmp_path / "a.json"
    write_atomic(target, "old")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)  # stands in for a full disk
    with pytest.raises(OSError):
        write_atomic(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_sweep_tmp_removes_leftovers_only(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.json.tmp").write_text("half")
    (tmp_path / "x" / "a.json").write_text("whole")
    removed = sweep_tmp(tmp_path)
    assert [p.name for p in removed] == ["a.json.tmp"]
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["a.json"]


def test_write_atomic_stream_writes_each_piece_as_it_comes(tmp_path):
    """The file is made from pieces without holding them: while the pieces are asked for, the
    ones already given are in ``a.json.tmp`` on disk, and ``a.json`` keeps its old bytes."""
    target = tmp_path / "a.json"
    write_atomic(target, "old")
    tmp = tmp_path / "a.json.tmp"
    seen = []

    def pieces():
        for i in range(5):
            seen.append((tmp.stat().st_size if tmp.exists() else None, target.read_bytes()))
            yield bytes([65 + i]) * 100_000

    assert write_atomic_stream(target, pieces()) == 500_000
    assert [size for size, _ in seen] == [0, 100_000, 200_000, 300_000, 400_000]
    assert all(old == b"old" for _, old in seen)
    assert target.read_bytes() == b"".join(bytes([65 + i]) * 100_000 for i in range(5))
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_write_atomic_stream_failing_pieces_leave_the_old_file_and_no_tmp(tmp_path):
    """An exporter that fails half-way (its own error, not the disk's) leaves the old file
    whole and no ``.tmp``; the error reaches the caller."""
    target = tmp_path / "a.json"
    write_atomic(target, "old")

    def pieces():
        yield b"x" * 70_000
        raise ValueError("the exporter failed")

    with pytest.raises(ValueError, match="exporter failed"):
        write_atomic_stream(target, pieces())
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
