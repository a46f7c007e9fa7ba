"""A session directory's report: the report's one I/O module (blocking file reads and writes).

The page of a capture gets, when the capture is a session directory's, the session's marks
(``session.json``) and device vitals (``vitals.jsonl``) on its timeline (read here, checked and
bounded by the pure :mod:`~rokuprof.export.report.timeline_extras`). ``rokuprof report`` and
the end of ``rokuprof profile`` both make the page with :func:`report_page`::

    path = write_session_report(session_dir)    # <session>/report.html, written atomically

Not imported by the package's ``__init__``: the report's model and page stay pure.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT
from rokuprof.export import Content, export_with_notes
from rokuprof.export.model import ExportInput, build_input
from rokuprof.export.perfetto_session import perfetto_with_session
from rokuprof.export.report.model import build_model
from rokuprof.export.report.page import render_html
from rokuprof.export.report.source import (
    DEFAULT_EDITOR_URL,
    editor_entry,
    source_entry,
    wanted_files,
)
from rokuprof.export.report.timeline_extras import MAX_LINE, VitalsReader, timeline_extras
from rokuprof.export.report.trace_lanes import trace_entry
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.files import write_atomic
from rokuprof.store.layout import RECORD_FILE, TRACE_FILE, SessionDir
from rokuprof.trace.model import Trace
from rokuprof.trace.reader import TraceReader

if TYPE_CHECKING:
    from rokuprof.app.source import AppSource

VITALS_FILE = "vitals.jsonl"
#: Bytes of the trace the report reads at most (the reader takes about a second for a MiB of
#: slices; a run's trace may have 256 MiB): the rest is not drawn, and the page says so.
MAX_TRACE_BYTES = 64 << 20
REPORT_FILE = "report.html"
#: ``session.json`` read at most (a run's record with its 1,000 marks is well under a MiB).
MAX_RECORD_BYTES = 16 << 20
READ_SIZE = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _lines(stream: BinaryIO) -> Iterator[bytes]:
    """The stream's lines, each cut at :data:`MAX_LINE` bytes (the rest of a longer line is
    dropped: what is left of it is not a reading either)."""
    while line := stream.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (more := stream.readline(READ_SIZE)) and not more.endswith(b"\n"):
                pass
            line = line[:MAX_LINE] + b"\n"
        yield line


def _open_file(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (a FIFO put there must not hang the
    report: opened without blocking, then refused), never through a symbolic link."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "a symbolic link, not followed") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _record(path: Path, notes: list[str]) -> object:
    """``session.json`` parsed, or ``None`` (missing: silently; unreadable: with a note)."""
    try:
        with _open_file(path) as f:
            data = f.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.append(f"{RECORD_FILE}: cannot be read ({exc.strerror or exc}); no marks drawn")
        return None
    if len(data) > MAX_RECORD_BYTES:
        notes.append(f"{RECORD_FILE}: larger than {MAX_RECORD_BYTES >> 20} MiB; no marks drawn")
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        notes.append(f"{RECORD_FILE}: not JSON; no marks drawn")
        return None


def read_extras(session_dir: Path, inp: ExportInput) -> dict[str, object] | None:
    """The session's marks and vitals for the model of ``inp`` (its capture), or ``None``."""
    timeline = inp.timeline
    span = max(1, timeline.last_slot()) / timeline.hz  # what the page's time axis covers
    notes: list[str] = []
    record = _record(session_dir / RECORD_FILE, notes)
    vitals: VitalsReader | None = VitalsReader(timeline.origin, span)
    try:
        with _open_file(session_dir / VITALS_FILE) as f:
            for line in _lines(f):
                vitals.feed(line)
                if vitals.cut:
                    break
    except FileNotFoundError:
        vitals = None
    except OSError as exc:
        notes.append(f"{VITALS_FILE}: cannot be read ({exc.strerror or exc}); no vitals drawn")
        vitals = None
    return timeline_extras(record, vitals, timeline.origin, span, notes)


def read_trace_file(session_dir: Path, limit: int | None = None) -> tuple[Trace | None, bool]:
    """The session's app trace (``trace.perfetto-trace``) read, or ``None`` without one (or
    when it cannot be read: the page is the capture's alone then), and whether it was longer
    than ``limit`` bytes (:data:`MAX_TRACE_BYTES`; only those were read). The reader bounds what
    it holds (:class:`~rokuprof.trace.reader.TraceLimits`); a trace cut short is read up to its
    last whole packet."""
    limit = MAX_TRACE_BYTES if limit is None else limit
    try:
        with _open_file(session_dir / TRACE_FILE) as f:
            reader = TraceReader()
            left = limit
            while left > 0 and (block := f.read(min(READ_SIZE, left))):
                reader.feed(block)
                left -= len(block)
            cut = left <= 0 and bool(f.read(1))
            return reader.close(), cut
    except OSError:
        return None, False


