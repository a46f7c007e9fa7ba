"""Why a capture stops (pure: the request that carries a cause to the asyncio parts is
:class:`rokuprof.capture.signals.StopRequest`).

The cause is recorded as what it was (``session.json``'s ``end_reason``, the summary, the log):
Ctrl-C, SIGTERM, ``--duration``, ``--runs``, the output's reader gone (``watch | head``), or a
caller's own request.
"""

from __future__ import annotations

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
