"""A small real disk to fill up: a tmpfs of 1 MiB or the size asked (root only; the test is
skipped otherwise)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_small_disk(path: Path, size: str = "1m") -> Iterator[Path]:
    """A tmpfs of ``size`` (mount's spelling: ``1m``, ``16m``) mounted on ``path`` (made here),
    unmounted afterwards."""
    path.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill up needs root")
    mount = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)]
    result = subprocess.run(mount, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path) -> Path:
    """Take every free block of ``disk`` (4 KiB at a time, until ENOSPC); the filler file."""
    filler = disk / "filler"
    with contextlib.suppress(OSError), filler.open("ab") as f:
        while True:
            f.write(b"\0" * 4096)
            f.flush()
    return filler
