"""Can a process write under an output directory? Proved by doing it, leaving nothing behind:
permission bits say nothing for root, nor about a read-only mount or ``/proc``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def out_write_problem(out: Path | str) -> str | None:
    """Why files cannot be written under ``out`` (``None`` when they can). When ``out`` does not
    exist yet, the nearest existing ancestor must take a new directory (made and removed)."""
    path = Path(os.path.abspath(Path(out).expanduser()))
    probe_in = path
    while not probe_in.exists() and probe_in != probe_in.parent:
        probe_in = probe_in.parent
    if not probe_in.is_dir():
        return f"{probe_in} exists and is not a directory"
    try:
        if probe_in == path:
            with tempfile.NamedTemporaryFile(dir=path, prefix=".rokuprof-probe-"):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=probe_in, prefix=".rokuprof-probe-"))
    except OSError as exc:
        what = "write to" if probe_in == path else f"create {path}: cannot write to"
        return f"cannot {what} {probe_in}: {exc.strerror or exc}"
    return None


def output_dir_problem(path: Path) -> str | None:
    """Create ``path`` (with its parents) if needed and prove it writable by creating and
    removing a file in it."""
    if path.exists() and not path.is_dir():
        return f"{path} exists and is not a directory"
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".rokuprof-probe-"):
            pass
    except OSError as exc:
        where = exc.filename or path
        return f"cannot write to {where}: {exc.strerror or exc}"
    return None


def output_file_problem(path: Path) -> str | None:
    """Why a file could not be written at ``path`` (``None`` when it can): not a directory,
    and its directory exists and takes a new file (a file there already must be writable)."""
    if path.is_dir():
        return f"cannot write {path}: it is a directory"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return f"cannot write {path}: no directory {parent}"
    if path.exists() and not os.access(path, os.W_OK):
        return f"cannot write {path}: it is not writable"
    return out_write_problem(parent)
