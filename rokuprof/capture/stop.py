"""Why a capture stops, and the one object that carries a stop request to every part of it.

The cause is recorded as what it was (``session.json``'s ``end_reason``, the summary, the log):
Ctrl-C, SIGTERM, ``--duration``, ``--runs``, the output's reader gone (``watch | head``), or a
caller's own request.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum


class StopCause(StrEnum):
    """What stopped a capture (its value is how a person names it)."""

    CTRL_C = "Ctrl-C"
    SIGTERM = "SIGTERM"
    DURATION = "--duration"
    RUNS = "--runs"
    KEY_Q = "the q key"  # in watch's live view
    OUTPUT_CLOSED = "output closed"  # watch's standard output: its reader went away (| head)
    REQUESTED = "a stop request"  # a caller's own stop (the API, a daemon reload, tests)

    def describe(self) -> str:
        """``stopped by Ctrl-C``, ``--duration reached``, ..."""
        if self in (StopCause.DURATION, StopCause.RUNS):
            return f"{self.value} reached"
        if self is StopCause.OUTPUT_CLOSED:
            return self.value
        return f"stopped by {self.value}"


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
