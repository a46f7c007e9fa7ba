"""Package a developer's app for a profiled run: a zip of its files with the profiler's keys set in
its manifest, built in memory. The user's files are only read, never changed.

The source is a directory with ``manifest`` at its root, or a ``.zip`` with ``manifest`` at its
root. From a directory, VCS folders (``.git``, ``.svn``, ``.hg``, at any depth) are left out, and
so are the paths a ``.rokuignore`` at the root names (see :mod:`rokuprof.app.ignore`) and that
file itself; ``manifest`` is always in. A symbolic link is followed when it points inside the
directory; one that points outside it (or nowhere, or back into a folder that holds it) is an
error naming it, unless ``.rokuignore`` leaves it out. Fifos, sockets and devices are skipped.
A zip is taken as it is (every file entry, only its manifest changed), read within limits: entry
names with ``..``, absolute paths, links, encryption and an uncompressed total over the input
limit are refused before anything is inflated.

The package is deterministic: entries sorted by name, one fixed timestamp, fixed attributes, so
the same files give the same bytes (an unchanged app is "Identical to previous version").
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.app.ignore import IgnoreRules
from rokuprof.app.manifest import ProfilerKeys, parse_manifest, profiled_manifest
from rokuprof.bounded_read import read_capped

MANIFEST = "manifest"
IGNORE_FILE = ".rokuignore"
VCS_NAMES = frozenset({".git", ".svn", ".hg"})
#: The zip's size limit (what is sent to the device).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: The input's limit (the files' total size, or a zip's uncompressed total) is this many times
#: the zip's, unless given.
INPUT_FACTOR = 4
DEFAULT_MAX_FILES = 10_000
MAX_IGNORE_BYTES = 1 << 20
#: Every entry's timestamp: the earliest a zip can hold.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_UNIX = 3  # ZipInfo.create_system: the attributes are Unix modes
_FILE_ATTR = (stat.S_IFREG | 0o644) << 16
_IGNORE_HINT = " (a .rokuignore can leave large files out)"
_DRIVE = re.compile(r"^[A-Za-z]:")
_EOCD = struct.Struct("<4s4H2LH")  # a zip's end of central directory record
_EOCD_SEARCH = _EOCD.size + 0xFFFF  # it ends the file, after a comment of up to 64 KiB
_CD_BYTES_PER_FILE = 1024  # room in the central directory for one entry's name and extras


class PackageError(Exception):
    """The app cannot be packaged; the message names the file and what is wrong, in one line."""


@dataclass(frozen=True)
class PackagedApp:
    zip_bytes: bytes
    manifest: dict[str, str]  # the manifest as installed (after the keys were set)
    files: int
    title: str  # the manifest's title, else the directory's (or zip's) name
    version: str  # major.minor.build from the manifest, "" when absent
    #: Paths left out of a directory (VCS folders, ``.rokuignore`` and its patterns, special
    #: files), relative to the root; a left-out folder is named once, not its contents.
    skipped: tuple[str, ...] = field(default=())


@dataclass
class _Budget:
    """The input's limits, counted as files are read."""

    max_bytes: int
    max_files: int
    hint: str = ""  # how to make it smaller
    bytes: int = 0
    files: int = 0

    def take(self, size: int, where: str) -> int:
        """Count one file of ``size`` bytes; what it may still read (to notice a file growing)."""
        self.files += 1
        if self.files > self.max_files:
            raise PackageError(f"{where}: more than {self.max_files:,} files to package")
        self.bytes += size
        if self.bytes > self.max_bytes:
            raise PackageError(
                f"{where}: the app's files add up to more than {self.max_bytes:,} bytes{self.hint}"
            )
        return self.max_bytes - self.bytes + size


