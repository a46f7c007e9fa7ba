"""A run's app trace on disk while it arrives, then moved into its session (synchronous: call
through :func:`asyncio.to_thread`).

The trace of a run may begin before its session directory exists (the device traces the launch
before the ``.bsprof`` stream connects), so its bytes go to a hidden spool file in the output
directory, ``OUT/.trace-<device>.tmp`` (a ``*.tmp``: a crash leaves nothing a walk takes for a
session file, and the next start truncates it). At the run's end :meth:`TraceSpool.finish`
makes it durable and :meth:`TraceSpool.move_into` renames it to the session's
``trace.perfetto-trace``. Memory holds only the pieces not yet written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from rokuprof.store.files import TMP_SUFFIX, fsync_dir, make_dirs, open_new, write_atomic_stream
from rokuprof.store.layout import SessionDir, safe_name


def spool_path(out: Path | str, device: str) -> Path:
    """Where the trace of ``device`` (its host and port, made file-name safe) is spooled."""
    return Path(out) / f".trace-{safe_name(device)}{TMP_SUFFIX}"


class TraceSpool:
    """One device's spool file: append the run's pieces, finish, move into the session."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bytes = 0  # written since the run's spool was opened
        self._file: BinaryIO | None = None

    def append(self, pieces: Sequence[bytes]) -> None:
        if self._file is None:
            make_dirs(self.path.parent)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            self._file = os.fdopen(open_new(self.path, flags), "wb")
            self.bytes = 0
        for piece in pieces:
            self._file.write(piece)
            self.bytes += len(piece)

    def finish(self, pieces: Sequence[bytes]) -> int:
        """Write the last pieces, make the file durable and close it; the run's byte count
        (0: nothing came, and no file is left)."""
        if pieces:
            self.append(pieces)
        file, self._file = self._file, None
        if file is None:
            return 0
        try:
            file.flush()
            os.fsync(file.fileno())
        finally:
            file.close()
        return self.bytes

    def move_into(self, session: SessionDir) -> Path:
        """The finished spool as the session's trace file (a rename; a copy written
        atomically where the session lies on another file system)."""
        target = session.trace
        try:
            os.replace(self.path, target)
        except OSError:
            with self.path.open("rb") as source:
                pieces = iter(lambda: source.read(1 << 20), b"")
                write_atomic_stream(target, pieces, within=session.root)
            self.path.unlink()
        else:
            fsync_dir(target.parent)
        return target

    def discard(self) -> None:
        """Close and remove the spool (the run's trace is not kept)."""
        file, self._file = self._file, None
        if file is not None:
            file.close()
        self.path.unlink(missing_ok=True)
