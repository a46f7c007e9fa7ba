"""The capture's side of chunk building: a small interface the run loop talks to.

Per app run the capture creates one :class:`ChunkSink` (once the stream header is known), gives
it the profile tables' wall-time delta (:meth:`~rokuprof.profile.protocol.TablesView.take_walls`:
no object per call path) with its arrival time every second or so, asks it for ready chunks
every chunk interval, and finishes it at the end of the run (the remaining chunks plus a
JSON-ready report of what could not form a valid chunk). Chunks travel as their JSON bytes.
:class:`SentrySink` adapts :class:`rokuprof.sentry.ChunkBuilder`; :func:`sentry_sink_factory`
makes one per run, all by one :class:`~rokuprof.sentry.ChunkSettings` (the rules' one owner).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from rokuprof.bsprof.model import Header
from rokuprof.path_model import WallDelta
from rokuprof.profile.tables import ProfileTables
from rokuprof.sentry import BuildReport, ChunkBuilder, ChunkSettings
from rokuprof.sentry.side_measurements import Measure


@dataclass(frozen=True)
class RunContext:
    """What a chunk sink may know about the run it serves."""

    profiler_id: str
    tables: ProfileTables
    header: Header
    start: float  # Unix seconds of the stream's connect
    device: dict[str, object] = field(default_factory=dict)


class ChunkSink(Protocol):
    def add(self, delta: WallDelta, arrival: float) -> None:
        """Take what changed since the previous delta; ``arrival`` = Unix seconds."""

    def ready(self, now: float) -> Iterable[bytes]:
        """Chunks (JSON bytes) complete by ``now`` (Unix seconds), oldest first; a lazy
        iterable may build each as it is reached (what is not reached waits for the next
        call)."""

    def finish(self, end: float) -> tuple[list[bytes], dict[str, object]]:
        """End of run: the remaining chunks and a JSON-ready report of what was dropped."""

    # Optional: ``measure(m: Measure) -> None`` takes a vitals or mark value for the next chunk
    # (:mod:`rokuprof.sentry.side_measurements`); a sink without it takes no measurements.


ChunkSinkFactory = Callable[[RunContext], ChunkSink]
DEFAULT_SETTINGS = ChunkSettings()


def report_json(report: BuildReport) -> dict[str, object]:
    """The parts of a build report worth keeping in ``session.json``."""
    return {
        "chunks": report.chunks,
        "samples": report.samples,
        "busy_samples": report.busy_samples,
        "threads": dict(report.threads),
        "covered_seconds": round(report.covered_seconds, 3),
        "leftover_samples": report.leftover_samples,
        "after_end_seconds": round(report.after_end_seconds, 3),
        "rejected_chunks": len(report.rejected),
        "chunk_bytes": report.chunk_bytes,
        "largest_chunk": report.largest_chunk,
        "capped_samples": report.capped_samples,
        "notes": report.describe(),
    }


class SentrySink:
    """A :class:`ChunkSink` over :class:`rokuprof.sentry.ChunkBuilder`, making chunks by
    ``settings`` (the one owner of the window, environment and release)."""

    def __init__(self, context: RunContext, settings: ChunkSettings = DEFAULT_SETTINGS) -> None:
        self.settings = settings
        self.builder = ChunkBuilder(
            context.tables,
            context.start,
            header=context.header,
            settings=settings,
            profiler_id=context.profiler_id,
        )

    def add(self, delta: WallDelta, arrival: float) -> None:
        add_walls(self.builder, delta, arrival)

    def measure(self, measure: Measure) -> None:
        self.builder.add_measure(measure)

    def ready(self, now: float) -> Iterator[bytes]:
        return (chunk.data for chunk in self.builder.ready(now))

    def finish(self, end: float) -> tuple[list[bytes], dict[str, object]]:
        # Live, the end is when the last data arrived: busy time that came too late to fit
        # before it goes right after it (reported), as late data is carried mid-run.
        flush = self.builder.finish(end, after_end=True)
        return [chunk.data for chunk in flush.chunks], report_json(flush.report)


def add_walls(builder: ChunkBuilder, delta: WallDelta, arrival: float) -> None:
    """``builder.add`` of the tables' ``take_delta(lines=False)``, from their ``take_walls()``
    (the same walls in the same order: the same chunks, without a row object per path)."""
    builder.add_wall(delta.walls, arrival, live_bytes=delta.live_bytes, memory=bool(delta.memory))


def sentry_sink_factory(settings: ChunkSettings = DEFAULT_SETTINGS) -> ChunkSinkFactory:
    """A factory making one :class:`SentrySink` per run, by ``settings``."""

    def make(context: RunContext) -> ChunkSink:
        return SentrySink(context, settings)

    return make
