"""The output directory's layout, owned here and nowhere else::

    OUT/<device>/<session>/
        capture.bsprof                the archive: every body byte received, in order
        trace.perfetto-trace          the app trace (Roku OS 15.1+): every byte received, in order
        session.json                  the record (device, app, start/end, status, errors, ...)
        vitals.jsonl                  the app's CPU % and memory from ``chanperf``, a line a reading
        chunks/NNNNNN.json            Sentry V2 chunk payloads, numbered from 000001
        delivered/NNNNNN.json         marker: Sentry took chunks/NNNNNN.json (2xx)
        rejected/NNNNNN.json          a chunk refused for good, moved out of chunks/ ...
        rejected/NNNNNN.reason.json   ... and why
        dropped/NNNNNN.json           marker: deleted unsent, the spool was full (what it covered)
        pyroscope.json                marker: the pprof export was pushed (or refused)
        capture.pb.gz, ...            exports (``capture`` + the format's suffix)
    OUT/<device>/.<session>.deleting  a session being deleted by retention

``<device>`` is a file-name-safe serial number (else the host), ``<session>`` the UTC start to
the millisecond and a short id, so a device's sessions sort by start time. A chunk is a file
named ``<digits>.json``: the ``*.tmp`` of an atomic write, a ``.reason.json``, a directory and
any stray file are not. Names starting with a dot are skipped by every walk, and so is every
symbolic link below ``OUT`` (a linked device or session directory is never written, swept or
deleted through; a linked chunk, marker or chunk directory is not listed; crash recovery reads
nothing through a link; ``OUT`` itself may be a link). Paths are pure; the reading methods are
synchronous (call them through :func:`asyncio.to_thread`).
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import overload

from rokuprof.store.files import open_within, write_atomic
from rokuprof.timefmt import utc_compact

ARCHIVE_SUFFIX = ".bsprof"
EXPORT_STEM = "capture"  # the archive and the exports share it: capture.bsprof, capture.pb.gz
ARCHIVE_FILE = EXPORT_STEM + ARCHIVE_SUFFIX
RECORD_FILE = "session.json"
#: the device's Perfetto app trace, every byte as it arrived (Perfetto UI opens it as it is)
TRACE_FILE = "trace.perfetto-trace"
VITALS_FILE = "vitals.jsonl"  # device vitals, appended one JSON line per reading
PYROSCOPE_MARKER = "pyroscope.json"
CHUNKS_DIR = "chunks"
DELIVERED_DIR = "delivered"
REJECTED_DIR = "rejected"
DROPPED_DIR = "dropped"
CHUNK_SUFFIX = ".json"
#: A dropped marker holds at most what its chunk covered, so never more than a chunk (Sentry takes
#: chunks of at most 50 MiB): a larger one is not read.
MAX_MARKER_BYTES = 64 << 20
REASON_SUFFIX = ".reason.json"
DELETING_SUFFIX = ".deleting"
_LIST_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
)
#: The directories of a session that hold chunks or their markers.
CHUNK_DIRS = (CHUNKS_DIR, DELIVERED_DIR, REJECTED_DIR, DROPPED_DIR)


class SessionStatus(StrEnum):
    """A session's ``status`` in ``session.json``: ``streaming`` while the run is being
    captured, then one of the final ones."""

    STREAMING = "streaming"
    COMPLETE = "complete"  # the device sent the whole stream (footer) and closed
    TRUNCATED = "truncated"  # the run ended early (device gone, reset, idle timeout, cut short)
    INTERRUPTED = "interrupted"  # the user stopped the capture during the run
    FAILED = "failed"  # the data was corrupt (or the answer was not a profile)

    @property
    def final(self) -> bool:
        return self is not SessionStatus.STREAMING


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = re.compile(r"[0-9]+\.json")


def safe_name(text: str, fallback: str = "device") -> str:
    """A file-name-safe form of a serial number or host (``fe80::1`` -> ``fe80_1``, ``::1`` ->
    ``_1``: an IPv6 address keeps its leading ``_``, so it never reads as another name). A
    name already safe (and not hidden) is kept as it is, so that naming twice changes nothing."""
    if _UNSAFE.search(text) is None and text.strip(".") == text and 0 < len(text) <= 100:
        return text
    if _is_ipv6(text):
        name = _UNSAFE.sub("_", text.strip("[]")).strip(".")
    else:
        name = _UNSAFE.sub("_", text).strip("._")
    return name[:100] or fallback


def _is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text.strip("[]")).version == 6
    except ValueError:
        return False


#: ``profile --repeat`` (or several ``--device``) writes its runs' sessions into
#: ``OUT/series-<UTC start>-<id>/<device>/<session>`` with the series' record beside them.
SERIES_PREFIX = "series-"
SERIES_RECORD = "series.json"


def series_name(start: float, token: str) -> str:
    """``series-20261121T150405.123Z-<8 hex>``: a series directory's name, sorting by start."""
    return f"{SERIES_PREFIX}{utc_compact(start)}-{token[:8]}"


