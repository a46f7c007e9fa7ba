"""A session's Perfetto export: its capture's tracks after its app trace (the one file read).

``rokuprof export SESSION -f perfetto`` gives :func:`perfetto_with_session` the capture (laid
out) and the session directory; the session's ``trace.perfetto-trace``, when it has one, is
opened here and read in blocks as the file is written, so that neither is held whole. Not
imported by the package's ``__init__``: the exporters stay free of file reads.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from rokuprof.export import Content
from rokuprof.export.model import ExportInput
from rokuprof.export.perfetto import pieces
from rokuprof.store.layout import TRACE_FILE, SessionDir

READ_SIZE = 1 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open_trace(path: Path) -> BinaryIO | None:
    """The trace file opened for reading (never through a symbolic link, never a FIFO), or
    ``None`` when there is none; ``OSError`` when it is there but cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{TRACE_FILE} is not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _blocks(stream: BinaryIO) -> Iterator[bytes]:
    with stream:
        while block := stream.read(READ_SIZE):
            yield block


def perfetto_with_session(
    inp: ExportInput, session_dir: Path | None
) -> tuple[dict[str, Content], list[str]]:
    """The ``perfetto`` file of a capture, as :func:`~rokuprof.export.export_with_notes` gives
    a format's files: with ``session_dir``, the session's app trace first. The notes (what was
    left out) are filled in as the file is written: read them after writing it."""
    notes: list[str] = []
    stream = None
    if session_dir is not None:
        try:
            stream = _open_trace(SessionDir(session_dir).trace)
        except OSError as exc:
            notes.append(f"{TRACE_FILE} cannot be read ({exc.strerror or exc}): not included")
    device = _blocks(stream) if stream is not None else None
    return {"": pieces(inp, device_trace=device, notes=notes)}, notes
