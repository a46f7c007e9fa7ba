"""One session on disk: ``OUT/<device>/<session>/`` with the archive, ``session.json`` and chunks.

::

    OUT/<device>/<session>/
        capture.bsprof          every body byte received, in order
        session.json            device, app, start/end, bytes, entries, status, errors
        chunks/000001.json ...  one Sentry V2 chunk payload per file
        capture.pb.gz ...       exports asked for (watch --export, [capture] export)

``<device>`` is the serial number (else the host), ``<session>`` the UTC start time and a short
id, so listings sort by time. ``session.json`` and the chunks are written atomically
(:func:`rokuprof.store.files.write_atomic`).
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rokuprof import __version__
from rokuprof.capture.archive import ARCHIVE_NAME, ArchiveWriter
from rokuprof.store.files import make_dirs, write_atomic

SESSION_FILE = "session.json"
CHUNKS_DIR = "chunks"
SESSION_FORMAT = 1

# Final statuses of a session ("streaming" while the run is being captured).
STREAMING = "streaming"
COMPLETE = "complete"  # the device sent the whole stream (footer) and closed
TRUNCATED = "truncated"  # the run ended early (device gone, reset, idle timeout, cut short)
INTERRUPTED = "interrupted"  # the user stopped the capture during the run
FAILED = "failed"  # the data was corrupt (or the answer was not a profile)
STATUSES = (STREAMING, COMPLETE, TRUNCATED, INTERRUPTED, FAILED)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, fallback: str = "device") -> str:
    """A file-name-safe form of a serial number or host (``fe80::1`` -> ``fe80_1``)."""
    name = _UNSAFE.sub("_", text).strip("._")
    return name[:100] or fallback


def iso(ts: float | None) -> str | None:
    """Unix seconds as ISO 8601 UTC with milliseconds."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def session_name(start: float, profiler_id: str) -> str:
    """``20261121T150405.123Z-<8 hex>``: the UTC start to the millisecond, so that a listing of
    a device's sessions sorts by start time even for runs that start within the same second."""
    when = datetime.fromtimestamp(start, UTC)
    return f"{when:%Y%m%dT%H%M%S}.{when.microsecond // 1000:03d}Z-{profiler_id[:8]}"


@dataclass
class SessionRecord:
    """What ``session.json`` says about one run."""

    session: str
    profiler_id: str
    device: dict[str, object]
    start: float  # Unix seconds: when the stream connected
    status: str = STREAMING
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
        self.name = session_name(start, self.profiler_id)
        self.path = Path(root) / safe_name(device_dir) / self.name
        self.archive = ArchiveWriter(self.path / ARCHIVE_NAME)
        self.chunks_written = 0

    @property
    def chunks_dir(self) -> Path:
        return self.path / CHUNKS_DIR

    @property
    def session_file(self) -> Path:
        return self.path / SESSION_FILE

    async def create(self) -> None:
        """Make the directory and open the archive, without suspending: the caller archives
        bytes it already holds right after (two metadata calls, as cheap as a write)."""
        self.create_now()

    def create_now(self) -> None:
        """:meth:`create` for a synchronous caller (a transport callback)."""
        make_dirs(self.path, exist_ok=False)
        self.archive.open_now()

    async def write_chunk(self, chunk: bytes) -> Path:
        """Write the next ``chunks/NNNNNN.json`` (a chunk's JSON bytes; atomically, off the
        event loop)."""
        self.chunks_written += 1
        path = self.chunks_dir / f"{self.chunks_written:06d}.json"
        await asyncio.to_thread(write_atomic, path, chunk)
        return path

    async def write_record(self, record: SessionRecord) -> None:
        data = json.dumps(record.to_json(), ensure_ascii=False, indent=2, allow_nan=False)
        await asyncio.to_thread(write_atomic, self.session_file, data + "\n")


def read_record(session_dir: Path) -> dict[str, object]:
    """The ``session.json`` of a session directory, as a dict."""
    return json.loads((Path(session_dir) / SESSION_FILE).read_text("utf-8"))
