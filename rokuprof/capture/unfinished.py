"""Ending a capture that failed midway (a full disk, a closed output, a bug) well: the run in
progress is finished on disk with its cause instead of being left ``streaming``.

:func:`end_failed_capture` is what ``rokuprof watch`` does when its capture loop raises. The
run's machine still holds the record as of the failure; from it the session is finished:
``truncated`` when an output could not be written (an ``OSError``), ``failed`` for any other
exception (its traceback goes into ``session.json``, not onto the terminal); a run the machine
had already ended keeps its status. ``end`` is set, ``end_reason`` and an ``errors`` entry of
kind ``capture`` say the cause, ``bytes`` is what the archive holds (every byte it was given
before the failure) and ``chunks`` the chunk files on disk. The summary gets the session and one
sentence for the command's ``error:`` line. (The daemon instead restarts the loop and closes
the session itself, see :mod:`rokuprof.daemon.devices`.)
"""

from __future__ import annotations

import asyncio
import copy
import time
import traceback
from pathlib import Path

from rokuprof.capture.loop import CapturedSession, CaptureSummary, DeviceCapture
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.run import RunCapture
from rokuprof.store.layout import SessionStatus


def root_error(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: what actually went wrong."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def failure_cause(error: BaseException) -> str:
    """One sentence: ``the capture stopped: <OSError>`` or ``the capture failed: <type>: ...``."""
    if isinstance(error, OSError):
        return f"the capture stopped: {error}"
    return f"the capture failed: {error.__class__.__name__}: {error}"


def finished_record(run: RunCapture, error: BaseException, now: float) -> SessionRecord | None:
    """The final record of ``run``'s session after ``error`` (no I/O), or ``None`` when there
    is no session to finish (none was created, or the run finished and recorded itself)."""
    error = root_error(error)
    machine, files = run.machine, run.files
    if machine is None or files is None or machine.record is None or run.record is not None:
        return None
    rec = copy.deepcopy(machine.record)
    cause = failure_cause(error)
    rec.bytes = files.archive.bytes
    rec.entries = machine.reader.entry_count
    if not rec.status.final:
        rec.status = SessionStatus.TRUNCATED if isinstance(error, OSError) else SessionStatus.FAILED
        rec.end = now
        rec.warnings = list(machine.reader.warnings)
        rec.end_reason = f"{cause}; the archive keeps the {rec.bytes:,} bytes written before it"
    else:
        rec.end_reason = f"{rec.end_reason}; then {cause}"
    if isinstance(error, OSError):
        rec.add_error("capture", cause)
    else:  # a bug: its traceback for the report, not for the terminal
        rec.add_error("capture", cause, detail="".join(traceback.format_exception(error)))
    return rec


def _write(run: RunCapture, rec: SessionRecord) -> str | None:
    """Write the record and count the chunk files; why it could not be written, if not."""
    where = run.files.dir
    rec.chunks = len(where.chunk_names())
    try:
        where.write_record(rec.to_json())
    except (OSError, ValueError) as exc:
        return str(exc)
    return None


async def end_failed_capture(capture: DeviceCapture, error: Exception) -> CaptureSummary:
    """Finish the run ``error`` interrupted (if any) and say so in the summary."""
    summary = capture.summary
    error = root_error(error)
    cause = failure_cause(error)
    run = capture.current_run
    rec = finished_record(run, error, time.time()) if run is not None else None
    if rec is None:
        summary.failure = cause
        return summary
    path: Path = run.files.path
    problem = await asyncio.to_thread(_write, run, rec)
    summary.sessions.append(CapturedSession(rec, path))
    if problem is None:
        summary.failure = f"{cause}; session {path} ended {rec.status}"
    else:
        summary.failure = f"{cause}; session {path} could not be finished ({problem})"
    return summary
