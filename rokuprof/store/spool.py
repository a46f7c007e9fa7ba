"""The upload spool, kept on disk: the chunk files themselves plus a marker per finished chunk.

Every chunk the capture writes (``chunks/NNNNNN.json`` in a session, see
:mod:`rokuprof.store.layout`) is pending until its ``delivered/`` marker exists (written
atomically after Sentry answered 2xx), or until it was refused for good and moved to
``rejected/`` with its reason beside it, or until it was dropped because the spool was full (the
chunk file is deleted, a ``dropped/`` marker records it with what the chunk covered). Nothing is
held only in memory, so a restart resumes where the previous process stopped: :meth:`Spool.scan`
finds every pending chunk again. Delivery is at-least-once (a crash between the 2xx and the marker
sends the chunk again; its ``chunk_id`` is the dedup key).

A scan lists each directory once and stats each pending chunk once; it can return only the
oldest ``window`` pending chunks (plus the figures of all of them), so what it keeps is bounded
whatever the backlog. All methods are synchronous file operations: call them through
:func:`asyncio.to_thread`. Names starting with a dot (e.g. sessions being deleted by retention)
and symbolic links below the root are ignored; no marker is written through a link.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import json
import os
import stat
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.sentry.coverage import coverage
from rokuprof.store.files import fsync_dir, make_dirs, open_new, write_atomic
from rokuprof.store.layout import SessionDir, is_chunk, sessions

DEFAULT_MAX_BYTES = 2 * 1024**3  # pending chunk bytes before the oldest are dropped


@dataclass(frozen=True, order=True, slots=True)
class SpoolItem:
    """One pending chunk file; ordered oldest first (write time, then path)."""

    mtime: float
    path: Path
    size: int = 0

    @property
    def session(self) -> SessionDir:
        return SessionDir.of_chunk(self.path)

    @property
    def session_dir(self) -> Path:
        return self.session.path

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def key(self) -> str:
        """A stable identity for queues: the path as text."""
        return str(self.path)


@dataclass(frozen=True)
class SpoolStats:
    pending: int = 0
    pending_bytes: int = 0
    oldest_mtime: float | None = None
    delivered: int = 0
    rejected: int = 0
    dropped: int = 0

    def oldest_age(self, now: float | None = None) -> float:
        if self.oldest_mtime is None:
            return 0.0
        return max(0.0, (now if now is not None else time.time()) - self.oldest_mtime)


@dataclass(frozen=True)
class ScanResult:
    """What one scan found: the oldest pending chunks (all, or a window) and the figures of
    every pending chunk."""

    items: list[SpoolItem]
    stats: SpoolStats
    newest: dict[str, str] = field(default_factory=dict)  # session dir -> last pending name

    def saw(self, path: Path | str) -> bool:
        """Whether this scan counted the chunk file ``path`` (chunk names grow within a
        session, so a chunk written after the scan listed its directory was not counted)."""
        path = Path(path)
        newest = self.newest.get(str(SessionDir.of_chunk(path).path))
        return newest is not None and path.name <= newest


class _Counter:
    def __init__(self) -> None:
        self.pending = self.pending_bytes = self.delivered = self.rejected = self.dropped = 0
        self.oldest: float | None = None
        self.newest: dict[str, str] = {}


class Spool:
    """Pending, delivered, rejected and dropped chunks under ``root`` (the capture's ``out``)."""

    def __init__(self, root: Path | str, wall_clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self.wall_clock = wall_clock  # the time written into markers

    def session_dirs(self) -> list[Path]:
        """Every ``root/<device>/<session>`` directory, oldest session name first per device."""
        return [s.path for s in sessions(self.root)]

    def _pending(self, session: Path, count: _Counter) -> Iterator[tuple[float, str, int]]:
        """(mtime, path, size) of each pending chunk of ``session``; one stat per chunk."""
        where = SessionDir(session)
        delivered, rejected, dropped = where.settled()
        count.delivered += len(delivered)
        count.rejected += len(rejected)
        count.dropped += len(dropped)
        done = delivered | rejected | dropped
        newest = ""
        try:
            entries = os.scandir(where.chunks)
        except (FileNotFoundError, NotADirectoryError):
            return
        with entries:
            for entry in entries:
                name = entry.name
                if not is_chunk(name) or name in done or not entry.is_file():
                    continue
                try:
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                count.pending += 1
                count.pending_bytes += st.st_size
                if count.oldest is None or st.st_mtime < count.oldest:
                    count.oldest = st.st_mtime
                newest = max(newest, name)
                yield st.st_mtime, entry.path, st.st_size
        if newest:
            count.newest[str(session)] = newest

    def scan_window(self, window: int | None = None) -> ScanResult:
        """The oldest ``window`` pending chunks (every one when ``None``), oldest first, and
        the figures of all of them."""
        count = _Counter()
        found = (t for s in self.session_dirs() for t in self._pending(s, count))
        rows: Iterable[tuple[float, str, int]]
        if window is None:
            rows = sorted(found)
        elif window <= 0:
            rows = ()
            deque(found, maxlen=0)  # the figures only
        else:
            rows = heapq.nsmallest(window, found)
        items = [SpoolItem(mtime, Path(path), size) for mtime, path, size in rows]
        stats = SpoolStats(
            pending=count.pending,
            pending_bytes=count.pending_bytes,
            oldest_mtime=count.oldest,
            delivered=count.delivered,
            rejected=count.rejected,
            dropped=count.dropped,
        )
        return ScanResult(items, stats, count.newest)

    def scan(self) -> tuple[list[SpoolItem], SpoolStats]:
        """Every pending chunk (oldest first) and the spool's figures."""
        result = self.scan_window(None)
        return result.items, result.stats

    def pending_in(self, session_dir: Path) -> list[SpoolItem]:
        """The pending chunks of one session, in name order."""
        rows = sorted(self._pending(Path(session_dir), _Counter()), key=lambda row: row[1])
        return [SpoolItem(mtime, Path(path), size) for mtime, path, size in rows]

    def item(self, path: Path | str) -> SpoolItem | None:
        """The spool item for a chunk file, ``None`` if it is gone or no longer pending."""
        path = Path(path)
        if not is_chunk(path.name) or self.is_done(path):
            return None
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return SpoolItem(st.st_mtime, path, st.st_size)

    def is_done(self, path: Path) -> bool:
        return any(m.exists() for m in SessionDir.of_chunk(path).markers_of(path.name))

    def mark_delivered(self, item: SpoolItem, *, chunk_id: str, status: int) -> Path:
        """Record that Sentry took the chunk (after a 2xx): the chunk is never sent again."""
        marker = item.session.delivered_marker(item.name)
        record = {"chunk_id": chunk_id, "status": status, "delivered_at": self.wall_clock()}
        return write_atomic(marker, json.dumps(record) + "\n", within=item.session.root)

    def mark_rejected(self, item: SpoolItem, *, reason: str, status: int | None) -> Path:
        """Move a chunk refused for good to ``rejected/``, with its reason beside it."""
        session = item.session
        rejected = session.rejected
        record = {"chunk": item.name, "status": status, "reason": reason, "at": self.wall_clock()}
        reason = json.dumps(record) + "\n"
        write_atomic(session.rejection_reason(item.name), reason, within=session.root)
        target = rejected / item.name
        os.replace(item.path, target)
        fsync_dir(rejected)
        fsync_dir(item.path.parent)
        return target

    def drop(self, items: Iterable[SpoolItem]) -> list[SpoolItem]:
        """Delete these pending chunk files (the spool is full, or the disk below its floor),
        each after writing its ``dropped/NNNNNN.json`` marker with what the chunk covered (so
        that a crash's catch-up does not build those samples again; empty if the chunk cannot
        be read); returns the ones that were still there. On a disk too full for the marker,
        the chunk goes first and the marker follows in the space it freed."""
        gone: list[SpoolItem] = []
        touched: set[Path] = set()
        for item in items:
            try:
                data = item.path.read_bytes()
            except FileNotFoundError:
                continue
            dropped = make_dirs(item.session.dropped, within=item.session.root)
            try:
                self._drop_marker(item, data)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                if not self._unlink(item):
                    continue
                self._drop_marker(item, data)
            else:
                if not self._unlink(item):
                    continue
            gone.append(item)
            touched.update((dropped, item.path.parent))
        for directory in touched:
            fsync_dir(directory)
        return gone

    @staticmethod
    def _unlink(item: SpoolItem) -> bool:
        try:
            item.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def _drop_marker(self, item: SpoolItem, data: bytes) -> None:
        marker = item.session.dropped / item.name
        try:
            covered = coverage(json.loads(data))
        except (ValueError, KeyError, TypeError, IndexError):  # not a chunk we can read
            with contextlib.suppress(FileExistsError):
                os.close(open_new(marker))
        else:
            text = json.dumps({"dropped_at": self.wall_clock(), **covered}) + "\n"
            write_atomic(marker, text, within=item.session.root)
