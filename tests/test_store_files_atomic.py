"""Durable writes: a file appears whole or not at all."""

import os

import pytest

from rokuprof.store.files import sweep_tmp, write_atomic


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
