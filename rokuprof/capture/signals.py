"""The stop request of a capture, and the one signal installer of ``rokuprof watch`` and
``rokuprof daemon``.

SIGINT (Ctrl-C) and SIGTERM become a stop request that names its cause
(:class:`~rokuprof.capture.stop.StopCause`); a second Ctrl-C falls back to Python's default
(an immediate exit) for someone who does not want to wait for the runs to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator

from rokuprof.capture.stop import StopCause

CAUSES = {signal.SIGINT: StopCause.CTRL_C, signal.SIGTERM: StopCause.SIGTERM}


@contextlib.contextmanager
def stop_on_signals(request: Callable[[StopCause], object]) -> Iterator[list[int]]:
    """While the block runs, SIGINT and SIGTERM call ``request(cause)``; yields the signals
    installed (none outside the main thread or where the loop cannot take signals)."""
    loop = asyncio.get_running_loop()
    installed: list[int] = []

    def handler(signum: int) -> None:
        if signum == signal.SIGINT and signum in installed:  # the next Ctrl-C is not polite
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)
            installed.remove(signum)
        request(CAUSES[signal.Signals(signum)])

    for signum in CAUSES:
        try:
            loop.add_signal_handler(signum, handler, signum)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
            continue
        installed.append(signum)
    try:
        yield installed
    finally:
        for signum in installed:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)


class StopRequest:
    """A stop trigger that remembers its first cause (later requests do not overwrite it)."""

    def __init__(self) -> None:
        self.cause: StopCause | None = None
        self._event = asyncio.Event()

    def request(self, cause: StopCause = StopCause.REQUESTED) -> None:
        if self.cause is None:
            self.cause = StopCause(cause)
            self._event.set()

    @property
    def requested(self) -> bool:
        return self.cause is not None

    def is_set(self) -> bool:
        """As :meth:`asyncio.Event.is_set` (code that waits on either works with this)."""
        return self.cause is not None

    async def wait(self) -> StopCause:
        await self._event.wait()
        assert self.cause is not None
        return self.cause
