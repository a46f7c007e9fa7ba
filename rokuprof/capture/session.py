"""One session on disk: its record (``session.json``), statuses, and the writer that creates the
directory and fills it with the archive, the record and the chunks.

Where each file goes (and which files are chunks) is :mod:`rokuprof.store.layout`'s to say.
``session.json`` and the chunks are written atomically (:func:`rokuprof.store.files.write_atomic`),
never through a symbolic link below the output directory (a linked device directory is refused
with :class:`~rokuprof.store.files.SymlinkRefused`, naming it).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from rokuprof import __version__
from rokuprof.capture.archive import ArchiveWriter
from rokuprof.store.files import make_dirs, write_atomic
from rokuprof.store.layout import SessionDir, SessionStatus
from rokuprof.store.layout import safe_name as safe_name  # re-exported: callers name devices
from rokuprof.store.layout import session_name as session_name
from rokuprof.timefmt import utc_iso_or_none as iso

SESSION_FORMAT = 1


# The statuses by their old names (``SessionStatus`` lives with the layout, below ``capture/``).
STREAMING = SessionStatus.STREAMING
COMPLETE = SessionStatus.COMPLETE
TRUNCATED = SessionStatus.TRUNCATED
INTERRUPTED = SessionStatus.INTERRUPTED
FAILED = SessionStatus.FAILED
STATUSES = tuple(SessionStatus)


@dataclass
class SessionRecord:
    """What ``session.json`` says about one run."""

    session: str
    profiler_id: str
    device: dict[str, object]
    start: float  # Unix seconds: when the stream connected
    status: SessionStatus = SessionStatus.STREAMING
    end: float | None = None
    app: dict[str, object] = field(default_factory=dict)
    profiler: dict[str, object] = field(default_factory=dict)
    bytes: int = 0
    entries: int = 0
    chunks: int = 0
    end_reason: str = ""
    errors: list[dict[str, object]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    chunk_report: dict[str, object] = field(default_factory=dict)
    exports: dict[str, object] = field(default_factory=dict)  # format -> file, bytes or error
    environment: str | None = None
    release: str | None = None

    def add_error(self, kind: str, message: str, **extra: object) -> None:
        self.errors.append({"kind": kind, "message": message, **extra})

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["start"] = iso(self.start)
        data["end"] = iso(self.end)
        data["duration_seconds"] = round(self.end - self.start, 3) if self.end is not None else None
        return {"format": SESSION_FORMAT, "rokuprof": __version__, **data}


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
    def chunks_dir(self) -> Path:
        return self.dir.chunks

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

    async def write_record(self, record: SessionRecord) -> None:
        await asyncio.to_thread(self.dir.write_record, record.to_json())


def read_record(session_dir: Path) -> dict[str, object]:
    """The ``session.json`` of a session directory, as a dict."""
    return SessionDir(Path(session_dir)).read_record()