def session_name(start: float, profiler_id: str) -> str:
    """``20261121T150405.123Z-<8 hex>``: the UTC start to the millisecond, so that a listing of
    a device's sessions sorts by start time even for runs that start within the same second."""
    return f"{utc_compact(start)}-{profiler_id[:8]}"


def is_chunk(name: str) -> bool:
    """Whether a file name in ``chunks/`` (or a marker directory) names a chunk."""
    return _CHUNK.fullmatch(name) is not None


def chunk_name(index: int) -> str:
    """``000001.json`` for the first chunk of a session."""
    return f"{index:06d}{CHUNK_SUFFIX}"


def chunk_index(name: str) -> int | None:
    """The number of a chunk file name, ``None`` for anything that is not a chunk."""
    return int(name[: -len(CHUNK_SUFFIX)]) if is_chunk(name) else None


def is_hidden(name: str) -> bool:
    """Dot names: sessions being deleted, editors' files; every walk skips them."""
    return name.startswith(".")


def _chunk_names(directory: Path) -> set[str]:
    """Chunk names in ``directory``: regular files only, never a link to one, and none in a
    ``directory`` that is itself a link."""
    try:
        fd = os.open(directory, _LIST_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return set()
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link: not listed
            return set()
        raise
    try:
        with os.scandir(fd) as entries:  # the kernel's file type: no stat per name
            return {
                e.name for e in entries if is_chunk(e.name) and e.is_file(follow_symlinks=False)
            }
    finally:
        os.close(fd)


def visible_dirs(path: Path) -> list[Path]:
    """The subdirectories of ``path`` that are not hidden, by name (no symlinks followed);
    none when ``path`` is missing."""
    try:
        with os.scandir(path) as entries:
            names = [
                e.name for e in entries if not is_hidden(e.name) and e.is_dir(follow_symlinks=False)
            ]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [path / name for name in sorted(names)]


class _Entry:
    """``session.<attribute>``: the path of the file or directory ``name`` in the session."""

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, session: None, owner: type) -> _Entry: ...
    @overload
    def __get__(self, session: SessionDir, owner: type) -> Path: ...
    def __get__(self, session: SessionDir | None, owner: type) -> Path | _Entry:
        return self if session is None else session.path / self.name


