"""End-of-run exports (``watch --export``, the daemon's ``[capture] export``): a finished
session's archive in viewers' formats, written into its directory as ``rokuprof export`` would
(``capture.pb.gz``, ``capture.speedscope.json``, ``capture.<thread>.cpuprofile`` per thread,
..., ``capture.sentry-v1/``): the same bytes, since both lay the archive out with
:func:`~rokuprof.export.report.session.export_settings`.

:func:`export_session` is the blocking part (decode the archive with the offline converter, run
the pure exporters, write each file atomically, piece by piece as it is made: a large export is
never held whole); :func:`export_finished_run` runs it in a worker thread and records the
outcome in ``session.json`` (``exports``, and an ``errors`` entry of kind ``export`` per format
that failed). An export never fails the capture: whatever goes wrong is
recorded, never raised.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.bsprof.model import Limits
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.session import SessionFiles
from rokuprof.export import FORMATS, Content, build_input
from rokuprof.export.report.session import export_settings, export_with_session
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.files import make_dirs, open_within, write_atomic_stream
from rokuprof.store.layout import ARCHIVE_FILE, EXPORT_STEM, SessionDir

log = logging.getLogger(__name__)

READ_SIZE = 1 << 20
STEM = EXPORT_STEM  # capture.bsprof -> capture.pb.gz, ...
_MULTI_FILE_PART = re.compile(r"\d{6}\.(profile\.json|transaction\.json|envelope)")


def export_formats(names: Iterable[str]) -> tuple[str, ...]:
    """Format names as given (``["pprof", "folded"]``, or ``["all"]``), checked, without
    repeats; ``ValueError`` naming the unknown ones and the known ones."""
    wanted = [n.strip().lower() for n in names if n.strip()]
    if wanted == ["all"]:
        return tuple(FORMATS)
    unknown = [n for n in wanted if n not in FORMATS]
    if unknown:
        raise ValueError(
            f"unknown export format {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(FORMATS)} or all"
        )
    return tuple(dict.fromkeys(wanted))


def output_name(stem: str, fmt: str, metric: str = "wall") -> str:
    """``<stem><suffix>``; folded stacks of another metric than wall: ``<stem>.<metric>.folded``."""
    suffix = FORMATS[fmt].suffix
    if fmt == "folded" and metric != "wall":
        suffix = f".{metric}{suffix}"
    return stem + suffix


def thread_file(target: Path, fmt: str, part: str) -> Path:
    """Where a per-thread format's file for thread ``part`` goes when the format's target is
    ``target``: ``run.cpuprofile`` -> ``run.<part>.cpuprofile`` (a target without the suffix:
    ``<target>.<part><suffix>``). ``part`` is a name part (no separator, no dot)."""
    suffix = FORMATS[fmt].suffix
    stem = target.name[: -len(suffix)] if target.name.endswith(suffix) else target.name
    return target.with_name(f"{stem}.{part}{suffix}")


def part_files(target: Path, fmt: str, parts: Mapping[str, Content]) -> dict[Path, Content]:
    """Each file of one format's parts (see :func:`write_parts`) with its path."""
    if list(parts) == [""]:
        return {target: parts[""]}
    if FORMATS[fmt].per_thread:
        return {thread_file(target, fmt, part): c for part, c in parts.items()}
    return {target / name: content for name, content in parts.items()}


def write_parts(target: Path, parts: Mapping[str, Content], fmt: str | None = None) -> int:
    """Write one format's files atomically (``{"": content}``: the file ``target``; a
    per-thread format's (``fmt``): :func:`thread_file` beside ``target``; else files in the
    directory ``target``, replacing that format's earlier files there); return the bytes.
    Content given in pieces is written as they come, never held whole."""
    if list(parts) == [""]:
        return _write(target, parts[""])
    if fmt is not None and FORMATS[fmt].per_thread:
        return sum(_write(p, c) for p, c in part_files(target, fmt, parts).items())
    make_dirs(target)
    for old in target.iterdir():
        if _MULTI_FILE_PART.fullmatch(old.name) and old.name not in parts:
            old.unlink()
    return sum(_write(target / name, content) for name, content in parts.items())


