"""An app's source read for the report (``report --source``, and ``profile``, which has it): only
the files asked for, by their ``pkg:/`` path, each within :data:`MAX_FILE_BYTES` and all within
:data:`MAX_TOTAL_BYTES` (a longer file is cut, and the page says so).

The source is a directory or an app ``.zip``. A ``pkg:/`` path maps to one path inside it
(:func:`~rokuprof.export.report.source.pkg_relative`: no ``..``, nothing absolute); in a
directory the file found there must still be inside it once its links are followed (a link
that leads out is not read), and must be a regular file (a FIFO is not waited on). A zip is
opened with the packaging limits (:func:`~rokuprof.app.package.open_app_zip`: every entry
checked before any is inflated) and an entry is inflated no further than the byte limit.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.app.package import PackageError, open_app_zip
from rokuprof.export.report.source import (
    MAX_FILE_BYTES,
    MAX_TOTAL_BYTES,
    SourceText,
    pkg_relative,
)
from rokuprof.units import size


class SourceError(Exception):
    """The source cannot be used; one line naming it and why."""


@dataclass
class AppSource:
    """A checked source directory or zip (see :func:`open_source`)."""

    path: Path
    root: Path | None  # a directory's real path; None for a zip
    entries: dict[str, zipfile.ZipInfo] = field(default_factory=dict)
    max_file_bytes: int = MAX_FILE_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES

    @property
    def label(self) -> str:
        return self.path.name

    def read(self, files: list[str]) -> dict[str, SourceText]:
        """Each ``pkg:/`` file of ``files`` as read (or why not), within the byte limits."""
        left = self.max_total_bytes
        out: dict[str, SourceText] = {}
        archive = None
        try:
            if self.root is None:
                archive, self.entries = _open_zip(self.path)
            for file in files:
                rel = pkg_relative(file)
                if rel is None:
                    out[file] = SourceText(None, "not a pkg:/ path inside the app: not read")
                    continue
                limit = min(self.max_file_bytes, left)
                if limit <= 0:
                    out[file] = SourceText(None, "not read: the page holds enough source")
                    continue
                if archive is not None:
                    data, whole, why = _zip_entry(archive, self.entries.get(rel), limit)
                else:
                    data, whole, why = _dir_file(self.root, rel, limit)
                if data is None:
                    out[file] = SourceText(None, why)
                    continue
                left -= len(data)
                note = None if whole else f"cut after {size(len(data))}: the rest was not read"
                out[file] = SourceText(_decode(data, whole), note)
        finally:
            if archive is not None:
                archive.close()
        return out


def open_source(path: Path) -> AppSource:
    """``path`` checked as a source (a directory, or a zip within the packaging limits); a
    :class:`SourceError` naming it otherwise."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise SourceError(f"--source {path}: no such directory or file") from None
    except OSError as exc:
        raise SourceError(f"--source {path}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        if not os.access(path, os.R_OK | os.X_OK):
            raise SourceError(f"--source {path}: the directory cannot be read")
        return AppSource(path, path.resolve())
    if not stat.S_ISREG(st.st_mode):
        raise SourceError(f"--source {path}: neither a directory nor a .zip")
    archive, entries = _open_zip(path)
    archive.close()
    return AppSource(path, None, entries)


def _open_zip(path: Path) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    try:
        return open_app_zip(path)
    except PackageError as exc:
        raise SourceError(f"--source {exc}") from None


def _decode(data: bytes, whole: bool) -> str:
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    if not whole and "\n" in text:
        text = text[: text.rindex("\n") + 1]  # a cut line is not shown half
    return text


def _dir_file(root: Path, rel: str, limit: int) -> tuple[bytes | None, bool, str | None]:
    path = root / rel
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        return None, False, "not in the source"
    except (OSError, RuntimeError):
        return None, False, "cannot be read"
    if not real.is_relative_to(root):
        return None, False, "a link out of the source directory: not read"
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        return None, False, f"cannot be read ({exc.strerror or exc})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as exc:
        return None, False, f"cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    return data[:limit], len(data) <= limit, None


def _zip_entry(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo | None, limit: int
) -> tuple[bytes | None, bool, str | None]:
    if info is None:
        return None, False, "not in the source"
    try:
        with archive.open(info) as f:
            data = f.read(min(limit, info.file_size) + 1)
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError) as exc:
        return None, False, f"cannot be read ({exc})"
    return data[:limit], len(data) <= limit, None