def package_app(
    source: Path,
    keys: ProfilerKeys,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_input_bytes: int | None = None,
    max_files: int = DEFAULT_MAX_FILES,
) -> PackagedApp:
    """Zip ``source`` (a directory or a ``.zip``, ``manifest`` at its root) with ``keys`` set in
    its manifest. Raises :class:`PackageError` when it cannot."""
    budget = _Budget(
        INPUT_FACTOR * max_bytes if max_input_bytes is None else max_input_bytes, max_files
    )
    skipped: list[str] = []
    if source.is_dir():
        budget.hint = _IGNORE_HINT
        files = _read_directory(source, budget, skipped)
    elif source.is_file():
        files = _read_zip(source, budget)
    elif source.exists() or source.is_symlink():
        raise PackageError(f"{source} is neither a directory nor a .zip")
    else:
        raise PackageError(f"{source}: no such directory or file")
    text = profiled_manifest(files[MANIFEST].decode("utf-8", "surrogateescape"), keys)
    files[MANIFEST] = text.encode("utf-8", "surrogateescape")
    zip_bytes = _build_zip(files)
    if len(zip_bytes) > max_bytes:
        raise PackageError(
            f"{source}: the app's zip is {len(zip_bytes):,} bytes, over the limit of "
            f"{max_bytes:,}{budget.hint}"
        )
    manifest = parse_manifest(files[MANIFEST].decode("utf-8", "replace"))
    name = source.name if source.is_dir() else source.stem
    return PackagedApp(
        zip_bytes=zip_bytes,
        manifest=manifest,
        files=len(files),
        title=manifest.get("title") or name,
        version=_version(manifest),
        skipped=tuple(sorted(skipped)),
    )


def _version(manifest: dict[str, str]) -> str:
    parts = []
    for key in ("major_version", "minor_version", "build_version"):
        if not manifest.get(key):
            break
        parts.append(manifest[key])
    return ".".join(parts)


def _build_zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = _UNIX
            info.external_attr = _FILE_ATTR
            archive.writestr(info, files[name], compresslevel=6)
    return buffer.getvalue()


# -- a directory -------------------------------------------------------------------------------


def _manifest_hint(root: Path) -> str:
    try:
        inner = sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file())
    except OSError:
        return ""
    return f" (there is one in {root / inner[0]}: give that directory)" if len(inner) == 1 else ""


