"""Missed frames as a trace arrives (pure): the frame rule of
:func:`rokuprof.trace.analysis.frame_cadence`, applied to slices as they end, holding only the
current interval of each render thread.

Feed it a streaming :class:`~rokuprof.trace.reader.TraceReader`'s finished slices
(``TraceReader(keep_slices=False, on_slice_end=frames.slice_ended)``); :meth:`LiveFrames.take`
gives the frames missed since the last take. A slice's interval is complete when the next
``swapBuffers`` on its thread ends (the slices of one thread come in order), so a frame is
known one frame late. Intervals are per thread (the whole-trace analysis orders every thread's
swaps together; a Roku swaps on its render thread, where the two agree).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rokuprof.trace.analysis import FRAME_BUDGET_NS, MissedFrame, frame_cause
from rokuprof.trace.model import Slice


def _earlier(a: Slice, b: Slice) -> bool:
    """``a`` began before ``b`` (on one thread, at the same time: the outer one first)."""
    return (a.start, a.depth) < (b.start, b.depth)


@dataclass
class _Thread:
    swap: Slice | None = None  # the swap that opened the current interval
    before: Slice | None = None  # the top-level slice before it (it may reach into it)
    busy: int = 0  # of the current interval, from the slices that started in it
    render: Slice | None = None  # the interval's first render
    last_top: Slice | None = None


@dataclass
class LiveFrames:
    """Missed frames of a trace that is still arriving (see the module docstring)."""

    first_swap: int | None = None  # the first swap's start (trace ns)
    missed: list[MissedFrame] = field(default_factory=list)
    _threads: dict[int, _Thread] = field(default_factory=dict)

    def slice_ended(self, s: Slice) -> None:
        if s.end is None:
            return
        t = self._threads.get(s.track)
        if t is None:
            t = self._threads[s.track] = _Thread()
        opened = t.swap is not None and s.start >= t.swap.start
        if s.name == "render" and opened and (t.render is None or _earlier(s, t.render)):
            t.render = s
        if s.depth != 0:
            return
        if s.name == "swapBuffers" and not s.instant:
            self._swap(t, s)
        elif t.swap is not None and s.start >= t.swap.start:
            t.busy += s.end - s.start  # clipped at the interval's end when it closes
            t.last_top = s
        else:
            t.before = s

    def _swap(self, t: _Thread, s: Slice) -> None:
        if self.first_swap is None or s.start < self.first_swap:
            self.first_swap = s.start
        a = t.swap
        if a is not None and s.start > a.start:
            gap = s.start - a.start
            if gap > FRAME_BUDGET_NS:
                busy = self._busy(t, a, s.start)
                if 2 * busy > gap:
                    render = t.render if t.render is not None and t.render.start < s.start else None
                    self.missed.append(
                        MissedFrame(a.start, s.start, busy, frame_cause(a, s, render))
                    )
        t.before = t.last_top or a
        t.swap, t.busy, t.render, t.last_top = s, 0, None, None

    @staticmethod
    def _busy(t: _Thread, a: Slice, end: int) -> int:
        """Nanoseconds of ``[a.start, end)`` the thread's top-level slices cover: the swap,
        those after it (each sequential, so only the last can run past ``end``), and the one
        before it reaching in."""
        assert a.end is not None
        busy = min(a.end, end) - a.start
        busy += t.busy
        last = t.last_top
        if last is not None and last.end is not None and last.end > end:
            busy -= last.end - max(end, last.start)
        before = t.before
        if before is not None and before.end is not None and before.end > a.start:
            busy += min(before.end, end) - a.start
        return max(busy, 0)

    def take(self) -> list[MissedFrame]:
        """The frames missed since the last take, in the order they were found."""
        out, self.missed = self.missed, []
        return out
