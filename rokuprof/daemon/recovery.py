"""Start-up repairs after a crash: stale ``*.tmp`` files, half-deleted sessions, and sessions a
crash left ``streaming``: closed as ``interrupted``, and what they archived but never chunked
becomes chunks, spooled for upload like live ones. Synchronous: run in a thread.

Converting a crashed session (:func:`catch_up_session`) follows
:mod:`rokuprof.capture.catchup`: the session's chunk files say what was already built, per call
path, and only the rest of the archive becomes new chunks (``chunks/NNNNNN.json`` after the
existing ones, each written atomically). ``session.json`` gets its ``recovered`` entry last, in
one atomic write; until then the session is converted again at the next start, and the chunk
files a killed conversion left count as already built, so no sample is ever built twice.
With ``[capture] export``, the daemon then writes a converted session's exports, after start-up
(:func:`export_recovered_session`).

Recovery never loops (:mod:`rokuprof.daemon.recovery_policy`): each conversion runs within a
:class:`RecoveryBudget` (checked as the archive is read and as chunks are written) behind a
``recovering.json`` marker; a conversion that raises, goes over its budget or kills the process
``max_attempts`` times sets its session aside (``recovery_failed`` in ``session.json``, one log
line) and later starts skip it.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from rokuprof.bsprof.model import Limits
from rokuprof.capture.catchup import CatchUp
from rokuprof.capture.exports import export_session, record_outcome
from rokuprof.daemon.recovery_marker import read_marker, remove_marker, rss_bytes, write_marker
from rokuprof.daemon.recovery_policy import (
    Action,
    BudgetWatch,
    OverBudget,
    RecoveryBudget,
    describe_error,
    mark_failed,
    plan_session,
)
from rokuprof.sentry.assemble import Chunk
from rokuprof.sentry.coverage import chunk_samples
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.chunk_files import write_chunks
from rokuprof.store.files import open_within, sweep_tmp
from rokuprof.store.layout import SessionDir, SessionStatus, chunk_index, links, sessions
from rokuprof.store.retention import finish_deletions
from rokuprof.timefmt import parse_iso, utc_iso

log = logging.getLogger(__name__)

CRASH_REASON = (
    "the capture process stopped during the run (crash, kill or power loss); the archive "
    "holds every byte written to disk before that"
)


READ_SIZE = 1 << 20


@dataclass
class Recovery:
    removed_tmp: list[Path] = field(default_factory=list)
    finished_deletions: list[Path] = field(default_factory=list)
    closed_sessions: list[Path] = field(default_factory=list)
    converted_sessions: list[Path] = field(default_factory=list)
    chunks_written: list[Path] = field(default_factory=list)
    set_aside: list[Path] = field(default_factory=list)  # recovery failed: skipped from now on


def close_session(
    session: Path, now: float | None = None, *, reason: str = CRASH_REASON, kind: str = "crash"
) -> bool:
    """Mark ``session`` ``interrupted`` if its ``session.json`` is missing or says
    ``streaming``; return whether it was changed. Raises ``OSError`` if it cannot be written."""
    where = SessionDir(session)
    try:
        record = where.read_record(follow=False)
    except FileNotFoundError:
        record = {"format": 1, "session": where.name, "device": {"dir": where.device}}
    except (OSError, ValueError) as exc:
        log.error("cannot read %s: %s", where.record, exc)
        return False
    if record.get("status") not in (None, SessionStatus.STREAMING):
        return False
    st = archive_stat(where)
    size, end = (st.st_size, st.st_mtime) if st else (0, now if now is not None else time.time())
    record.update(
        status=SessionStatus.INTERRUPTED,
        end=utc_iso(end),
        bytes=size,
        chunks=len(where.built_chunks()),
        end_reason=reason,
    )
    errors = record.setdefault("errors", [])
    errors.append({"kind": kind, "message": reason})
    where.write_record(record)
    return True


def archive_stat(where: SessionDir) -> os.stat_result | None:
    """The session's archive as it is on disk, or None: missing, or not a regular file (a
    symbolic link is never followed)."""
    try:
        st = os.stat(where.archive, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def warn_links(where: SessionDir) -> None:
    """One warning per symbolic link in the session: recovery reads nothing through them."""
    for link in where.links():
        log.warning(
            "%s is a symbolic link: crash recovery skips it and never reads through a link "
            "inside %s",
            link,
            where.root,
        )


def catch_up_session(
    session: Path,
    *,
    chunks: ChunkSettings | None = None,
    limits: Limits | None = None,
    check: Callable[[], None] | None = None,
) -> list[Path]:
    """Turn what ``session`` archived but never chunked into chunk files (see the module
    docstring); return the new chunk files. Raises ``OSError`` when it cannot write. ``check``
    is called after each piece of the archive (at most a slice of it) and each chunk written,
    and may raise to stop the conversion (:meth:`BudgetWatch.check`)."""
    check = check or (lambda: None)
    where = SessionDir(session)
    record = where.read_record(follow=False)
    archive = where.archive
    payloads, skipped = [], 0
    # New chunks number on after every name the session ever used: a chunk the spool dropped
    # or delivered leaves only a marker, and a new chunk of that name would count as settled.
    delivered, rejected, dropped = where.settled()
    used = where.chunk_names() | delivered | rejected | dropped
    last_index = max((chunk_index(name) or 0 for name in used), default=0)
    for path in where.built_chunks():
        try:
            with open_within(path, where.root) as f:
                payloads.append(json.loads(f.read()))
        except (OSError, ValueError) as exc:  # written atomically: should not happen
            skipped += 1
            log.error("cannot read chunk %s: %s", path, exc)
    for covered in where.dropped_coverage():  # dropped unsent: their samples are not built again
        try:
            chunk_samples(covered)
        except (KeyError, IndexError, TypeError, ValueError) as exc:  # then they are, as before
            log.error("cannot read a dropped chunk's marker in %s: %s", session, exc)
            continue
        payloads.append(covered)
    st = archive_stat(where)
    start = parse_iso(record.get("start")) or (st.st_mtime if st else time.time())
    settings = replace(  # the run's own environment and release, as its chunks said
        chunks or ChunkSettings(),
        environment=record.get("environment") or None,
        release=record.get("release") or None,
    )
    new: list[Path] = []
    notes: list[str] = []
    samples_before = samples_after = 0
    if st is not None and st.st_size:
        catch_up = CatchUp(
            payloads,
            start=start,
            end=st.st_mtime,
            total_bytes=st.st_size,
            profiler_id=str(record.get("profiler_id") or session.name),
            settings=settings,
            limits=limits,
        )
        piece = min(READ_SIZE, catch_up.slice_bytes)  # a check at least once a slice
        with open_within(archive, where.root) as f:
            while block := f.read(piece):
                catch_up.feed(block)
                check()
        result = catch_up.finish()
        check()
        samples_before = result.samples_before
        notes = result.notes
        path_of = {id(c): where.chunk(i) for i, c in enumerate(result.chunks, last_index + 1)}

        def written(chunk: Chunk, _path: Path) -> None:
            nonlocal samples_after
            samples_after += sum(chunk_samples(chunk.payload)[0].values())
            check()

        new = write_chunks(
            result.chunks,
            lambda chunk: [(path_of[id(chunk)], chunk.data)],
            within=where.root,
            after_each=written,
        )
    record["recovered"] = {
        "at": utc_iso(time.time()),
        "chunks": len(new),
        "samples_in_chunks_before": samples_before,
        "samples_added": samples_after,
        "unreadable_chunk_files": skipped,
        "notes": notes,
    }
    record["chunks"] = len(where.built_chunks())
    where.write_record(record)
    return new


def export_recovered_session(session: Path, formats: Sequence[str], **converter_options) -> None:
    """Write the ``[capture] export`` formats of a session a crash left (after
    :func:`catch_up_session`) and record them in its ``session.json``; a failure is recorded
    or logged, never raised."""
    outcome = export_session(session, formats, **converter_options)
    where = SessionDir(session)
    try:
        record = where.read_record(follow=False)
        record_outcome(record, outcome)
        where.write_record(record)
    except (OSError, ValueError) as exc:
        log.error("cannot record the exports of %s: %s", session, exc)
        return
    for message in outcome.errors.values():
        log.warning("session %s/%s: %s", session.parent.name, session.name, message)


def set_aside(where: SessionDir, kind: str, message: str) -> bool:
    """Record that ``where``'s recovery failed (``kind``: ``error``, ``budget``, ``killed``) and
    remove its marker; one log line. ``False`` (logged) when the record cannot be written: the
    marker stays, so the next start counts this attempt."""
    try:
        record = mark_failed(where.read_record(follow=False), kind, message, utc_iso(time.time()))
        record["chunks"] = len(where.built_chunks())
        where.write_record(record)
        remove_marker(where)
    except (OSError, ValueError) as exc:
        log.error("cannot set aside the session %s (%s): %s", where.path, message, exc)
        return False
    log.error(
        "session %s/%s set aside: %s; later starts skip it (delete %r from its session.json"
        " to try again)",
        where.device,
        where.name,
        message,
        "recovery_failed",
    )
    return True


def _convert(
    where: SessionDir,
    attempt: int,
    budget: RecoveryBudget,
    result: Recovery,
    **options,
) -> None:
    """One crashed session's conversion behind its marker and within ``budget``."""
    session = where.path
    failure = None
    try:
        write_marker(where, attempt, time.time())
        watch = BudgetWatch(budget, time.monotonic, rss_bytes)
        new = catch_up_session(session, check=watch.check, **options)
    except OverBudget as exc:
        failure = ("budget", f"recovery failed: {exc}")
    except OSError as exc:  # the disk, not the session: the next start tries again
        log.error("cannot convert the crashed session %s: %s", session, exc)
        return
    except Exception as exc:  # the fence: whatever converting this session raised
        failure = ("error", f"recovery failed: {describe_error(exc)}")
        log.debug("recovery of %s failed", session, exc_info=True)
    if failure is not None:  # out of the handler: what the conversion held is freed by now
        if set_aside(where, *failure):
            result.set_aside.append(session)
        return
    remove_marker(where)  # after "recovered" is on disk: a marker left now is only cleared
    result.converted_sessions.append(session)
    result.chunks_written += new
    log.info(
        "session %s/%s: %d chunk(s) made from what the crash left unchunked",
        where.device,
        where.name,
        len(new),
    )