def _write(path: Path, content: Content) -> int:
    return write_atomic_stream(path, (content,) if isinstance(content, bytes) else content)


@dataclass
class ExportOutcome:
    """What :func:`export_session` did, per format."""

    written: dict[str, dict[str, object]] = field(default_factory=dict)  # fmt -> file, bytes
    errors: dict[str, str] = field(default_factory=dict)  # fmt -> why it was not written

    def to_json(self) -> dict[str, dict[str, object]]:
        """``session.json``'s ``exports``: per format its file and size (and notes), or error."""
        out: dict[str, dict[str, object]] = dict(self.written)
        out.update({fmt: {"error": message} for fmt, message in self.errors.items()})
        return out


def export_session(
    session: Path,
    formats: Sequence[str],
    *,
    settings: ChunkSettings | None = None,
    limits: Limits | None = None,
) -> ExportOutcome:
    """Export ``session``'s archive in every format into the session directory (blocking; run
    it in a thread), as ``rokuprof export SESSION`` does: laid out by
    :func:`~rokuprof.export.report.session.export_settings` (of ``settings`` only the wall unit
    counts; the chunk window a run was watched with does not change its exports); ``limits``:
    the decoder's. Never raises for a format or an unreadable archive: the outcome says."""
    outcome = ExportOutcome()
    where = SessionDir(Path(session))
    layout = export_settings(where.path, (settings or ChunkSettings()).wall_unit)
    try:
        with open_within(where.archive, where.root) as f:  # never read through a link
            converter = OfflineConverter(
                layout, total_bytes=os.fstat(f.fileno()).st_size, limits=limits
            )
            while block := f.read(READ_SIZE):
                converter.feed(block)
        inp = build_input(converter)
    except Exception as exc:  # an unreadable archive must not fail the capture
        message = f"cannot read {ARCHIVE_FILE}: {_why(exc)}"
        outcome.errors = dict.fromkeys(formats, message)
        return outcome
    for fmt in formats:
        name = output_name(STEM, fmt)
        try:
            parts, notes = export_with_session(inp, fmt, where.path)  # report: marks, vitals
            size = write_parts(where.path / name, parts, fmt)
        except Exception as exc:  # a failed format must not fail the others
            log.warning("export %s of %s failed: %s", fmt, session, _why(exc), exc_info=True)
            outcome.errors[fmt] = f"cannot export {name}: {_why(exc)}"
            continue
        entry: dict[str, object] = {"file": name, "bytes": size}
        if FORMATS[fmt].per_thread:  # one file per thread
            files = part_files(where.path / name, fmt, parts)
            entry = {"file": thread_file(Path(name), fmt, "*").name, "bytes": size}
            entry["files"] = [p.name for p in files]
        if notes:
            entry["notes"] = notes
        outcome.written[fmt] = entry
    return outcome


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


def record_outcome(record: SessionRecord | dict, outcome: ExportOutcome) -> None:
    """Put the outcome in a session record (the object or its ``session.json`` dict)."""
    exports = outcome.to_json()
    errors = [{"kind": "export", "message": m, "format": f} for f, m in outcome.errors.items()]
    if isinstance(record, SessionRecord):
        record.exports = exports
        record.errors.extend(errors)
    else:
        record["exports"] = exports
        record.setdefault("errors", []).extend(errors)


async def export_finished_run(
    files: SessionFiles, record: SessionRecord, formats: Sequence[str], **converter_options
) -> ExportOutcome:
    """Export a run that has just ended, off the event loop, and rewrite its ``session.json``
    with the outcome. Never raises (but for cancellation)."""
    outcome = await asyncio.to_thread(export_session, files.path, formats, **converter_options)
    record_outcome(record, outcome)
    try:
        await files.write_record(record)
    except OSError as exc:
        log.error("cannot record the exports of %s: %s", files.path, _why(exc))
    return outcome
