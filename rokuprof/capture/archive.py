"""The raw archive of one run: every body byte, in order, nothing else, written as it arrives.

Every :meth:`ArchiveWriter.write` hands its bytes to the kernel at once (``os.write`` on a file
opened ``O_APPEND``, no user-space buffer) before the capture reads the next bytes: the page
cache outlives the process, so a ``kill -9`` loses nothing that was read. A write to the page
cache does not wait for the disk. ``fsync`` runs in a worker thread at most every
``sync_seconds`` (never awaited by :meth:`write`) and once more at :meth:`close`, which bounds
what a power loss can cost. The file is always a prefix of what the device sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from rokuprof.store.files import make_dirs, open_new

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class ArchiveWriter:
    """Append-only writer of a session's archive. All calls must come from one task at a time."""

    def __init__(self, path: Path, sync_seconds: float = 1.0) -> None:
        self.path = path
        self.sync_seconds = sync_seconds
        self.bytes = 0  # handed to the kernel
        self.synced_bytes = 0  # known to be on the disk
        self._fd: int | None = None
        self._last_sync = time.monotonic()
        self._syncing: asyncio.Task | None = None

    async def open(self) -> None:
        """Create the file (never an existing one); does not suspend."""
        self.open_now()

    def open_now(self) -> None:
        """:meth:`open` for a synchronous caller (a transport callback)."""
        make_dirs(self.path.parent)
        self._fd = open_new(self.path, _FLAGS)  # owner-only unless [capture] file_mode widens it
        self._last_sync = time.monotonic()

    async def write(self, data: bytes | memoryview) -> None:
        """Give ``data`` to the kernel now (whole; raises ``OSError`` e.g. when the disk is
        full) and start a background ``fsync`` when the last one is ``sync_seconds`` old."""
        self.write_now(data)

    def write_now(self, data: bytes | memoryview) -> None:
        """:meth:`write` for a synchronous caller: called from a transport's ``data_received``,
        no byte read from the socket waits in user space (needs a running event loop for the
        background ``fsync``)."""
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
            self.bytes += written
        if time.monotonic() - self._last_sync >= self.sync_seconds and self._syncing is None:
            self._syncing = asyncio.ensure_future(self._sync_in_thread())

    async def _sync_in_thread(self) -> None:
        upto = self.bytes
        self._last_sync = time.monotonic()
        try:
            await asyncio.to_thread(os.fsync, self._fd)
            self.synced_bytes = max(self.synced_bytes, upto)
        except OSError:
            pass  # the next sync (or close) tries again and reports
        finally:
            self._syncing = None

    async def sync(self) -> None:
        """Wait until every byte written so far is on the disk."""
        if self._fd is None:
            return
        if self._syncing is not None:
            with contextlib.suppress(Exception):
                await self._syncing
        upto = self.bytes
        await asyncio.to_thread(os.fsync, self._fd)
        self.synced_bytes = upto
        self._last_sync = time.monotonic()

    async def close(self) -> None:
        if self._fd is None:
            return
        try:
            await self.sync()
        finally:
            fd, self._fd = self._fd, None
            os.close(fd)
