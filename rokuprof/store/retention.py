"""Retention: delete the oldest sessions first when they are too old or the total is too big.

Sessions are ``OUT/<device>/<session>/`` directories; a session's age runs from its last write
(``session.json`` is rewritten at every chunk interval and at the end). A session still being
captured is never deleted: neither one the caller lists as active, nor one whose ``session.json``
says ``streaming``, nor a fresh one without ``session.json`` yet. This is the only code that
deletes captured data.

A deletion first renames the session to ``.<name>.deleting`` (atomic; every scanner ignores dot
names), then removes it; :func:`finish_deletions` completes one a crash interrupted.
Nothing is deleted or counted through a symbolic link: linked device and session directories
are not sessions, a link inside a session counts as the link (its target is never sized, and
removing the session removes the link, never what it points to).
File operations are synchronous: call them through :func:`asyncio.to_thread`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rokuprof.store.layout import SessionDir, SessionStatus, deleting, sessions

log = logging.getLogger(__name__)

FRESH_SECONDS = 3600.0  # a session without session.json younger than this may be starting


@dataclass(frozen=True)
class RetentionPolicy:
    max_age_seconds: float | None = None
    max_bytes: int | None = None

    @property
    def active(self) -> bool:
        return self.max_age_seconds is not None or self.max_bytes is not None


@dataclass(frozen=True)
class SessionInfo:
    path: Path
    bytes: int
    last_write: float  # Unix seconds
    status: str | None  # from session.json, None without one
    undelivered: int  # chunks neither delivered, rejected nor dropped

    @property
    def sort_key(self) -> tuple[str, str]:
        # session names start with the UTC start time; the device breaks ties
        return (self.path.name, self.path.parent.name)


@dataclass(frozen=True)
class Deletion:
    session: SessionInfo
    reason: str


def _tree_size(path: Path) -> tuple[int, float]:
    total, newest = 0, 0.0
    for dirpath, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(os.path.join(dirpath, name))  # a link's size, not its target's
                total += st.st_size
                newest = max(newest, st.st_mtime)
    return total, newest


def session_info(path: Path) -> SessionInfo:
    size, newest = _tree_size(path)
    status = None
    session = SessionDir(path)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        status = session.read_record().get("status")
        newest = session.record.lstat().st_mtime
    if not newest:
        with contextlib.suppress(OSError):
            newest = path.stat().st_mtime
    return SessionInfo(path, size, newest, status, len(session.pending_names()))


def list_sessions(root: Path) -> list[SessionInfo]:
    """Every session under ``root``, oldest first."""
    return sorted((session_info(s.path) for s in sessions(root)), key=lambda s: s.sort_key)


def plan(
    sessions: list[SessionInfo],
    policy: RetentionPolicy,
    *,
    now: float,
    active: Iterable[Path] = (),
) -> list[Deletion]:
    """Which sessions to delete (pure): too old first, then oldest until under ``max_bytes``."""
    busy = {Path(p) for p in active}

    def protected(s: SessionInfo) -> bool:
        if s.path in busy or s.status == SessionStatus.STREAMING:
            return True
        return s.status is None and now - s.last_write < FRESH_SECONDS

    out: list[Deletion] = []
    kept: list[SessionInfo] = []
    for s in sessions:
        age = now - s.last_write
        if policy.max_age_seconds is not None and age > policy.max_age_seconds and not protected(s):
            days = policy.max_age_seconds / 86400
            out.append(Deletion(s, f"older than {days:g} day{'' if days == 1 else 's'}"))
        else:
            kept.append(s)
    if policy.max_bytes is not None:
        total = sum(s.bytes for s in kept)
        for s in kept:
            if total <= policy.max_bytes:
                break
            if protected(s):
                continue
            out.append(Deletion(s, f"total over {policy.max_bytes} bytes ({total} bytes)"))
            total -= s.bytes
    return out


def delete_session(path: Path) -> None:
    """Rename to ``.<name>.deleting``, then remove the tree (links in it are removed, never
    followed); a session that is not a real directory is refused (``OSError``)."""
    if not stat.S_ISDIR(os.lstat(path).st_mode):
        raise NotADirectoryError(f"{path} is not a directory (a link?): not deleted")
    doomed = SessionDir(path).deleting
    os.replace(path, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


def finish_deletions(root: Path) -> list[Path]:
    """Remove sessions a crash left half-deleted (``.<name>.deleting``), none through a link."""
    removed = []
    for doomed in deleting(root):
        shutil.rmtree(doomed, ignore_errors=True)
        removed.append(doomed)
    return removed


def enforce(
    root: Path,
    policy: RetentionPolicy,
    *,
    active: Iterable[Path] = (),
    now: float | None = None,
) -> list[Deletion]:
    """Apply ``policy`` under ``root``; log and return what was deleted."""
    if not policy.active or not Path(root).is_dir():
        return []
    now = time.time() if now is None else now
    done = []
    for deletion in plan(list_sessions(root), policy, now=now, active=active):
        s = deletion.session
        try:
            delete_session(s.path)
        except OSError as exc:
            log.error("retention: cannot delete %s: %s", s.path, exc)
            continue
        lost = f", {s.undelivered} chunk(s) never delivered" if s.undelivered else ""
        log.info(
            "retention: deleted session %s/%s (%d bytes, %s%s)",
            s.path.parent.name,
            s.path.name,
            s.bytes,
            deletion.reason,
            lost,
        )
        done.append(deletion)
    return done
