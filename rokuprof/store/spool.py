"""The upload spool, kept on disk: the chunk files themselves plus a marker per delivered chunk.

Every chunk the capture writes (``OUT/<device>/<session>/chunks/NNNNNN.json``) is pending until
``delivered/NNNNNN.json`` exists next to ``chunks/`` in the same session (written atomically
after Sentry answered 2xx), or until it was refused for good and moved to
``rejected/NNNNNN.json`` with ``rejected/NNNNNN.reason.json`` beside it. Nothing is held only in
memory, so a restart resumes where the previous process stopped: :meth:`Spool.scan` finds
every pending chunk again. Delivery is at-least-once (a crash between the 2xx and the marker
sends the chunk again; its ``chunk_id`` is the dedup key).

All methods are synchronous file operations: call them through :func:`asyncio.to_thread`.
Names starting with a dot (e.g. sessions being deleted by retention) are ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from rokuprof.store.files import fsync_dir, write_atomic

CHUNKS_DIR = "chunks"
DELIVERED_DIR = "delivered"
REJECTED_DIR = "rejected"
SUFFIX = ".json"


@dataclass(frozen=True, order=True)
class SpoolItem:
    """One pending chunk file; ordered oldest first (write time, then path)."""

    mtime: float
    path: Path
    size: int = 0

    @property
    def session_dir(self) -> Path:
        return self.path.parent.parent

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

    def oldest_age(self, now: float | None = None) -> float:
        if self.oldest_mtime is None:
            return 0.0
        return max(0.0, (now if now is not None else time.time()) - self.oldest_mtime)


def _visible_dirs(path: Path) -> list[Path]:
    try:
        entries = list(os.scandir(path))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(
        Path(e.path) for e in entries if e.is_dir(follow_symlinks=False) and e.name[0] != "."
    )


def _names(directory: Path) -> set[str]:
    try:
        return {n for n in os.listdir(directory) if n.endswith(SUFFIX)}
    except (FileNotFoundError, NotADirectoryError):
        return set()


class Spool:
    """Pending, delivered and rejected chunks under ``root`` (the capture's ``out``)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def session_dirs(self) -> list[Path]:
        """Every ``root/<device>/<session>`` directory, oldest session name first per device."""
        return [s for d in _visible_dirs(self.root) for s in _visible_dirs(d)]

    def pending_in(self, session_dir: Path) -> list[SpoolItem]:
        chunks = session_dir / CHUNKS_DIR
        done = _names(session_dir / DELIVERED_DIR) | _names(session_dir / REJECTED_DIR)
        items = []
        for name in sorted(_names(chunks) - done):
            path = chunks / name
            with contextlib.suppress(FileNotFoundError):
                st = path.stat()
                items.append(SpoolItem(st.st_mtime, path, st.st_size))
        return items

    def scan(self) -> tuple[list[SpoolItem], SpoolStats]:
        """Every pending chunk (oldest first) and the spool's figures."""
        items: list[SpoolItem] = []
        delivered = rejected = 0
        for session in self.session_dirs():
            items += self.pending_in(session)
            delivered += len(_names(session / DELIVERED_DIR))
            rejected += sum(
                1 for n in _names(session / REJECTED_DIR) if not n.endswith(".reason.json")
            )
        items.sort()
        stats = SpoolStats(
            pending=len(items),
            pending_bytes=sum(i.size for i in items),
            oldest_mtime=items[0].mtime if items else None,
            delivered=delivered,
            rejected=rejected,
        )
        return items, stats

    def item(self, path: Path | str) -> SpoolItem | None:
        """The spool item for a chunk file, ``None`` if it is gone or no longer pending."""
        path = Path(path)
        if self.is_done(path):
            return None
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        return SpoolItem(st.st_mtime, path, st.st_size)

    def is_done(self, path: Path) -> bool:
        session = path.parent.parent
        return (session / DELIVERED_DIR / path.name).exists() or (
            session / REJECTED_DIR / path.name
        ).exists()

    def mark_delivered(self, item: SpoolItem, *, chunk_id: str, status: int) -> Path:
        """Record that Sentry took the chunk (after a 2xx): the chunk is never sent again."""
        marker = item.session_dir / DELIVERED_DIR / item.name
        record = {"chunk_id": chunk_id, "status": status, "delivered_at": time.time()}
        return write_atomic(marker, json.dumps(record) + "\n")

    def mark_rejected(self, item: SpoolItem, *, reason: str, status: int | None) -> Path:
        """Move a chunk refused for good to ``rejected/`` with ``NNNNNN.reason.json``."""
        rejected = item.session_dir / REJECTED_DIR
        stem = item.name[: -len(SUFFIX)]
        record = {"chunk": item.name, "status": status, "reason": reason, "at": time.time()}
        write_atomic(rejected / f"{stem}.reason.json", json.dumps(record) + "\n")
        target = rejected / item.name
        os.replace(item.path, target)
        fsync_dir(rejected)
        fsync_dir(item.path.parent)
        return target
