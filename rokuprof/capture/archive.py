"""The raw archive of one run: every body byte, in order, nothing else, written as it arrives.

Writes go through aiofiles (the event loop never waits on the disk); ``flush`` + ``fsync`` run
at most every ``sync_seconds`` and at close. The file is always a prefix of what the device sent.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import aiofiles

ARCHIVE_NAME = "capture.bsprof"


class ArchiveWriter:
    """Append-only writer of ``capture.bsprof``. All calls must come from one task at a time."""

    def __init__(self, path: Path, sync_seconds: float = 1.0) -> None:
        self.path = path
        self.sync_seconds = sync_seconds
        self.bytes = 0
        self.synced_bytes = 0
        self._file = None
        self._last_sync = time.monotonic()

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = await aiofiles.open(self.path, "xb")

    async def write(self, data: bytes) -> None:
        await self._file.write(data)
        self.bytes += len(data)
        if time.monotonic() - self._last_sync >= self.sync_seconds:
            await self.sync()

    async def sync(self) -> None:
        """Flush Python's buffer and fsync the file."""
        if self._file is None:
            return
        await self._file.flush()
        await asyncio.to_thread(os.fsync, self._file.fileno())
        self.synced_bytes = self.bytes
        self._last_sync = time.monotonic()

    async def close(self) -> None:
        if self._file is None:
            return
        try:
            await self.sync()
        finally:
            file, self._file = self._file, None
            await file.close()
