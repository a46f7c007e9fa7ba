"""An app trace's frames as a V2 chunk's measurements, the way Sentry's mobile SDKs report
them (pure: no I/O):

* ``slow_frame_renders`` (unit ``nanosecond``): each missed frame (Roku's rule: over the 16.7 ms
  budget with the render thread busy for more than half the interval; see
  :func:`rokuprof.trace.analysis.frame_cadence`) up to :data:`FROZEN_NS`, its value the
  frame's duration, its timestamp the frame's start;
* ``frozen_frame_renders`` (unit ``nanosecond``): the same, for frames over :data:`FROZEN_NS`;
* ``screen_frame_rates`` (unit ``hz``): the display's rate (a Roku UI renders at 60 Hz), once,
  at the first frame.

Timestamps are Unix seconds: the trace's clock snapshot puts them on wall time; without one the
trace's first event is taken as the run's start (``start``), as the report aligns it.
"""

from __future__ import annotations

from collections.abc import Iterable

from rokuprof.sentry.side_measurements import Measure
from rokuprof.trace.analysis import MissedFrame, frame_cadence
from rokuprof.trace.live_frames import LiveFrames
from rokuprof.trace.model import Trace
from rokuprof.trace.reader import TraceReader

SLOW_FRAMES = "slow_frame_renders"
FROZEN_FRAMES = "frozen_frame_renders"
FRAME_RATES = "screen_frame_rates"
#: A frame longer than this is frozen, not slow (Sentry's mobile SDKs' line).
FROZEN_NS = 700_000_000
REFRESH_HZ = 60


def frame_measures(trace: Trace, start: float | None = None) -> list[Measure]:
    """The trace's frame measurements in time order (none without a way to place them)."""
    offset = trace.wall_offset_ns()
    if offset is None:
        first = trace.first_ts
        if start is None or first is None:
            return []
        offset = round(start * 1e9) - first
    swaps = [s.start for s in trace.slices if s.name == "swapBuffers" and not s.instant]
    _, missed = frame_cadence(trace)
    return measures_of(min(swaps, default=None), missed, offset)


def measures_of(
    first_swap: int | None, missed: Iterable[MissedFrame], offset: int
) -> list[Measure]:
    """The measurements of the frames missed (and of the rate, at ``first_swap`` when given),
    trace times moved to Unix time by ``offset`` ns, in time order."""
    out = []
    if first_swap is not None:
        out.append(Measure(FRAME_RATES, "hz", REFRESH_HZ, (first_swap + offset) / 1e9))
    for frame in missed:
        duration = frame.end - frame.start
        name = FROZEN_FRAMES if duration > FROZEN_NS else SLOW_FRAMES
        out.append(Measure(name, "nanosecond", duration, (frame.start + offset) / 1e9))
    return sorted(out, key=lambda m: m.timestamp)


class LiveFrameMeasures:
    """A run's trace read as it arrives (slices not kept: :class:`LiveFrames`), its frames as
    measurements for the run's next chunks. Frames found before the trace's clock snapshot wait
    for it (at most :data:`MAX_WAITING`; past that, the oldest are dropped and counted)."""

    MAX_WAITING = 10_000

    def __init__(self) -> None:
        self.frames = LiveFrames()
        self.reader = TraceReader(keep_slices=False, on_slice_end=self.frames.slice_ended)
        self.dropped = 0
        self._rate_said = False
        self._waiting: list[MissedFrame] = []

    def feed(self, pieces: Iterable[bytes]) -> list[Measure]:
        for piece in pieces:
            self.reader.feed(piece)
        self._waiting += self.frames.take()
        if len(self._waiting) > self.MAX_WAITING:
            self.dropped += len(self._waiting) - self.MAX_WAITING
            del self._waiting[: -self.MAX_WAITING]
        offset = self.reader.trace.wall_offset_ns()
        if offset is None or (not self._waiting and self._rate_said):
            return []
        first = None if self._rate_said else self.frames.first_swap
        self._rate_said = self._rate_said or first is not None
        missed, self._waiting = self._waiting, []
        return measures_of(first, missed, offset)
