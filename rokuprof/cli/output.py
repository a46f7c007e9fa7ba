"""Consoles for command output: on a terminal rich's layout; to a pipe or a file, lines that are
never wrapped, cut or coloured (a script reads every column), and ``--json`` as one document.

A reader that closes the pipe early (``rokuprof inspect run.bsprof | head -1``) is not an
error: every write here then goes quietly to ``/dev/null``, the command finishes and exits with
the status its work gave, as if everything had been read (``rokuprof/exit_status.py``). A
long-running command learns of it through :func:`on_output_closed` (``watch`` ends its run).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import BinaryIO, TextIO

from rich.console import Console

from rokuprof.views.text import json_dumps

#: Width of the layout when the output is not a terminal: wide enough that nothing is cut.
PIPE_WIDTH = 10_000

_closed: set[int] = set()  # file descriptors whose reader went away (now /dev/null)
_listeners: list[Callable[[], None]] = []


def on_output_closed(listener: Callable[[], None]) -> Callable[[], None]:
    """Call ``listener()`` once when standard output's reader goes away; returns an undo."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener) if listener in _listeners else None


def output_closed(fd: int) -> None:
    """The reader of ``fd`` (1 or 2) went away: send what follows to /dev/null, tell listeners.

    Writes after this succeed, at exit too, so nothing prints "Broken pipe" or a traceback.
    """
    if fd in _closed:
        return
    _closed.add(fd)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
    if fd == 1:
        for listener in list(_listeners):
            listener()


def _closed_pipe(error: OSError) -> bool:
    return isinstance(error, BrokenPipeError) or error.errno == 32  # EPIPE


def _write_quietly(stream: TextIO | BinaryIO, data: str | bytes) -> None:
    """Write and flush ``data`` to ``stream``, quietly if its reader has gone."""
    try:
        stream.write(data)  # type: ignore[arg-type]
        stream.flush()
    except OSError as error:
        if not _closed_pipe(error):
            raise
        output_closed(stream.fileno())


def write_text(text: str, stream: TextIO | None = None) -> None:
    """Write and flush ``text`` to standard output (or ``stream``), quietly if it closed."""
    _write_quietly(stream or sys.stdout, text)


def write_bytes(data: bytes, stream: BinaryIO | None = None) -> None:
    """Write and flush ``data`` to standard output's bytes, quietly if it closed."""
    _write_quietly(stream or sys.stdout.buffer, data)


def write_pieces(pieces: Iterable[bytes], stream: BinaryIO | None = None) -> None:
    """:func:`write_bytes` of each piece as it comes; once standard output's reader has gone,
    the rest is not made."""
    for piece in pieces:
        write_bytes(piece, stream)
        if 1 in _closed and stream is None:
            return


class _Console(Console):
    """A console that treats a closed pipe as the end of its reader's interest, not an error."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        output_closed(2 if self.stderr else 1)


def _console(stderr: bool) -> Console:
    console = _Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        console = _Console(
            stderr=stderr, highlight=False, width=PIPE_WIDTH, no_color=True, soft_wrap=True
        )
    return console


def stdout_console() -> Console:
    """A console on standard output (unwrapped and uncoloured when it is not a terminal)."""
    return _console(stderr=False)


def stderr_console() -> Console:
    """A console on standard error (unwrapped and uncoloured when it is not a terminal)."""
    return _console(stderr=True)


def print_json(data: object) -> None:
    """``--json`` output: ``data`` as indented JSON on standard output (terminal-safe strings)."""
    write_text(json_dumps(data, indent=2) + "\n")
