"""One session on disk: the writer that creates its directory and fills it with the archive, the
record (:mod:`rokuprof.capture.record`) and the chunks.

Where each file goes (and which files are chunks) is :mod:`rokuprof.store.layout`'s to say.
``session.json`` and the chunks are written atomically (:func:`rokuprof.store.files.write_atomic`),
never through a symbolic link below the output directory (a linked device directory is refused
with :class:`~rokuprof.store.files.SymlinkRefused`, naming it).
"""

from __future__ import annotations

import asyncio
import uuid
from functools import partial
from pathlib import Path

from rokuprof.capture.archive import ArchiveWriter
from rokuprof.capture.record import SessionRecord
from rokuprof.store.files import make_dirs, write_atomic
from rokuprof.store.layout import SessionDir
from rokuprof.store.layout import safe_name as safe_name  # re-exported: callers name devices
from rokuprof.store.layout import session_name as session_name
from rokuprof.store.trace_spool import TraceSpool


class SessionFiles:
    """Creates and fills one session directory."""

    def __init__(self, root: Path, device_dir: str, start: float, profiler_id: str | None = None):
        self.profiler_id = profiler_id or uuid.uuid4().hex
        self.dir = SessionDir.new(root, device_dir, start, self.profiler_id)
        self.name = self.dir.name
        self.path = self.dir.path
        self.archive = ArchiveWriter(self.dir.archive)
        self.chunks_written = 0

    @property
    def session_file(self) -> Path:
        return self.dir.record

    async def create(self) -> None:
        """Make the directory and open the archive, without suspending: the caller archives
        bytes it already holds right after (two metadata calls, as cheap as a write)."""
        self.create_now()

    def create_now(self) -> None:
        """:meth:`create` for a synchronous caller (a transport callback)."""
        make_dirs(self.path, exist_ok=False, within=self.dir.root)  # no link below out
        self.archive.open_now()

    async def write_chunk(self, chunk: bytes) -> Path:
        """Write the next ``chunks/NNNNNN.json`` (a chunk's JSON bytes; atomically, off the
        event loop)."""
        self.chunks_written += 1
        path = self.dir.chunk(self.chunks_written)
        await asyncio.to_thread(partial(write_atomic, path, chunk, within=self.dir.root))
        return path

    async def adopt_trace(self, spool: TraceSpool) -> Path:
        """The run's finished app-trace spool as its ``trace.perfetto-trace`` (a rename, off
        the event loop)."""
        return await asyncio.to_thread(spool.move_into, self.dir)

    async def write_record(self, record: SessionRecord) -> None:
        await asyncio.to_thread(self.dir.write_record, record.to_json())


def read_record(session_dir: Path) -> dict[str, object]:
    """The ``session.json`` of a session directory, as a dict."""
    return SessionDir(Path(session_dir)).read_record()