@dataclass(frozen=True, slots=True)
class SessionDir:
    """One session directory: where each of its files is, and which of them are chunks."""

    path: Path

    @classmethod
    def new(cls, root: Path | str, device: str, start: float, profiler_id: str) -> SessionDir:
        """The directory of a run starting now (not created here)."""
        return cls(Path(root) / safe_name(device) / session_name(start, profiler_id))

    @classmethod
    def of_chunk(cls, chunk: Path | str) -> SessionDir:
        """The session of a file in ``chunks/`` (or in a marker directory)."""
        return cls(Path(chunk).parent.parent)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def root(self) -> Path:
        """The output directory (``OUT``): no link below it is written through."""
        return self.path.parent.parent

    @property
    def device(self) -> str:
        """The device directory's name."""
        return self.path.parent.name

    # where each file and directory of the session is (the module docstring's table)
    archive = _Entry(ARCHIVE_FILE)
    trace = _Entry(TRACE_FILE)
    record = _Entry(RECORD_FILE)
    vitals = _Entry(VITALS_FILE)
    chunks = _Entry(CHUNKS_DIR)
    delivered = _Entry(DELIVERED_DIR)
    rejected = _Entry(REJECTED_DIR)
    dropped = _Entry(DROPPED_DIR)
    pyroscope_marker = _Entry(PYROSCOPE_MARKER)

    @property
    def deleting(self) -> Path:
        """Where retention renames the session before removing it."""
        return self.path.with_name(f".{self.name}{DELETING_SUFFIX}")

    def export(self, suffix: str) -> Path:
        """An export of the archive: ``capture`` + the format's suffix."""
        return self.path / (EXPORT_STEM + suffix)

    def chunk(self, index: int) -> Path:
        return self.chunks / chunk_name(index)

    def delivered_marker(self, chunk: str) -> Path:
        return self.delivered / chunk

    def rejection_reason(self, chunk: str) -> Path:
        return self.rejected / (chunk.removesuffix(CHUNK_SUFFIX) + REASON_SUFFIX)

    def markers_of(self, chunk: str) -> tuple[Path, Path, Path]:
        """The files whose presence settles a chunk: delivered, rejected, dropped."""
        return self.delivered / chunk, self.rejected / chunk, self.dropped / chunk

    # -- reading the directory (synchronous) -------------------------------------------------

    def chunk_names(self) -> set[str]:
        """Chunk file names in ``chunks/``."""
        return _chunk_names(self.chunks)

    def settled(self) -> tuple[set[str], set[str], set[str]]:
        """Names of the chunks delivered, rejected and dropped."""
        return (
            _chunk_names(self.delivered),
            _chunk_names(self.rejected),
            _chunk_names(self.dropped),
        )

    def pending_names(self) -> set[str]:
        """Chunks in ``chunks/`` neither delivered, rejected nor dropped."""
        delivered, rejected, dropped = self.settled()
        return self.chunk_names() - delivered - rejected - dropped

    def dropped_coverage(self) -> list[dict]:
        """What the chunks the spool dropped covered (see :mod:`rokuprof.sentry.coverage`), for
        those whose chunk file is gone and whose marker says (older markers are empty)."""
        out = []
        for name in sorted(_chunk_names(self.dropped) - self.chunk_names()):
            try:
                with open_within(self.dropped / name, self.root) as f:
                    data = f.read(MAX_MARKER_BYTES + 1)
                marker = json.loads(data or b"{}") if len(data) <= MAX_MARKER_BYTES else None
            except (OSError, ValueError):
                continue
            if isinstance(marker, dict) and isinstance(marker.get("covered"), dict):
                out.append({"covered": marker["covered"]})
        return out

    def built_chunks(self) -> list[Path]:
        """Every chunk built for the run and still on disk (``chunks/`` and ``rejected/``),
        in chunk order."""
        files = [self.chunks / n for n in self.chunk_names()]
        files += [self.rejected / n for n in _chunk_names(self.rejected)]
        return sorted(files, key=lambda p: (chunk_index(p.name), p.parent.name))

    def read_record(self, *, follow: bool = True) -> dict:
        """``session.json`` as a dict; ``OSError`` or ``ValueError`` when it cannot be. With
        ``follow=False`` (crash recovery) no link below ``OUT`` is read through
        (:class:`~rokuprof.store.files.SymlinkRefused`)."""
        if follow:
            return json.loads(self.record.read_text("utf-8"))
        with open_within(self.record, self.root) as f:
            return json.loads(f.read().decode("utf-8"))

    def links(self) -> list[Path]:
        """The symbolic links among the session's entries and in its chunk and marker
        directories (no walk reads through them)."""
        found = []
        for directory in [self.path, *(self.path / name for name in CHUNK_DIRS)]:
            try:
                fd = os.open(directory, _LIST_FLAGS)
            except OSError:
                continue  # missing, or a link itself (listed with the session's entries)
            try:
                with os.scandir(fd) as entries:
                    found += [directory / e.name for e in entries if e.is_symlink()]
            finally:
                os.close(fd)
        return sorted(found)

    def write_record(self, data: dict) -> Path:
        """Write ``session.json`` atomically (``ValueError`` for a value JSON cannot hold)."""
        text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
        return write_atomic(self.record, text + "\n", within=self.root)


def sessions(root: Path | str) -> list[SessionDir]:
    """Every ``root/<device>/<session>`` directory, by device, oldest session first."""
    return [SessionDir(s) for d in visible_dirs(Path(root)) for s in visible_dirs(d)]


def deleting(root: Path | str) -> list[Path]:
    """Sessions a crash left half-deleted (``root/<device>/.<session>.deleting``): real
    directories in real device directories, never through a link."""
    found = []
    for device in visible_dirs(Path(root)):
        try:
            with os.scandir(device) as entries:
                found += [
                    device / e.name
                    for e in entries
                    if is_hidden(e.name)
                    and e.name.endswith(DELETING_SUFFIX)
                    and e.is_dir(follow_symlinks=False)
                ]
        except OSError:
            continue
    return sorted(found)


def links(root: Path | str) -> list[Path]:
    """The symbolic links among device and session directories under ``root`` (each is
    skipped by every walk, and refused as a place to write)."""
    found = []
    root = Path(root)
    for parent in [root, *visible_dirs(root)]:
        try:
            with os.scandir(parent) as entries:
                found += [parent / e.name for e in entries if e.is_symlink()]
        except OSError:
            continue
    return sorted(found)
