"""Single keys from a terminal for the live view: cbreak mode while it runs, always restored."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import sys
from collections.abc import Callable, Iterator


def keys_of(typed: str) -> Iterator[str]:
    """The single keys in what a terminal sent, without escape sequences (arrows, function
    keys: ``ESC [ … final`` or ``ESC O final``) and lone escapes."""
    i, n = 0, len(typed)
    while i < n:
        char = typed[i]
        i += 1
        if char != "\x1b":
            yield char
        elif i < n and typed[i] in "[O":
            i += 1
            while i < n and not "\x40" <= typed[i] <= "\x7e":
                i += 1
            i += 1  # the final byte


class Keyboard:
    """Single keys from a terminal in cbreak mode, each passed to ``on_key``; the terminal's
    mode is restored by :meth:`close` (and at interpreter exit, should that be skipped)."""

    def __init__(self, fd: int, on_key: Callable[[str], None]) -> None:
        self.fd = fd
        self.on_key = on_key
        self._saved: list | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        import termios
        import tty

        self._saved = termios.tcgetattr(self.fd)
        atexit.register(self.close)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)
            loop.add_reader(self.fd, self._ready)
        except BaseException:
            self.close()
            raise
        self._loop = loop

    def _ready(self) -> None:
        try:
            data = os.read(self.fd, 64)
        except OSError:
            data = b""
        if not data:  # end of input: no more keys
            self._stop_reading()
            return
        for key in keys_of(data.decode("latin-1")):
            self.on_key(key)

    def _stop_reading(self) -> None:
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self.fd)
            self._loop = None

    def close(self) -> None:
        self._stop_reading()
        if self._saved is None:
            return
        import termios

        with contextlib.suppress(Exception):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        self._saved = None
        atexit.unregister(self.close)


def keyboard_for(keys: bool | int | None, on_key: Callable[[str], None]) -> Keyboard | None:
    """A keyboard on standard input when it is a terminal (``keys`` ``None`` or ``True``), on
    the terminal ``keys`` (a file descriptor), or none (``False``, or not a terminal)."""
    if keys is False:
        return None
    if keys is None or keys is True:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            return None
    else:
        fd = keys
    return Keyboard(fd, on_key) if os.isatty(fd) else None
