"""Durable, owner-only file writes: a file appears whole under its final name, or not at all.

Every file and directory rokuprof creates under its output gets one mode, owner-only by default
(``0600`` files, ``0700`` directories: a profile carries an app's internals), whatever the
process umask. :func:`set_file_mode` changes it for the whole process (the daemon's
``[capture] file_mode``); a directory gets the file mode plus search (``x``) wherever it grants
read. Use :func:`write_atomic` for whole files, :func:`make_dirs` for directories and
:func:`open_new` (or :func:`opener` with ``open()``) for files written piecewise.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TMP_SUFFIX = ".tmp"
DEFAULT_FILE_MODE = 0o600
_ALLOWED_BITS = 0o666  # read and write for owner, group, others; never execute or special bits

_file_mode = DEFAULT_FILE_MODE


def check_file_mode(mode: int) -> str | None:
    """Why ``mode`` cannot be rokuprof's file mode, or ``None`` when it can."""
    if mode & ~_ALLOWED_BITS:
        return f"{mode:04o} has bits other than read/write (allowed: within 0666)"
    if mode & 0o600 != 0o600:
        return f"{mode:04o} does not let the owner read and write (it must include 0600)"
    return None


def dir_mode_for(file_mode: int) -> int:
    """The directory mode that goes with ``file_mode``: ``0600`` -> ``0700``, ``0640`` ->
    ``0750``."""
    return file_mode | ((file_mode & 0o444) >> 2)


def set_file_mode(mode: int) -> None:
    """Use ``mode`` for every file rokuprof creates from now on (directories follow)."""
    global _file_mode
    problem = check_file_mode(mode)
    if problem:
        raise ValueError(problem)
    _file_mode = mode


def file_mode() -> int:
    return _file_mode


def dir_mode() -> int:
    return dir_mode_for(_file_mode)


def open_new(path: Path | str, flags: int = os.O_WRONLY | os.O_CREAT | os.O_EXCL) -> int:
    """``os.open`` with the file mode (exactly: not narrowed or widened by the umask)."""
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), _file_mode)
    if flags & os.O_CREAT:
        try:
            os.fchmod(fd, _file_mode)
        except BaseException:
            os.close(fd)
            raise
    return fd


def opener(path: str, flags: int) -> int:
    """An ``opener`` for ``open()`` / ``aiofiles.open()``: new files get the file mode."""
    return open_new(path, flags)


def make_dirs(path: Path | str, *, exist_ok: bool = True) -> Path:
    """Create ``path`` and its missing parents with the directory mode; directories that
    already exist keep theirs."""
    path = Path(path)
    missing = []
    parent = path
    while not parent.is_dir():
        missing.append(parent)
        if parent.parent == parent:
            break
        parent = parent.parent
    if not missing and not exist_ok:
        raise FileExistsError(f"{path} already exists")
    mode = dir_mode()
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            if directory == path and not exist_ok:
                raise
            continue  # made by someone else meanwhile: theirs
        os.chmod(directory, mode)  # the umask may have narrowed it
    return path


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path | str, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` via ``path.tmp``: write, flush, fsync, rename, fsync the dir.

    The file gets the file mode, missing directories the directory mode. A crash at any moment
    leaves either the old file (or none) or the new one, never a part; at worst a stale
    ``*.tmp`` that :func:`sweep_tmp` removes.
    """
    path = Path(path)
    make_dirs(path.parent)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "wb", opener=opener) as f:  # O_CREAT | O_TRUNC, the file mode
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)
    return path


def sweep_tmp(root: Path | str) -> list[Path]:
    """Delete leftover ``*.tmp`` files under ``root`` (half-written by a crash)."""
    removed = []
    for tmp in Path(root).rglob(f"*{TMP_SUFFIX}"):
        if tmp.is_file():
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed.append(tmp)
    return removed
