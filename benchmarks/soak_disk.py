"""The soak's disk: a tmpfs mounted for the daemon's ``out`` (unmounted whatever happens), a
filler file that takes its free space and gives it back, and a scanner that follows what the
daemon wrote there while retention deletes it.

The scanner (:class:`OutScanner`) is called every half second (from a worker thread). It keeps,
per session ever seen, the largest archive size it saw (an archive only grows, and retention
deletes a session only once it has finished, so that is what was archived), the record's status
and ``profiler.start_ms`` (the key to the device's run), and the chunk id of every chunk file it
saw (each file read once).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1 << 20


# -- the tmpfs ---------------------------------------------------------------------------------


def mount_tmpfs(where: Path, size_mib: int) -> None:
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m,mode=0700", "tmpfs", str(where)],
        check=True,
    )


def unmount(where: Path) -> str:
    """Unmount ``where``; lazily if something still holds it. Returns what was done."""
    if not os.path.ismount(where):
        return "not mounted"
    if subprocess.run(["umount", str(where)], capture_output=True).returncode == 0:
        return "unmounted"
    subprocess.run(["umount", "-l", str(where)], capture_output=True)
    return "unmounted lazily (busy)"


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(path: Path) -> int:
    """Write ``path`` until the file system says it is full; returns its size. Large writes
    first, then a page at a time, so what is left is less than a page."""
    written = 0
    block = bytes(MIB)
    with path.open("wb", buffering=0) as f:
        for size in (MIB, 4096):
            piece = block[:size]
            while True:
                try:
                    n = f.write(piece)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
                written += n or 0
                if n != len(piece):
                    break
    return written


def usage(out: Path) -> tuple[int, int, int]:
    """(files, bytes in file sizes, bytes in allocated blocks) under ``out``."""
    files = size = blocks = 0
    for root, _dirs, names in os.walk(out):
        for name in names:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(root, name))
                files += 1
                size += st.st_size
                blocks += st.st_blocks * 512
    return files, size, blocks


# -- what the daemon wrote ---------------------------------------------------------------------


@dataclass
class SessionSeen:
    device: str
    name: str
    serial: str = ""
    start_ms: int | None = None
    status: str = ""
    why: str = ""  # its end reason and errors, short
    size: int = 0  # largest archive size seen
    grew_at: float = 0.0  # time.monotonic() of the scan that last saw it grow
    final: bool = False  # status no longer "streaming" and its size read after that
    present: bool = True  # still on disk at the last scan
    chunk_files: dict[str, str] = field(default_factory=dict)  # file name -> chunk_id


@dataclass
class OutScanner:
    out: Path
    sessions: dict[tuple[str, str], SessionSeen] = field(default_factory=dict)
    chunks: dict[str, tuple[str, str]] = field(default_factory=dict)  # chunk_id -> session
    on_disk: set[str] = field(default_factory=set)  # chunk ids in chunks/ at the last scan
    delivered_markers: int = 0  # at the last scan

    def archived(self) -> int:
        return sum(s.size for s in self.sessions.values())

    def scan(self) -> None:
        on_disk: set[str] = set()
        markers = 0
        for s in self.sessions.values():
            s.present = False
        for device in _dirs(self.out):
            for path in _dirs(device):
                key = (device.name, path.name)
                seen = self.sessions.get(key)
                if seen is None:
                    seen = self.sessions[key] = SessionSeen(device.name, path.name)
                seen.present = True
                if not seen.final:
                    self._record(seen, path)
                on_disk |= self._chunks(seen, path)
                with contextlib.suppress(OSError):
                    markers += len(os.listdir(path / "delivered"))
        self.on_disk = on_disk
        self.delivered_markers = markers

    def _record(self, seen: SessionSeen, path: Path) -> None:
        try:
            record = json.loads((path / "session.json").read_bytes())
        except (OSError, ValueError):
            record = None
        with contextlib.suppress(OSError):
            size = (path / "capture.bsprof").stat().st_size
            if size > seen.size:
                seen.size, seen.grew_at = size, time.monotonic()
        if not isinstance(record, dict):
            return
        seen.status = str(record.get("status", ""))
        errors = record.get("errors") if isinstance(record.get("errors"), list) else []
        messages = [str(e.get("message", "")) for e in errors if isinstance(e, dict)]
        seen.why = "; ".join([str(record.get("end_reason") or ""), *messages])[:300]
        seen.serial = str((record.get("device") or {}).get("serial", ""))
        start = (record.get("profiler") or {}).get("start_ms")
        if isinstance(start, int):
            seen.start_ms = start
        # final once a status other than streaming was read before the size above
        seen.final = seen.status not in ("", "streaming")

    def _chunks(self, seen: SessionSeen, path: Path) -> set[str]:
        """Chunk ids in the session's ``chunks/`` now (each file read once)."""
        ids = set()
        try:
            names = os.listdir(path / "chunks")
        except OSError:
            return ids
        for name in names:
            if not name.endswith(".json") or not name[:-5].isdigit():
                continue
            chunk_id = seen.chunk_files.get(name)
            if chunk_id is None:
                try:
                    chunk_id = str(json.loads((path / "chunks" / name).read_bytes())["chunk_id"])
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # deleted meanwhile, or read again next time
                seen.chunk_files[name] = chunk_id
                self.chunks[chunk_id] = (seen.device, seen.name)
            ids.add(chunk_id)
        return ids


def _dirs(path: Path) -> list[Path]:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return []
    return sorted(
        Path(e.path)
        for e in entries
        if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
    )
