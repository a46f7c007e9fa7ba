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

from rokuprof.sentry.side_measurements import Measure
from rokuprof.trace.analysis import frame_cadence
from rokuprof.trace.model import Trace

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
    if not swaps:
        return []
    out = [Measure(FRAME_RATES, "hz", REFRESH_HZ, (min(swaps) + offset) / 1e9)]
    _, missed = frame_cadence(trace)
    for frame in missed:
        duration = frame.end - frame.start
        name = FROZEN_FRAMES if duration > FROZEN_NS else SLOW_FRAMES
        out.append(Measure(name, "nanosecond", duration, (frame.start + offset) / 1e9))
    return sorted(out, key=lambda m: m.timestamp)
