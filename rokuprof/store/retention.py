"""Retention: delete the oldest sessions first when they are too old, when the total is too big,
or when the output file system's free space is below its floor.

**One accounting**: a session's size is what the file system charges for it, its allocated
blocks (``st_blocks * 512`` of every file and directory in it, chunk files and spool markers
included), not the sum of file lengths: on a disk of many small files the two differ by far
(a 300-byte marker takes a 4 KiB block). ``max_bytes`` bounds that total; ``min_free_bytes``
(the capture's floor) is kept with :func:`floor_headroom` to spare: the oldest finished sessions
go until both hold (:func:`plan`); then, when the floor itself is broken and no finished session
is left, the oldest undelivered chunks of sessions still being captured (:func:`chunk_cut`, each
dropped with its ``dropped/`` marker, as the spool limit does). What is left short is
:attr:`Outcome.short`: nothing deletable remains, and the capture waits at the floor until space
returns.

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
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from rokuprof.store.layout import SessionDir, SessionStatus, deleting, sessions
from rokuprof.store.spool import Spool, SpoolItem
from rokuprof.units import size

log = logging.getLogger(__name__)

FRESH_SECONDS = 3600.0  # a session without session.json younger than this may be starting
HEADROOM_MIN = 1024**2
MAX_ROUNDS = 8  # of planning and deleting in one pass


@dataclass(frozen=True)
class RetentionPolicy:
    max_age_seconds: float | None = None
    max_bytes: int | None = None  # allocated bytes of every session together
    min_free_bytes: int = 0  # the free-space floor kept by deleting (0: none)

    @property
    def active(self) -> bool:
        return self.max_age_seconds is not None or self.max_bytes is not None

    @property
    def free_target(self) -> int:
        """The free bytes retention deletes up to (0: no floor): the floor and its headroom."""
        floor = self.min_free_bytes
        return floor + floor_headroom(floor) if floor else 0


def floor_headroom(floor: int) -> int:
    """What retention frees beyond the floor, so that captures run on between its checks
    instead of stopping at the floor: an eighth of it, at least 1 MiB."""
    return max(floor // 8, HEADROOM_MIN) if floor else 0


@dataclass(frozen=True)
class SessionInfo:
    path: Path
    bytes: int  # allocated: what the file system charges for its files and directories
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


class Sized(Protocol):
    @property
    def allocated(self) -> int: ...


C = TypeVar("C", bound=Sized)


def allocated(st: os.stat_result) -> int:
    """The bytes the file system charges for a file: its blocks, not its length."""
    return st.st_blocks * 512


def _tree_size(path: Path) -> tuple[int, float]:
    """(allocated bytes of every file and directory below ``path``, newest file mtime)."""
    total, newest = 0, 0.0
    for dirpath, _, files in os.walk(path):  # links to directories are not walked
        with contextlib.suppress(FileNotFoundError):
            total += allocated(os.lstat(dirpath))
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(os.path.join(dirpath, name))  # a link's blocks, not its target's
                total += allocated(st)
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


def protected(s: SessionInfo, now: float, busy: Collection[Path]) -> bool:
    """Whether ``s`` is (or may be) still being captured: never deleted whole."""
    if s.path in busy or s.status == SessionStatus.STREAMING:
        return True
    return s.status is None and now - s.last_write < FRESH_SECONDS


def plan(
    sessions: list[SessionInfo],
    policy: RetentionPolicy,
    *,
    now: float,
    active: Iterable[Path] = (),
    free: int | None = None,
) -> list[Deletion]:
    """Which sessions to delete (pure): too old first, then the oldest until the total is at
    most ``max_bytes`` and, with ``free`` (the file system's free bytes now), until at least
    :attr:`RetentionPolicy.free_target` would be free."""
    busy = {Path(p) for p in active}
    out: list[Deletion] = []
    kept: list[SessionInfo] = []
    for s in sessions:
        age = now - s.last_write
        if (
            policy.max_age_seconds is not None
            and age > policy.max_age_seconds
            and not protected(s, now, busy)
        ):
            days = policy.max_age_seconds / 86400
            out.append(Deletion(s, f"older than {days:g} day{'' if days == 1 else 's'}"))
        else:
            kept.append(s)
    total = sum(s.bytes for s in kept)
    wanted = policy.free_target
    short = wanted - free - sum(d.session.bytes for d in out) if wanted and free is not None else 0
    for s in kept:
        over = policy.max_bytes is not None and total > policy.max_bytes
        if not over and short <= 0:
            break
        if protected(s, now, busy):
            continue
        if over:
            reason = f"total over {policy.max_bytes} bytes ({total} bytes)"
        else:
            reason = (
                f"free space below min_free_bytes ({policy.min_free_bytes} bytes)"
                f" with {floor_headroom(policy.min_free_bytes)} bytes to spare"
            )
        out.append(Deletion(s, reason))
        total -= s.bytes
        short -= s.bytes
    return out


def chunk_cut(oldest_first: Iterable[C], need: int) -> list[C]:
    """The oldest pending chunks whose allocated bytes free at least ``need`` (pure; fewer
    when there are not enough)."""
    cut: list[C] = []
    for chunk in oldest_first:
        if need <= 0:
            break
        cut.append(chunk)
        need -= chunk.allocated
    return cut


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


@dataclass(frozen=True)
class PendingChunk:
    """An undelivered chunk of a session being captured, and the bytes it takes."""

    item: SpoolItem
    allocated: int

    @property
    def key(self) -> str:
        return self.item.key


@dataclass
class Outcome:
    """What one pass of retention did and left."""

    deletions: list[Deletion] = field(default_factory=list)
    dropped: list[PendingChunk] = field(default_factory=list)  # undelivered chunks deleted
    free: int | None = None  # the file system's free bytes afterwards (None: not read)
    short: int = 0  # bytes still missing to min_free_bytes: nothing deletable is left
    live: int = 0  # sessions being captured (never deleted whole)


def _delete(deletions: list[Deletion]) -> list[Deletion]:
    done = []
    for deletion in deletions:
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


def _pending_chunks(
    root: Path, live: list[SessionInfo], skip: Collection[str]
) -> list[PendingChunk]:
    """The undelivered chunks of ``live`` sessions but those in ``skip``, oldest first."""
    spool = Spool(root)
    found = []
    for s in live:
        for item in spool.pending_in(s.path):
            if item.key in skip:
                continue
            with contextlib.suppress(FileNotFoundError):
                found.append(PendingChunk(item, allocated(os.lstat(item.path))))
    return sorted(found, key=lambda c: c.item)


def _drop(root: Path, cut: list[PendingChunk]) -> list[PendingChunk]:
    if not cut:
        return []
    try:
        gone = {item.key for item in Spool(root).drop(c.item for c in cut)}
    except OSError as exc:
        log.error("retention: cannot drop undelivered chunks: %s", exc)
        return []
    dropped = [c for c in cut if c.key in gone]
    if dropped:
        sessions = sorted({"/".join(c.item.session_dir.parts[-2:]) for c in dropped})
        log.warning(
            "retention: free space below min_free_bytes and no finished session left: dropped"
            " the %d oldest undelivered chunk(s) (%d bytes) of %s (their archives are kept)",
            len(dropped),
            sum(c.allocated for c in dropped),
            ", ".join(sessions),
        )
    return dropped


def keep(
    root: Path,
    policy: RetentionPolicy,
    *,
    active: Iterable[Path] = (),
    now: float | None = None,
    free_space: Callable[[Path], int] | None = None,
    skip: Collection[str] = (),
) -> Outcome:
    """Apply ``policy`` under ``root`` (deleting only when it is :attr:`~RetentionPolicy.active`);
    ``free_space`` reads the file system's free bytes, for the floor; ``skip``: chunks never to
    drop (in flight, or accepted by Sentry)."""
    root = Path(root)
    outcome = Outcome()
    if not root.is_dir():
        return outcome
    now = time.time() if now is None else now
    floor = policy.min_free_bytes if free_space is not None else 0

    def read_free() -> int | None:
        if not floor:
            return None
        try:
            return free_space(root)  # type: ignore[misc]
        except OSError:
            return None

    free = read_free()
    busy = {Path(p) for p in active}
    if policy.active:
        sessions = list_sessions(root)
        for _ in range(MAX_ROUNDS):  # captures write meanwhile: look at the free space again
            wanted = plan(sessions, policy, now=now, active=busy, free=free)
            if not wanted:
                break
            done = _delete(wanted)
            outcome.deletions += done
            gone = {d.session.path for d in wanted}
            sessions = [s for s in sessions if s.path not in gone]
            free = read_free()
            if not done:
                break
        live = [s for s in sessions if protected(s, now, busy)]
        outcome.live = len(live)
        if free is not None and free < policy.min_free_bytes and len(live) == len(sessions):
            chunks = _pending_chunks(root, live, skip)
            outcome.dropped = _drop(root, chunk_cut(chunks, policy.free_target - free))
            free = read_free() if outcome.dropped else free
    outcome.free = free
    if free is not None:
        outcome.short = max(0, floor - free)
    return outcome


def enforce(
    root: Path,
    policy: RetentionPolicy,
    *,
    active: Iterable[Path] = (),
    now: float | None = None,
) -> list[Deletion]:
    """Apply ``policy``'s age and size limits under ``root``; log and return what was deleted
    (:func:`keep` also keeps the floor)."""
    if not policy.active:
        return []
    return keep(root, policy, active=active, now=now).deletions


def budget_warning(out: Path, max_bytes: int | None, min_free_bytes: int) -> str | None:
    """A warning when ``max_bytes`` plus ``min_free_bytes`` exceeds what the file system of
    ``out`` (or of its nearest existing parent) holds: the floor, not ``max_bytes``, then
    bounds what is kept. ``None`` when they fit, or when the file system cannot be read."""
    if max_bytes is None or not min_free_bytes:
        return None
    path = Path(os.path.abspath(Path(out).expanduser()))
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    total = st.f_blocks * st.f_frsize
    if max_bytes + min_free_bytes <= total:
        return None
    return (
        f"retention.max_bytes ({size(max_bytes, exact=True)}) plus capture.min_free_bytes"
        f" ({size(min_free_bytes, exact=True)}) is more than the file system of {out} holds"
        f" ({size(total, exact=True)}): the oldest sessions will be deleted to keep"
        f" {size(min_free_bytes, exact=True)} free before max_bytes is reached"
    )
