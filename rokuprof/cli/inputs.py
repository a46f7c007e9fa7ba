"""Opening a capture given on the command line: a ``.bsprof`` file, ``-`` (standard input) or a
session directory (its ``capture.bsprof``), checked by its magic before anything is decoded.
Where a command also reads Perfetto app traces (``allow_trace``), a file that starts as one
(a ``TracePacket`` field, byte ``0x0A``) opens as a trace (``kind == "trace"``), and so does a
session directory's ``trace.perfetto-trace`` when ``trace=True`` asks for it.

::

    try:
        source = open_capture(arg)
    except CaptureInputError as exc:
        ...                                  # one line: exc; exit 2, nothing written
    source.read(feed, console)               # the bytes, with progress on a terminal
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from rich.console import Console

from rokuprof.bsprof.model import MAGIC
from rokuprof.cli.progress import READ_SIZE, SHOW_FROM, progress_bar
from rokuprof.store.layout import (
    ARCHIVE_FILE,
    ARCHIVE_SUFFIX,
    EXPORT_STEM,
    TRACE_FILE,
    SessionDir,
)
from rokuprof.views.text import printable

CAPTURE_FILE = ARCHIVE_FILE  # the raw stream's name inside a session directory
STDIN = "-"
#: How a Perfetto trace file starts: field 1 (``TracePacket``), length-delimited.
TRACE_FIRST_BYTE = 0x0A


class CaptureInputError(Exception):
    """The input cannot be read as a capture (missing, unreadable, not a .bsprof)."""


@dataclass
class CaptureSource:
    """An opened capture input; :meth:`read` feeds its bytes, the magic included."""

    label: str  # how messages name it
    stem: str  # a name for files made from it
    directory: Path | None  # where it lives (None for standard input)
    size: int | None  # bytes, when known
    stream: BinaryIO = field(repr=False)
    head: bytes = b""  # bytes already read for the magic check
    session: Path | None = None  # the session directory, when the input was one
    kind: str = "bsprof"  # or "trace": a Perfetto app trace (only where asked for)

    def read(self, feed: Callable[[bytes], object], console: Console, what: str = "reading") -> int:
        """Feed every byte to ``feed`` (a progress bar on a terminal for large files); return the
        number of bytes read. Closes the stream."""
        from rich.progress import DownloadColumn, TransferSpeedColumn  # a bar's, not the help's

        show = console.is_terminal and (self.size or 0) >= SHOW_FROM
        done = 0
        try:
            with progress_bar(
                console, show, DownloadColumn(), TransferSpeedColumn()
            ) as progress:  # the label's control characters made visible
                task = progress.add_task(f"{what} {printable(self.label)}", total=self.size)
                data = self.head
                while data:
                    feed(data)
                    done += len(data)
                    progress.update(task, completed=done)
                    data = _read_some(self.stream)
        finally:
            self.close()
        return done

    def close(self) -> None:
        """Close the input (standard input stays open)."""
        if self.stream is not sys.stdin.buffer:
            self.stream.close()


def _read_some(stream: BinaryIO) -> bytes:
    """Up to READ_SIZE bytes, returning what a pipe has so far rather than waiting for more
    (``curl -N ... | rokuprof inspect -`` is decoded as it arrives)."""
    read1 = getattr(stream, "read1", None)
    return read1(READ_SIZE) if read1 is not None else stream.read(READ_SIZE)


def _check_magic(head: bytes, label: str, allow_trace: bool = False) -> str:
    """The kind of input ``head`` starts: ``"bsprof"``, or ``"trace"`` where allowed."""
    if allow_trace and head[:1] == bytes([TRACE_FIRST_BYTE]):
        return "trace"
    # A capture cut short inside the magic is still a capture (an incomplete one).
    if not head:
        raise CaptureInputError(f"{label} is not a .bsprof file (it is empty)")
    if head != MAGIC[: len(head)]:
        raise CaptureInputError(
            f"{label} is not a .bsprof file (it starts with {_escaped(head)},"
            f" a .bsprof file with {_escaped(MAGIC)}"
            + (", a Perfetto trace with '\\x0a'" if allow_trace else "")
            + ")"
        )
    return "bsprof"


def _escaped(data: bytes) -> str:
    """``data`` as printable ASCII in quotes, every other byte as ``\\xNN``."""
    plain = set(range(0x20, 0x7F)) - {ord("\\"), ord("'")}
    return "'" + "".join(chr(b) if b in plain else f"\\x{b:02x}" for b in data) + "'"


def open_capture(
    arg: str, stdin: BinaryIO | None = None, *, allow_trace: bool = False, trace: bool = False
) -> CaptureSource:
    """Resolve and open ``arg`` (see the module docstring); raises :class:`CaptureInputError`
    with a one-line reason."""
    if arg == STDIN:
        stream = stdin if stdin is not None else sys.stdin.buffer
        head = _read_head(stream, "standard input")
        kind = _check_magic(head, "standard input", allow_trace)
        return CaptureSource("standard input", "profile", None, None, stream, head, kind=kind)
    path = Path(arg)
    label = str(path)
    arg_is_session = path.is_dir()
    if arg_is_session:
        capture = SessionDir(path).trace if trace else SessionDir(path).archive
        if trace and not capture.is_file():
            raise CaptureInputError(f"{path} has no {TRACE_FILE} (no app trace was captured)")
        if not capture.is_file():
            raise CaptureInputError(
                f"{path} is a directory without a {CAPTURE_FILE} (not a session)"
            )
        stem, directory, label = EXPORT_STEM, path, str(capture)
        path = capture
    else:
        suffix = ARCHIVE_SUFFIX
        stem = path.name.removesuffix(suffix) if path.name.endswith(suffix) else path.stem
        directory = path.parent
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise CaptureInputError(f"cannot read {label}: not a file")
        stream = path.open("rb")
    except OSError as exc:
        raise CaptureInputError(f"cannot read {label}: {exc.strerror or exc}") from None
    try:
        head = _read_head(stream, label)
        kind = _check_magic(head, label, allow_trace or trace)
    except BaseException:
        stream.close()
        raise
    session = directory if arg_is_session else None
    return CaptureSource(label, stem or "profile", directory, size, stream, head, session, kind)


def _read_head(stream: BinaryIO, label: str) -> bytes:
    head = b""
    try:
        while len(head) < len(MAGIC):
            more = stream.read(len(MAGIC) - len(head))
            if not more:
                break
            head += more
    except OSError as exc:
        raise CaptureInputError(f"cannot read {label}: {exc.strerror or exc}") from None
    return head
