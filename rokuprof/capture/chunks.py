"""The capture's side of chunk building: a small interface the run loop talks to.

Per app run the capture creates one :class:`ChunkSink` (once the stream header is known), gives
it a profile-tables delta with its arrival time every second or so, asks it for ready chunks
every chunk interval, and finishes it at the end of the run (remaining chunks plus a report of
data that could not form a valid chunk). :func:`sentry_sink` adapts :mod:`rokuprof.sentry`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from rokuprof.bsprof.model import Header
from rokuprof.profile.tables import Delta, ProfileTables

Chunk = dict[str, object]


@dataclass(frozen=True)
class RunContext:
    """What a chunk sink may know about the run it serves."""

    profiler_id: str
    tables: ProfileTables
    header: Header
    start: float  # Unix seconds of the stream's connect
    environment: str | None = None
    release: str | None = None
    device: dict[str, object] = field(default_factory=dict)


class ChunkSink(Protocol):
    def add(self, delta: Delta, arrival: float) -> None:
        """Take what changed since the previous delta; ``arrival`` = Unix seconds."""

    def ready(self, now: float) -> list[Chunk]:
        """Chunks that are complete by ``now`` (Unix seconds), oldest first."""

    def finish(self, end: float) -> tuple[list[Chunk], dict[str, object]]:
        """End of run: the remaining chunks and a JSON-ready report of what was dropped."""


ChunkSinkFactory = Callable[[RunContext], ChunkSink]
