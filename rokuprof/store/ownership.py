"""Who else could steer a root process's writes: the output directory's owners, as ssh's
StrictModes checks a user's files.

A process running as root (effective uid 0) writes, sweeps and deletes under its output
directory. If another user owns that directory (or one of its ancestors), or may write in one
of them (group or others write permission without the sticky bit), that user can swap a name
for a link and choose where root writes and what it deletes. :func:`root_output_problem` says
so in one sentence; the daemon refuses to start on it and ``rokuprof config check`` reports it.
Both the path as given and the path it resolves to are checked, from ``/`` down to the output
directory (or, while it does not exist yet, to the nearest ancestor it will be created in).
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path


def _owner_name(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _chain(path: Path) -> list[Path]:
    """``/``, then each ancestor down to ``path``, keeping only those that exist."""
    return [p for p in reversed([path, *path.parents]) if p.exists()]


def directories_to_check(out: Path | str) -> list[Path]:
    """Every directory that decides where ``out`` leads: the ancestors of the path as given
    and of the path it resolves to, and ``out`` itself when it exists (each once)."""
    given = Path(os.path.abspath(Path(out).expanduser()))
    seen: set[tuple[int, int]] = set()
    found = []
    for path in (*_chain(given), *_chain(Path(os.path.realpath(given)))):
        try:
            st = path.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            found.append(path)
    return found


def root_output_problem(out: Path | str, *, euid: int | None = None) -> str | None:
    """Why a root process must not write under ``out`` (``None`` when it may, or when the
    process is not root). ``euid``: the effective uid to judge for (default: this process's)."""
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
    if euid != 0:
        return None
    for path in directories_to_check(out):
        st = path.stat()
        if not stat.S_ISDIR(st.st_mode):
            continue  # not a directory: the command's own check says so
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid not in (0, euid):
            return (
                f"running as root, refusing the output directory {out}: {path} belongs to "
                f"{_owner_name(st.st_uid)}, who could choose where root writes and what it "
                f"deletes (chown root {path}, or run rokuprof as that user)"
            )
        if mode & 0o022 and not mode & stat.S_ISVTX:
            who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002)) if mode & bit)
            return (
                f"running as root, refusing the output directory {out}: {path} is writable by "
                f"{who} (mode {mode:04o}) without the sticky bit, so they could choose where "
                f"root writes and what it deletes (chmod go-w {path})"
            )
    return None
