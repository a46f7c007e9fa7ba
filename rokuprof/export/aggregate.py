"""The outputs that add the tables up need no timeline: pprof, folded stacks, ``diff`` and its
gate read an :class:`AggregateInput`, made straight from the profile tables.

:class:`AggregateInput` has the members of :class:`~rokuprof.export.model.ExportInput` those
outputs read (``run``, ``threads``, ``frames``, ``paths``, ``summary``), built by the same
functions (:func:`~rokuprof.export.model.call_paths`, :func:`~rokuprof.export.model.run_info`,
:func:`~rokuprof.sentry.convert.conversion_summary`), so its call paths, counters and run facts
are those of the ``ExportInput`` of the same bytes; nothing is laid out, no chunk is made. The
run's length without a usable footer is its busiest thread's wall time, as the conversion's
(:meth:`~rokuprof.sentry.convert.OfflineConverter.chunks`). Pure: bytes in, data out.
"""

from __future__ import annotations

from rokuprof.bsprof.model import Limits
from rokuprof.export.model import (
    AggregateInput,
    Frames,
    call_paths,
    run_info,
)
from rokuprof.path_model import root_module
from rokuprof.profile.protocol import TablesView
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.convert import conversion_summary
from rokuprof.sentry.settings import ChunkSettings

#: The export formats made from an :class:`AggregateInput` alone.
AGGREGATE_FORMATS = frozenset({"pprof", "folded"})

#: What the aggregate outputs read: an :class:`AggregateInput`, or an :class:`ExportInput`,
#: which is one with a timeline.
AnyInput = AggregateInput


class AggregateReader:
    """A ``.bsprof`` stream fed in pieces (split anywhere), then :meth:`input`."""

    def __init__(self, settings: ChunkSettings | None = None, limits: Limits | None = None):
        self.settings = settings or ChunkSettings()
        self.reader = ProfileReader(limits)
        self.received = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        self.reader.feed(data)
        self.received += len(data)

    def input(self) -> AggregateInput:
        """The end of the stream: its call paths and run facts (once)."""
        reader = self.reader
        reader.close()
        tables = reader.tables
        summary = conversion_summary(
            reader, self.settings, self.received, lambda units: busiest_thread_wall(tables) / units
        )
        frames = Frames()
        threads: dict[int, str] = {}
        paths = call_paths(tables, frames, threads)
        run = run_info(summary, reader.header, self.settings)
        return AggregateInput(run, threads, frames.items, paths, summary)


def busiest_thread_wall(tables: TablesView) -> int:
    """The largest wall-self time of one thread (the executable module of a path's root), summed
    over its call paths."""
    per_thread: dict[int, int] = {}
    for path, stats in tables.snapshot().items():
        if stats.wall:
            module = root_module(tables, path)
            if module is not None:
                per_thread[module] = per_thread.get(module, 0) + stats.wall
    return max(per_thread.values(), default=0)


def aggregates_from_bytes(data: bytes, settings: ChunkSettings | None = None) -> AggregateInput:
    """A whole ``.bsprof`` file held in memory, ready for the aggregate outputs."""
    reading = AggregateReader(settings)
    reading.feed(data)
    return reading.input()
