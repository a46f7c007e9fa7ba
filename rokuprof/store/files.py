"""Durable, owner-only file writes: a file appears whole under its final name, or not at all.

Every file and directory rokuprof creates under its output gets one mode, owner-only by default
(``0600`` files, ``0700`` directories: a profile carries an app's internals), whatever the
process umask. :func:`set_file_mode` changes it for the whole process (the daemon's
``[capture] file_mode``); a directory gets the file mode plus search (``x``) wherever it grants
read. :func:`follow_umask` makes the process write as any command-line tool does (``0666`` and
``0777`` less the umask): ``export``, ``report``, ``convert`` and ``diff --html`` do.
Use :func:`write_atomic` for whole files (:func:`write_atomic_stream` for a file made in pieces,
written as they come), :func:`make_dirs` for directories and
:func:`open_new` (or :func:`opener` with ``open()``) for files written piecewise.

Files stay inside the output directory: a new file is never opened through a symbolic link
(``O_NOFOLLOW``), ``within=ROOT`` makes :func:`make_dirs` and :func:`write_atomic` refuse
(:class:`SymlinkRefused`) a link anywhere below ``ROOT`` (``ROOT`` itself may be one: the
user chose it), :func:`open_within` reads nothing through one (crash recovery's reads), and
:func:`sweep_tmp` never enters or deletes through a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

TMP_SUFFIX = ".tmp"
RESERVE_BYTES = 64 * 1024  # a SpaceReserve: room for a final session.json (and its .tmp)
DEFAULT_FILE_MODE = 0o600
_ALLOWED_BITS = 0o666  # read and write for owner, group, others; never execute or special bits

_file_mode: int | None = DEFAULT_FILE_MODE  # None: 0666 / 0777 less the umask
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC


class SymlinkRefused(OSError):
    """A path below the output directory is a symbolic link: rokuprof does not write, sweep or
    delete through it (it could lead anywhere)."""

    def __init__(self, link: Path, root: Path, action: str = "writes") -> None:
        hint = (
            "not read"
            if action == "reads"
            else "make it a real directory, or give its target as the output"
        )
        super().__init__(
            f"{link} is a symbolic link: rokuprof never {action} through a link inside its "
            f"output directory {root} ({hint})"
        )
        self.link, self.root = link, root


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


def follow_umask() -> None:
    """From now on create files ``0666`` and directories ``0777`` less the process umask."""
    global _file_mode
    _file_mode = None


def file_mode() -> int | None:
    """The mode of new files (``None``: the umask decides)."""
    return _file_mode


def dir_mode() -> int:
    return 0o777 if _file_mode is None else dir_mode_for(_file_mode)


def open_new(path: Path | str, flags: int = os.O_WRONLY | os.O_CREAT | os.O_EXCL) -> int:
    """``os.open`` with the file mode (exactly: not narrowed or widened by the umask, unless
    :func:`follow_umask`), never through a symbolic link (``O_NOFOLLOW``: a link at ``path``
    fails with ``ELOOP``)."""
    mode = _file_mode
    fd = os.open(path, flags | _CLOEXEC | _NOFOLLOW, 0o666 if mode is None else mode)
    if flags & os.O_CREAT and mode is not None:
        try:
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
    return fd


def opener(path: str, flags: int) -> int:
    """An ``opener`` for ``open()`` / ``aiofiles.open()``: new files get the file mode."""
    return open_new(path, flags)


def make_dirs(path: Path | str, *, exist_ok: bool = True, within: Path | str | None = None) -> Path:
    """Create ``path`` and its missing parents with the directory mode; directories that
    already exist keep theirs. With ``within`` (an ancestor of ``path``), no directory below
    ``within`` may be a symbolic link (:class:`SymlinkRefused`): each is opened relative to
    its parent with ``O_NOFOLLOW``."""
    path = Path(path)
    if within is not None:
        return _make_dirs_within(Path(within), path, exist_ok)
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
        if _file_mode is not None:
            os.chmod(directory, mode)  # the umask may have narrowed it
    return path


def _open_dir_at(parent: int, name: str, shown: Path, root: Path, action: str = "writes") -> int:
    """Open the directory ``name`` in the directory ``parent`` without following a link."""
    try:
        return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent)
    except OSError:
        try:
            link = stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
        except OSError:
            link = False
        if link:
            raise SymlinkRefused(shown, root, action) from None
        raise


def open_within(path: Path | str, root: Path | str) -> IO[bytes]:
    """The regular file ``path`` (below ``root``) opened for reading, openat-style: no symbolic
    link below ``root`` is followed (:class:`SymlinkRefused`: nothing is read through it;
    ``root`` itself may be one), and anything but a regular file (a FIFO put there) is an
    ``OSError``, opened without blocking."""
    root, path = Path(root), Path(path)
    *dirs, name = path.relative_to(root).parts
    fd = os.open(root, _DIR_FLAGS)
    try:
        where = root
        for part in dirs:
            where = where / part
            child = _open_dir_at(fd, part, where, root, "reads")
            os.close(fd)
            fd = child
        try:
            file = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | _NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SymlinkRefused(path, root, "reads") from None
            raise
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(file).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file; not read")
        return os.fdopen(file, "rb")
    except BaseException:
        os.close(file)
        raise


def _make_dirs_within(root: Path, path: Path, exist_ok: bool) -> Path:
    """:func:`make_dirs` below ``root``, openat-style: no link below ``root`` is followed."""
    parts = path.relative_to(root).parts
    if not parts:
        return make_dirs(root, exist_ok=exist_ok)
    make_dirs(root)  # the output directory itself: as given (a link to it is the user's choice)
    mode = dir_mode()
    fd = os.open(root, _DIR_FLAGS)
    try:
        where = root
        for i, name in enumerate(parts):
            where, last = where / name, i == len(parts) - 1
            created = False
            if last and not exist_ok:
                os.mkdir(name, mode, dir_fd=fd)  # FileExistsError: the caller wants a new one
                created = True
            else:
                try:
                    os.mkdir(name, mode, dir_fd=fd)
                    created = True
                except FileExistsError:
                    pass  # a directory (or a link, refused below)
            child = _open_dir_at(fd, name, where, root)
            os.close(fd)
            fd = child
            if created and _file_mode is not None:
                os.fchmod(fd, mode)  # the umask may have narrowed it
    finally:
        os.close(fd)
    return path


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_text(path: Path | str, text: str) -> None:
    """Append ``text`` to ``path`` (created when missing) in one write, then fsync: a file
    other writers append to as well (CI's ``$GITHUB_STEP_SUMMARY``), never replaced."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def write_atomic(path: Path | str, data: bytes | str, *, within: Path | str | None = None) -> Path:
    """Write ``data`` to ``path`` via ``path.tmp``: write, flush, fsync, rename, fsync the dir.

    The file gets the file mode, missing directories the directory mode (``within``: no link
    below it, see :func:`make_dirs`); ``path.tmp`` is never opened through a link. A crash at
    any moment leaves either the old file (or none) or the new one, never a part; at worst a
    stale ``*.tmp`` that :func:`sweep_tmp` removes.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    write_atomic_stream(path, (raw,), within=within)
    return Path(path)


def write_atomic_stream(
    path: Path | str, pieces: Iterable[bytes], *, within: Path | str | None = None
) -> int:
    """:func:`write_atomic` of a file given as pieces, each written to ``path.tmp`` as it comes
    (so a file far larger than memory can be written: only one piece is held at a time);
    return the bytes written. Whatever goes wrong while the pieces are made or written (the
    iterator's own error included) removes ``path.tmp`` and leaves ``path`` as it was."""
    path = Path(path)
    make_dirs(path.parent, within=within)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    size = 0
    try:
        with open(tmp, "wb", opener=opener) as f:  # O_CREAT | O_TRUNC, the file mode
            for piece in pieces:
                f.write(piece)
                size += len(piece)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)
    return size


class SpaceReserve:
    """A few blocks held on a file system, so that a run's final ``session.json`` can still be
    written after the run filled the disk: :meth:`release` frees them. The blocks belong to
    an anonymous temporary file (no name; the kernel frees them if the process dies), filled
    with random bytes so that a compressing file system still allocates them. A file system
    with no room for them holds none (``held`` is ``False``)."""

    def __init__(self, directory: Path | str, size: int = RESERVE_BYTES) -> None:
        self._file: IO[bytes] | None = None
        try:
            f = tempfile.TemporaryFile(dir=directory)  # noqa: SIM115 - held until release()
        except OSError:
            return
        try:
            f.write(os.urandom(size))
            f.flush()
            os.fsync(f.fileno())
        except OSError:
            f.close()
            return
        self._file = f

    @property
    def held(self) -> bool:
        return self._file is not None

    def release(self) -> None:
        """Free the blocks (idempotent)."""
        f, self._file = self._file, None
        if f is not None:
            with contextlib.suppress(OSError):
                f.close()

    def __enter__(self) -> SpaceReserve:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _walk(top: int, start: str) -> Iterator[tuple[str, list[str], int]]:
    """``(directory relative to top, names of what is not a directory in it, its fd)`` for
    ``start`` and every directory below it. Every directory is opened with ``O_NOFOLLOW``, so a
    link is never opened, let alone entered (``os.fwalk`` opens a linked directory before it
    finds it is one); a ``start`` that is a link yields nothing."""
    try:
        stack = [(start, os.open(start, _DIR_FLAGS | _NOFOLLOW, dir_fd=top))]
    except OSError:
        return
    try:
        while stack:
            where, fd = stack.pop()
            try:
                names, dirs = [], []
                with os.scandir(fd) as entries:
                    for entry in entries:
                        (dirs if entry.is_dir(follow_symlinks=False) else names).append(entry.name)
                yield where, names, fd
                for name in dirs:
                    with contextlib.suppress(OSError):  # gone, or replaced by a link meanwhile
                        child = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
                        stack.append((os.path.join(where, name), child))
            finally:
                os.close(fd)
    finally:
        for _, fd in stack:
            os.close(fd)


def sweep_tmp(root: Path | str, under: str | None = None) -> list[Path]:
    """Delete leftover ``*.tmp`` files (half-written by a crash) under ``root``, or only under
    its subdirectory ``under`` (one name). Only regular files go; no symbolic link below
    ``root`` is entered or deleted through (a linked ``under`` is not swept at all)."""
    root = Path(root)
    removed: list[Path] = []
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return removed
    try:
        for where, names, fd in _walk(top, under or "."):
            for name in names:
                if not name.endswith(TMP_SUFFIX):
                    continue
                with contextlib.suppress(OSError):
                    if stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        os.unlink(name, dir_fd=fd)
                        removed.append(root / where / name)
    except OSError:
        pass  # ``under`` is missing or unreadable: nothing to sweep
    finally:
        os.close(top)
    return removed
