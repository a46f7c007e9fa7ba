"""Durable file writes: a file appears whole under its final name, or not at all."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TMP_SUFFIX = ".tmp"


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path | str, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` via ``path.tmp``: write, flush, fsync, rename, fsync the dir.

    A crash at any moment leaves either the old file (or none) or the new one, never a part;
    at worst a stale ``*.tmp`` that :func:`sweep_tmp` removes.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + TMP_SUFFIX)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "wb") as f:
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
