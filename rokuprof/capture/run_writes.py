"""A run's chunks and ``session.json`` writes: one writer, in the order the machine asked.

:class:`RunWrites` queues :class:`~rokuprof.capture.machine.WriteChunk`,
:class:`~rokuprof.capture.machine.WriteRecord` and the closing
:class:`~rokuprof.capture.machine.Finished`; :meth:`RunWrites.loop` writes them off the event
loop (the session's writes run in worker threads), each retried with backoff while the disk is
full (:meth:`~rokuprof.capture.held.ArchiveHold.spaced`), and keeps the final record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rokuprof.capture.machine import Action, Finished, WriteChunk, WriteRecord

if TYPE_CHECKING:
    from rokuprof.capture.held import ArchiveHold
    from rokuprof.capture.record import SessionRecord
    from rokuprof.capture.session import SessionFiles


class RunWrites:
    """The ordered file writes of one run (see the module docstring)."""

    def __init__(self, hold: ArchiveHold, on_chunk: Callable[[SessionFiles, Path], None]) -> None:
        self.hold = hold
        self.on_chunk = on_chunk  # after each chunk file: the count and the views
        self.files: SessionFiles | None = None  # set when the session is created
        self.record: SessionRecord | None = None  # the final record, once written
        self._queue: asyncio.Queue[WriteChunk | WriteRecord | Finished] = asyncio.Queue()

    def put(self, action: WriteChunk | WriteRecord | Finished) -> None:
        self._queue.put_nowait(action)

    async def loop(self) -> None:
        """Write what is queued, in order, until :class:`Finished`."""
        while True:
            action = await self._queue.get()
            match action:
                case WriteChunk(data):
                    path = await self.hold.spaced(self.files.write_chunk, data)
                    self.on_chunk(self.files, path)
                case WriteRecord(record):
                    await self.hold.spaced(self.files.write_record, record)
                case Finished(record):
                    self.record = record
                    return

    async def flush(self, pending: list[Action]) -> None:
        """Cancelled: write what is still queued, then ``pending``, here and now."""
        queued: list[Action] = []
        while not self._queue.empty():
            queued.append(self._queue.get_nowait())
        if self.files is None:
            return
        for action in queued + pending:
            match action:
                case WriteChunk(data):
                    await self.files.write_chunk(data)
                case WriteRecord(record):
                    await self.files.write_record(record)
                case Finished(record):
                    self.record = record
