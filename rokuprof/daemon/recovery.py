"""Start-up repairs after a crash: stale ``*.tmp`` files, half-deleted sessions, and sessions a
crash left ``streaming`` (closed as ``interrupted``). Synchronous: run in a thread."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rokuprof.store.files import sweep_tmp, write_atomic
from rokuprof.store.retention import finish_deletions
from rokuprof.store.spool import CHUNKS_DIR, REJECTED_DIR, Spool

log = logging.getLogger(__name__)

SESSION_FILE = "session.json"
ARCHIVE_NAME = "capture.bsprof"
CRASH_REASON = (
    "the capture process stopped during the run (crash, kill or power loss); the archive "
    "holds every byte written to disk before that"
)


@dataclass
class Recovery:
    removed_tmp: list[Path] = field(default_factory=list)
    finished_deletions: list[Path] = field(default_factory=list)
    closed_sessions: list[Path] = field(default_factory=list)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _count(directory: Path) -> int:
    with contextlib.suppress(FileNotFoundError):
        return sum(1 for n in os.listdir(directory) if n.endswith(".json") and ".reason" not in n)
    return 0


def close_session(
    session: Path, now: float | None = None, *, reason: str = CRASH_REASON, kind: str = "crash"
) -> bool:
    """Mark ``session`` ``interrupted`` if its ``session.json`` is missing or says
    ``streaming``; return whether it was changed. Raises ``OSError`` if it cannot be written."""
    record_path = session / SESSION_FILE
    try:
        record = json.loads(record_path.read_text("utf-8"))
    except FileNotFoundError:
        record = {"format": 1, "session": session.name, "device": {"dir": session.parent.name}}
    except (OSError, ValueError) as exc:
        log.error("cannot read %s: %s", record_path, exc)
        return False
    if record.get("status") not in (None, "streaming"):
        return False
    archive = session / ARCHIVE_NAME
    try:
        st = archive.stat()
        size, end = st.st_size, st.st_mtime
    except FileNotFoundError:
        size, end = 0, now if now is not None else time.time()
    record.update(
        status="interrupted",
        end=_iso(end),
        bytes=size,
        chunks=_count(session / CHUNKS_DIR) + _count(session / REJECTED_DIR),
        end_reason=reason,
    )
    errors = record.setdefault("errors", [])
    errors.append({"kind": kind, "message": reason})
    write_atomic(record_path, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    return True


def recover(root: Path) -> Recovery:
    """Repair ``root`` (the capture output) before anything else writes to it."""
    result = Recovery()
    root = Path(root)
    if not root.is_dir():
        return result
    result.removed_tmp = sweep_tmp(root)
    result.finished_deletions = finish_deletions(root)
    for session in Spool(root).session_dirs():
        try:
            closed = close_session(session)
        except OSError as exc:
            log.error("cannot close the unfinished session %s: %s", session, exc)
            continue
        if closed:
            result.closed_sessions.append(session)
            log.warning(
                "session %s/%s was left unfinished by a crash: closed as interrupted",
                session.parent.name,
                session.name,
            )
    if result.removed_tmp:
        log.info("removed %d half-written file(s) left by a crash", len(result.removed_tmp))
    return result
