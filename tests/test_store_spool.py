"""The spool on disk: pending chunks, delivered markers, rejected chunks, resume after restart."""

from __future__ import annotations

import json
import os
from pathlib import Path

from store_helpers import write_chunks

from rokuprof.store.spool import Spool


def test_scan_finds_pending_chunks_oldest_first(tmp_path: Path) -> None:
    a = write_chunks(tmp_path, "dev1", "20261121T100000Z-aaaa", 2)
    b = write_chunks(tmp_path, "dev2", "20261121T090000Z-bbbb", 1)
    os.utime(b[0][0], (1000, 1000))  # the oldest by write time
    (tmp_path / ".hidden" / "x" / "chunks").mkdir(parents=True)
    (tmp_path / ".hidden" / "x" / "chunks" / "000001.json").write_text("{}")
    items, stats = Spool(tmp_path).scan()
    assert [i.path for i in items] == [b[0][0], a[0][0], a[1][0]]
    assert stats.pending == 3 and stats.oldest_mtime == 1000
    assert stats.pending_bytes == sum(p.stat().st_size for p, _ in a + b)


def test_delivered_and_rejected_chunks_are_no_longer_pending(tmp_path: Path) -> None:
    chunks = write_chunks(tmp_path, "dev", "s1", 3)
    spool = Spool(tmp_path, wall_clock=lambda: 1795428000.5)
    items, _ = spool.scan()
    marker = spool.mark_delivered(items[0], chunk_id=chunks[0][1], status=200)
    delivered = json.loads(marker.read_text())
    assert delivered["chunk_id"] == chunks[0][1] and delivered["delivered_at"] == 1795428000.5
    assert marker == tmp_path / "dev" / "s1" / "delivered" / "000001.json"
    moved = spool.mark_rejected(items[1], reason="HTTP 413 too large", status=413)
    assert moved == tmp_path / "dev" / "s1" / "rejected" / "000002.json"
    assert not chunks[1][0].exists() and moved.exists()
    reason = json.loads((moved.parent / "000002.reason.json").read_text())
    assert reason["status"] == 413 and reason["reason"] == "HTTP 413 too large"
    assert reason["at"] == 1795428000.5  # the injected wall clock
    # a new Spool (a restart) sees the same thing: only chunk 3 is pending
    items, stats = Spool(tmp_path).scan()
    assert [i.path for i in items] == [chunks[2][0]]
    assert (stats.pending, stats.delivered, stats.rejected) == (1, 1, 1)
    assert spool.item(chunks[0][0]) is None and spool.item(chunks[2][0]) is not None
    assert not list(tmp_path.rglob("*.tmp"))


def test_only_chunk_files_are_pending(tmp_path: Path) -> None:
    """A crash's ``*.tmp``, a stray JSON file or a directory in ``chunks/`` is not a chunk: it
    is neither counted nor sent (a stray used to be sent, refused and moved to rejected/)."""
    chunks = write_chunks(tmp_path, "dev", "s1", 2)
    where = chunks[0][0].parent
    (where / "000003.json.tmp").write_text("{")
    (where / "notes.json").write_text("{}")
    (where / "000004.json").mkdir()
    spool = Spool(tmp_path)
    items, stats = spool.scan()
    assert [i.path for i in items] == [p for p, _ in chunks]
    assert stats.pending == 2
    assert [i.path for i in spool.pending_in(tmp_path / "dev" / "s1")] == [p for p, _ in chunks]
    assert spool.item(where / "notes.json") is None
    assert spool.item(where / "000004.json") is None