def _read_directory(root: Path, budget: _Budget, skipped: list[str]) -> dict[str, bytes]:
    manifest = root / MANIFEST
    if not manifest.exists():
        raise PackageError(f"no manifest in {root}{_manifest_hint(root)}")
    if not manifest.is_file():
        raise PackageError(f"{manifest} is not a file")
    rules = IgnoreRules([])
    ignore_file = root / IGNORE_FILE
    if ignore_file.is_file():
        text = _read_file(ignore_file, MAX_IGNORE_BYTES, f"over {MAX_IGNORE_BYTES:,} bytes")
        rules = IgnoreRules.parse(text.decode("utf-8", "replace"))
    real_root = root.resolve()
    files: dict[str, bytes] = {}
    pending: list[tuple[Path, str, frozenset[Path]]] = [(root, "", frozenset({real_root}))]
    while pending:
        folder, prefix, holders = pending.pop()
        for entry in _scan(folder):
            rel = prefix + entry.name
            path = Path(entry.path)
            if entry.name in VCS_NAMES or rel == IGNORE_FILE:
                skipped.append(rel)
                continue
            is_dir = _is_dir(entry)
            if rel != MANIFEST and rules.ignored(rel, is_dir):
                skipped.append(rel)
                continue
            real = _check_link(path, rel, real_root, root) if entry.is_symlink() else path
            if is_dir:
                real = real.resolve()
                if real in holders:
                    raise PackageError(f"{path} is a symbolic link to a folder that holds it")
                pending.append((path, rel + "/", holders | {real}))
            elif _is_file(entry):
                _check_name(rel, path)
                files[rel] = _read_file(path, budget.take(_size(entry), str(path)))
            else:
                skipped.append(rel)
    if MANIFEST not in files:  # a case-insensitive file system found "Manifest"
        raise PackageError(f"no manifest in {root} (the name is lowercase: manifest)")
    return files


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError as error:
        raise PackageError(f"cannot read {folder}: {error.strerror or error}") from None


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _size(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat().st_size
    except OSError as error:
        raise PackageError(f"cannot read {entry.path}: {error.strerror or error}") from None


def _check_link(path: Path, rel: str, real_root: Path, root: Path) -> Path:
    """The real path a link inside the app leads to; an error for any other link."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise PackageError(f"{path} is a symbolic link that leads nowhere") from None
    if not target.is_relative_to(real_root):
        raise PackageError(
            f"{path} is a symbolic link to {target}, outside {root}: rokuprof packages only "
            "what is inside the app's directory"
            + ("" if rel == MANIFEST else f" (copy it in, or name {rel} in {IGNORE_FILE})")
        )
    return target


def _check_name(rel: str, path: Path) -> None:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        raise PackageError(f"{path!r}: the file's name is not valid UTF-8") from None


def _read_file(path: Path, limit: int, too_big: str = "grown past the input limit") -> bytes:
    """The file's bytes; a :class:`PackageError` when it cannot be read or holds more than
    ``limit`` (a file read after its size was counted has grown)."""
    return read_capped(
        path,
        limit,
        unreadable=lambda why: PackageError(f"cannot read {path}: {why}"),
        too_big=lambda: PackageError(f"{path} is {too_big}"),
    )


# -- a zip -------------------------------------------------------------------------------------


def _entry_problem(name: str) -> str | None:
    if not name or name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "an absolute path"
    if "\\" in name:
        return "a backslash in its name"
    if "\0" in name:
        return "a NUL in its name"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return "'..' in its path"
    if "" in parts or "." in parts:
        return "an empty or '.' part in its path"
    return None


def _check_directory_size(path: Path, budget: _Budget) -> None:
    """Refuse a zip whose central directory would list more entries than the limit, before
    zipfile reads it all into memory."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size > budget.max_bytes:
                raise PackageError(
                    f"{path} is {size:,} bytes, over the input limit of {budget.max_bytes:,}"
                )
            handle.seek(max(0, size - _EOCD_SEARCH))
            tail = handle.read()
    except OSError as error:
        raise PackageError(f"cannot read {path}: {error.strerror or error}") from None
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        return  # not a zip: zipfile says so
    _, _, _, _, entries, directory_size, _, _ = _EOCD.unpack_from(tail, at)
    if entries > budget.max_files or directory_size > budget.max_files * _CD_BYTES_PER_FILE:
        raise PackageError(f"{path}: more than {budget.max_files:,} entries to package")


def open_app_zip(
    path: Path,
    *,
    max_input_bytes: int = INPUT_FACTOR * DEFAULT_MAX_BYTES,
    max_files: int = DEFAULT_MAX_FILES,
) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """An app's zip opened within the packaging limits, and its file entries by name, every one
    checked (no ``..``, absolute path, link, encryption, duplicate; the declared total within
    ``max_input_bytes``) before anything is inflated. The caller closes the archive. Raises
    :class:`PackageError`."""
    return _open_zip(path, _Budget(max_input_bytes, max_files))


def _open_zip(path: Path, budget: _Budget) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    _check_directory_size(path, budget)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise PackageError(f"{path} is not a directory or a readable .zip: {error}") from None
    try:
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():
            if info.is_dir():
                continue
            name = info.filename
            problem = _entry_problem(name)
            if problem is not None:
                raise PackageError(f"{path}: the entry {name!r} has {problem}: refused")
            if name in entries:
                raise PackageError(f"{path}: the entry {name!r} appears twice")
            entries[name] = info
            if stat.S_ISLNK(info.external_attr >> 16):
                raise PackageError(f"{path}: the entry {name!r} is a symbolic link: refused")
            if info.flag_bits & 0x1:
                raise PackageError(f"{path}: the entry {name!r} is encrypted")
            budget.take(info.file_size, f"{path} ({name})")
    except BaseException:
        archive.close()
        raise
    return archive, entries


def _read_zip(path: Path, budget: _Budget) -> dict[str, bytes]:
    archive, entries = _open_zip(path, budget)
    with archive:
        if MANIFEST not in entries:
            raise PackageError(_zip_manifest_missing(path, set(entries)))
        return {name: _inflate(archive, info, path) for name, info in entries.items()}


def _zip_manifest_missing(path: Path, names: set[str]) -> str:
    folders = sorted(
        name.split("/")[0]
        for name in names
        if name.count("/") == 1 and name.endswith("/" + MANIFEST) and name[0] != "_"
    )
    if len(folders) == 1:
        return (
            f"no manifest at the root of {path}: it is in the folder {folders[0]}/ "
            "(zip that folder's contents, not the folder itself, or give the folder)"
        )
    return f"no manifest at the root of {path}"


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    """One entry's bytes, no more than it declared (zipfile stops there and checks the CRC)."""
    try:
        with archive.open(info) as handle:
            data = handle.read(info.file_size + 1)
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, OSError) as error:
        raise PackageError(f"{path}: cannot read the entry {info.filename!r}: {error}") from None
    if len(data) != info.file_size:
        raise PackageError(f"{path}: the entry {info.filename!r} is not the size it declares")
    return data
