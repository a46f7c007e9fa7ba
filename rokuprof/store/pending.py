"""Which pending chunks the uploader holds in memory (pure bookkeeping, no files, no clock).

At most ``size`` of them, the oldest, oldest first, plus the count and bytes of every pending
chunk however large the backlog: the rest wait on disk, and a rescan brings them in when the
window is used up (:attr:`PendingWindow.scan_due`). While a scan lists the spool, chunks that
arrive or settle (delivered, rejected, dropped) are noted and reconciled with what it found.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Generic, Protocol, TypeVar


class Held(Protocol):
    """A pending chunk (a :class:`~rokuprof.store.spool.SpoolItem`)."""

    @property
    def key(self) -> str: ...
    @property
    def size(self) -> int: ...


H = TypeVar("H", bound=Held)


class PendingWindow(Generic[H]):
    """See the module docstring."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.items: dict[str, H] = {}  # oldest first
        self.complete = True  # every pending chunk is in ``items``
        self.pending = 0
        self.pending_bytes = 0
        self.scan_due = False  # the window is used up and more wait on disk
        self.scanning = False
        self.arrived: list[Path] = []  # announced while a scan ran
        self.settled: set[str] = set()  # stopped being pending while a scan ran

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def __len__(self) -> int:
        return len(self.items)

    def add(self, item: H) -> None:
        """A new pending chunk: counted, and held if every older one is held and there is room
        (else it waits on disk behind the older ones)."""
        if item.key in self.items:
            return
        self.pending += 1
        self.pending_bytes += item.size
        if self.complete and len(self.items) < self.size:
            self.items[item.key] = item
        else:
            self.complete = False

    def forget(self, item: H, in_flight: int) -> None:
        """``item`` is no longer pending (delivered, rejected, dropped or gone)."""
        if self.scanning:
            self.settled.add(item.key)
        if self.items.pop(item.key, None) is None:
            return
        self._uncount(item)
        if self.pending > len(self.items) <= in_flight:
            self.scan_due = True  # the rest waits on disk beyond the window

    def _uncount(self, item: H) -> None:
        self.pending = max(0, self.pending - 1)
        self.pending_bytes = max(0, self.pending_bytes - item.size)

    def scan_started(self) -> None:
        self.scanning = True

    def scan_ended(self) -> tuple[list[Path], set[str]]:
        """The scan is over (or failed): what arrived and what settled meanwhile."""
        self.scanning = False
        self.scan_due = False
        arrived, self.arrived = self.arrived, []
        settled, self.settled = self.settled, set()
        return arrived, settled

    def replace(
        self, oldest_first: Iterable[H], pending: int, pending_bytes: int, settled: set[str]
    ) -> None:
        """What a scan found, less the chunks that settled while it ran."""
        self.items = {item.key: item for item in oldest_first}
        self.pending, self.pending_bytes = pending, pending_bytes
        for key in settled:
            item = self.items.pop(key, None)
            if item is not None:
                self._uncount(item)
        self.complete = len(self.items) == self.pending
