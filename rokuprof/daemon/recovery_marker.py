"""A session's ``recovering.json`` marker and the memory reading a conversion is measured by.

The marker is written (atomically, durably) before a crashed session's conversion starts and
removed when its outcome is recorded; one found at start-up means the previous process died
converting that session (see :mod:`rokuprof.daemon.recovery_policy`). It holds the attempt
number, when that attempt started and the process ID.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from rokuprof.store.files import open_within, write_atomic
from rokuprof.store.layout import SessionDir
from rokuprof.timefmt import utc_iso

log = logging.getLogger(__name__)

MARKER_FILE = "recovering.json"
_MAX_MARKER_BYTES = 4096


def marker_path(where: SessionDir) -> Path:
    return where.path / MARKER_FILE


def read_marker(where: SessionDir) -> dict | None:
    """The marker's content; ``None`` when there is none, ``{}`` when it cannot be read."""
    try:
        with open_within(marker_path(where), where.root) as f:  # never through a link
            data = f.read(_MAX_MARKER_BYTES)
    except FileNotFoundError:
        return None
    except OSError:
        return {}
    try:
        marker = json.loads(data)
    except ValueError:
        return {}
    return marker if isinstance(marker, dict) else {}


def write_marker(where: SessionDir, attempt: int, now: float) -> Path:
    """Say that conversion ``attempt`` of the session starts now (``OSError`` if it cannot)."""
    text = json.dumps({"attempt": attempt, "started": utc_iso(now), "pid": os.getpid()})
    return write_atomic(marker_path(where), text + "\n", within=where.root)


def remove_marker(where: SessionDir) -> bool:
    """Remove the marker if there is one; ``False`` (logged) when it cannot be."""
    try:
        marker_path(where).unlink(missing_ok=True)
    except OSError as exc:
        log.error("cannot remove %s: %s", marker_path(where), exc)
        return False
    return True


def rss_bytes() -> int | None:
    """This process's resident memory (Linux ``/proc/self/statm``), ``None`` elsewhere."""
    try:
        with open("/proc/self/statm", "rb") as f:
            resident = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return resident * os.sysconf("SC_PAGE_SIZE")
