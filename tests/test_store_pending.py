"""The uploader's window of pending chunks (rokuprof/store/pending.py): pure bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rokuprof.store.pending import PendingWindow


@dataclass(frozen=True)
class Chunk:
    key: str
    size: int = 10


def test_it_holds_the_oldest_and_counts_every_one() -> None:
    w: PendingWindow[Chunk] = PendingWindow(2)
    for name in "abc":
        w.add(Chunk(name))
    w.add(Chunk("a"))  # announced twice: counted once
    assert list(w.items) == ["a", "b"] and (w.pending, w.pending_bytes) == (3, 30)
    assert not w.complete  # "c" waits on disk
    w.forget(Chunk("a"), in_flight=0)
    assert not w.scan_due  # "b" is still to send
    w.forget(Chunk("zz"), in_flight=0)  # not held: nothing changes
    assert w.pending == 2
    w.add(Chunk("d"))  # newer than "c": not held before it
    assert list(w.items) == ["b"] and w.pending == 3
    w.forget(Chunk("b"), in_flight=0)
    assert w.scan_due and (w.pending, len(w)) == (2, 0)  # the rest is on disk: rescan


def test_the_window_is_used_up_when_all_it_holds_is_in_flight() -> None:
    w: PendingWindow[Chunk] = PendingWindow(2)
    for name in "abc":
        w.add(Chunk(name))
    w.forget(Chunk("a"), in_flight=1)  # "b", the only one held, is being sent
    assert w.scan_due


def test_a_scan_is_reconciled_with_what_happened_meanwhile() -> None:
    w: PendingWindow[Chunk] = PendingWindow(10)
    w.add(Chunk("a"))
    w.scan_started()
    w.arrived.append(Path("/out/dev/s/chunks/000009.json"))
    w.forget(Chunk("a"), in_flight=0)  # delivered while the scan listed the spool
    arrived, settled = w.scan_ended()
    assert arrived == [Path("/out/dev/s/chunks/000009.json")] and settled == {"a"}
    assert (w.arrived, w.settled, w.scanning, w.scan_due) == ([], set(), False, False)
    w.replace([Chunk("a"), Chunk("b", 5)], pending=2, pending_bytes=15, settled=settled)
    assert list(w.items) == ["b"] and (w.pending, w.pending_bytes, w.complete) == (1, 5, True)


@given(st.integers(1, 5), st.lists(st.tuples(st.booleans(), st.integers(0, 9)), max_size=40))
def test_the_figures_match_the_chunks_pending(size: int, script) -> None:
    """Adds and forgets in any order: the counts are those of the chunks still pending, the
    held ones are the oldest of them, and never more than ``size``."""
    w: PendingWindow[Chunk] = PendingWindow(size)
    pending: list[Chunk] = []  # what is really pending, oldest first
    for add, n in script:
        chunk = Chunk(f"{n:02d}", n + 1)
        if add and chunk not in pending and (not pending or chunk.key > pending[-1].key):
            pending.append(chunk)  # chunks are announced oldest first
            w.add(chunk)
        elif not add and chunk in w.items.values():
            pending.remove(chunk)
            w.forget(chunk, in_flight=0)
        assert w.pending == len(pending) and w.pending_bytes == sum(c.size for c in pending)
        assert len(w) <= size and list(w.items.values()) == pending[: len(w)]
        if w.scan_due:  # a rescan brings the oldest back in
            w.scan_ended()
            w.replace(pending[:size], len(pending), w.pending_bytes, set())