def add_trace(model: dict, inp: ExportInput, session_dir: Path) -> None:
    """``model["trace"]``: the session's app trace on the capture's time axis, when it has one
    with slices (:mod:`~rokuprof.export.report.trace_lanes`)."""
    trace, cut = read_trace_file(session_dir)
    if trace is None or not trace.slices:
        return
    timeline = inp.timeline
    span = max(1, timeline.last_slot()) / timeline.hz
    entry = trace_entry(trace, model, timeline.origin, span)
    if cut:
        entry["notes"].insert(
            0,
            f"only the trace's first {MAX_TRACE_BYTES >> 20} MiB were read for this page "
            "(`rokuprof inspect SESSION --trace` reads it all)",
        )
    model["trace"] = entry


def report_page(
    inp: ExportInput,
    session_dir: Path | None = None,
    *,
    source: AppSource | None = None,
    editor_url: str | None = None,
) -> bytes:
    """The report page of ``inp`` as UTF-8 bytes; with ``session_dir`` (the capture's session),
    its marks and vitals on the timeline; with ``source`` (the app's, checked by
    :func:`~rokuprof.app.source.open_source`), the hot functions' source and ``file:line``
    links built from ``editor_url`` (default :data:`DEFAULT_EDITOR_URL`); with ``editor_url``
    alone, the links only."""
    session = read_extras(session_dir, inp) if session_dir is not None else None
    model = build_model(inp, session=session)
    if session_dir is not None:
        add_trace(model, inp, session_dir)
    if source is not None:
        texts = source.read(wanted_files(model))
        root = str(source.root) if source.root is not None else None
        model["source"] = source_entry(
            model,
            texts,
            label=source.label,
            editor_url=editor_url or DEFAULT_EDITOR_URL,
            root=root,
        )
    elif editor_url is not None:
        model["source"] = editor_entry(editor_url)
    return render_html(model).encode("utf-8")


def export_with_session(
    inp: ExportInput, fmt: str, session_dir: Path | None, *, metric: str = "wall"
) -> tuple[dict[str, Content], list[str]]:
    """:func:`~rokuprof.export.export_with_notes`, but the ``report`` of a session's capture is
    :func:`report_page` (its marks, vitals and app trace drawn) and its ``perfetto`` file starts
    with its app trace (:func:`~rokuprof.export.perfetto_session.perfetto_with_session`),
    wherever they are made (``rokuprof export``, the end-of-run exports)."""
    if fmt == "report" and session_dir is not None:
        return {"": report_page(inp, session_dir)}, []
    if fmt == "perfetto":
        return perfetto_with_session(inp, session_dir)
    return export_with_notes(inp, fmt, metric=metric)


def export_settings(session_dir: Path | None, wall_unit: str = DEFAULT_WALL_UNIT) -> ChunkSettings:
    """How a capture is laid out for its exports and report: the one owner, so that the files a
    run's end writes (``watch --export``, the daemon's ``[capture] export``) and those
    ``rokuprof export``/``report`` make of the same session are the same bytes. The layout never
    depends on how the run was watched (its chunk window, its arrival times): only the wall
    unit, and a session's release and environment (its ``session.json``: what its chunks
    carried); anything unreadable there leaves the defaults."""
    record = _record(session_dir / RECORD_FILE, []) if session_dir is not None else None
    named: dict[str, str | None] = {}
    if isinstance(record, dict):
        for key in ("release", "environment"):
            value = record.get(key)
            if value is None or isinstance(value, str):
                named[key] = value
    try:
        return ChunkSettings(wall_unit=wall_unit, **named)  # type: ignore[arg-type]
    except ValueError:
        return ChunkSettings(wall_unit=wall_unit)


def load_session_capture(session_dir: Path, wall_unit: str = DEFAULT_WALL_UNIT) -> ExportInput:
    """The session's ``capture.bsprof`` decoded and laid out (``OSError`` when it cannot be
    read; a truncated or corrupt capture is not an error: ``run.problem`` says)."""
    converter = OfflineConverter(export_settings(session_dir, wall_unit))
    with SessionDir(session_dir).archive.open("rb") as f:
        while block := f.read(READ_SIZE):
            converter.feed(block)
    return build_input(converter)


def write_session_report(
    session_dir: Path,
    *,
    wall_unit: str = DEFAULT_WALL_UNIT,
    source: AppSource | None = None,
    editor_url: str | None = None,
    inp: ExportInput | None = None,
) -> Path:
    """Write ``<session_dir>/report.html`` (atomically) from the session's capture, marks and
    vitals (and with ``source``, the app's: see :func:`report_page`); return its path. ``inp``:
    the capture already read (:func:`load_session_capture`). Raises ``OSError`` when the
    capture cannot be read or the page cannot be written."""
    session_dir = Path(session_dir)
    if inp is None:
        inp = load_session_capture(session_dir, wall_unit)
    page = report_page(inp, session_dir, source=source, editor_url=editor_url)
    return write_atomic(session_dir / REPORT_FILE, page)
