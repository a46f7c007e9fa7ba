"""Bounds on one session's archive: bytes after a decode failure, bytes per session, and a
free-space floor on the output file system.

Everything a device sends is archived, since a later rokuprof may read what this one cannot;
but a device that streams garbage, or far more than any run, must not fill the disk. The
:class:`ArchiveGuard` tells the run how many more bytes it may archive and when the session
must end, with a :class:`Cut` naming the limit (its config key) and saying why. It reads no
clock or disk itself: both are given to it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.capture.record import FAILED, TRUNCATED
from rokuprof.units import size

MIB = 1024**2
GIB = 1024**3


@dataclass(frozen=True)
class ArchiveLimits:
    """``0`` turns the session cap and the floor off; ``max_bytes_after_error = 0`` ends the
    session right after the read that held the corrupt data."""

    max_bytes_after_error: int = 16 * MIB  # kept after the decoder's failure offset
    max_session_bytes: int = 4 * GIB  # the whole archive of one session
    min_free_bytes: int = 1 * GIB  # free space the output file system keeps
    check_seconds: float = 1.0  # free space is looked up at most this often
    hold_seconds: float = 60.0  # a write refused for lack of space is retried this long
    hold_bytes: int = 4 * MIB  # held in memory meanwhile: at most this or max_bytes_after_error

    def __post_init__(self) -> None:
        for name in ("max_bytes_after_error", "max_session_bytes", "min_free_bytes", "hold_bytes"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")


@dataclass(frozen=True)
class Cut:
    """Why a session ended early: ``limit`` is the config key, ``status`` the final status."""

    limit: str
    status: str
    message: str


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged process may still write on ``path``'s file system (the nearest
    existing parent is asked when ``path`` does not exist yet)."""
    path = Path(path).absolute()
    while not path.exists() and path.parent != path:
        path = path.parent
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def floor_message(free: int, limits: ArchiveLimits, where: Path) -> str:
    return (
        f"only {size(free, exact=True)} free on the file system of {where}, below min_free_bytes "
        f"({size(limits.min_free_bytes, exact=True)})"
    )


@dataclass(eq=False)
class ArchiveGuard:
    """Applies :class:`ArchiveLimits` to one session's archive (see the module docstring)."""

    limits: ArchiveLimits
    free_space: Callable[[], int]
    where: Path
    clock: Callable[[], float] = time.monotonic
    _next_check: float = field(default=float("-inf"), init=False, repr=False)

    def room(self, archived: int, error_offset: int | None) -> int | None:
        """How many more bytes may be archived now (``None``: no bound)."""
        lim = self.limits
        ends = []
        if lim.max_session_bytes:
            ends.append(lim.max_session_bytes)
        if error_offset is not None:
            ends.append(max(error_offset + lim.max_bytes_after_error, archived))
        return max(0, min(ends) - archived) if ends else None

    def check(self, archived: int, error_offset: int | None) -> Cut | None:
        """After a write: the cut that ends the session now, if any."""
        lim = self.limits
        if error_offset is not None and archived >= error_offset + lim.max_bytes_after_error:
            after = archived - error_offset
            return Cut(
                "max_bytes_after_error",
                FAILED,
                f"archived {size(after, exact=True)} after the corrupt data "
                f"(max_bytes_after_error = {size(lim.max_bytes_after_error, exact=True)}), "
                "then closed the connection",
            )
        if lim.max_session_bytes and archived >= lim.max_session_bytes:
            return Cut(
                "max_session_bytes",
                TRUNCATED,
                "the archive reached max_session_bytes "
                f"({size(lim.max_session_bytes, exact=True)}): "
                "closed the connection",
            )
        if lim.min_free_bytes and self.clock() >= self._next_check:
            self._next_check = self.clock() + lim.check_seconds
            free = self.free_space()
            if free < lim.min_free_bytes:
                return Cut(
                    "min_free_bytes",
                    TRUNCATED,
                    floor_message(free, lim, self.where) + ": closed the connection",
                )
        return None
