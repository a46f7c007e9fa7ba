"""The 101 Hz timeline every timeline output renders from (pure: no I/O, no clock, no JSON).

* :mod:`~rokuprof.timeline.lane`: one thread's lane, where the chunk builder places samples;
* :mod:`~rokuprof.timeline.model`: :class:`Timeline`, the samples per thread as runs of equal
  stacks on a grid of ``1/hz`` slots;
* :mod:`~rokuprof.timeline.build`: :class:`TimelineBuilder`, a timeline from the placed windows
  (``(thread, runs)`` of call paths, as :class:`~rokuprof.sentry.chunk.ChunkBuilder` cuts them
  from the tables' deltas), stacks numbered in the order a reader of the chunks would number
  them, so every output shows what the Sentry chunks show.

The timeline has no budget of its own beyond the placement rules: the Sentry byte caps belong to
the chunks sent, not to an offline output, so a report of a 100-hour run covers 100 hours.
"""

from __future__ import annotations

from rokuprof.timeline.build import TimelineBuilder
from rokuprof.timeline.model import IDLE, Timeline

__all__ = ["IDLE", "Timeline", "TimelineBuilder"]