def _recover_session(
    where: SessionDir,
    budget: RecoveryBudget,
    result: Recovery,
    on_convert: Callable[[Path], None] | None,
    **options,
) -> None:
    """Close ``where`` if a crash left it streaming, then convert it or set it aside as
    :func:`plan_session` says."""
    session = where.path
    try:
        closed = close_session(session)
    except (OSError, ValueError) as exc:
        log.error("cannot close the unfinished session %s: %s", session, exc)
        return
    if closed:
        result.closed_sessions.append(session)
        log.warning(
            "session %s/%s was left unfinished by a crash: closed as interrupted",
            where.device,
            where.name,
        )
    try:
        record = where.read_record(follow=False)
    except (OSError, ValueError) as exc:
        log.error("cannot convert the crashed session %s: %s", session, exc)
        warn_links(where)
        return
    plan = plan_session(record, read_marker(where), budget)
    if plan.action is not Action.NOTHING:
        warn_links(where)  # before the marker is replaced or removed
    if plan.action is Action.CLEAR:
        remove_marker(where)
    elif plan.action is Action.SET_ASIDE:
        if set_aside(where, "killed", f"recovery failed: {plan.reason}"):
            result.set_aside.append(session)
    elif plan.action is Action.CONVERT:
        if on_convert is not None:
            on_convert(session)
        _convert(where, plan.attempt, budget, result, **options)


def recover(
    root: Path,
    *,
    chunks: ChunkSettings | None = None,
    limits: Limits | None = None,
    budget: RecoveryBudget | None = None,
    on_convert: Callable[[Path], None] | None = None,
) -> Recovery:
    """Repair ``root`` (the capture output) before anything else writes to it. ``on_convert``
    is told each session about to be converted (the daemon extends systemd's start timeout)."""
    budget = budget or RecoveryBudget()
    result = Recovery()
    root = Path(root)
    if not root.is_dir():
        return result
    for link in links(root):  # said once at start-up; each write there is refused too
        log.warning(
            "%s is a symbolic link: rokuprof never writes, sweeps or deletes through a link "
            "inside %s (make it a real directory)",
            link,
            root,
        )
    result.removed_tmp = sweep_tmp(root)
    result.finished_deletions = finish_deletions(root)
    for where in sessions(root):
        try:
            _recover_session(where, budget, result, on_convert, chunks=chunks, limits=limits)
        except Exception as exc:  # one session never stops the start
            log.error("cannot recover the session %s: %s", where.path, describe_error(exc))
    if result.removed_tmp:
        log.info("removed %d half-written file(s) left by a crash", len(result.removed_tmp))
    return result
