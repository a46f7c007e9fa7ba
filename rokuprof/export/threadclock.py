"""A thread clock (CPU time in µs) along the synthetic timeline, for Trace Event ``tts``.

A ``.bsprof`` counts CPU in device-independent operations, not in time, so the clock is relative:
a stack's CPU share is its CPU operations per sample (:func:`~rokuprof.export.walk.stack_cpu_rates`)
over the run's highest, so the busiest stack runs 100 % of each period and the others in
proportion. A thread's clock advances by ``period x share`` over each of its busy samples and
stands still while it is idle; between two times it advances in proportion to the thread's CPU.
"""

from __future__ import annotations

from rokuprof.export.model import ExportInput
from rokuprof.export.walk import stack_cpu_rates
from rokuprof.timeline import IDLE


def cpu_shares(inp: ExportInput) -> dict[tuple[int, int], float]:
    """``{(thread, timeline stack): share}``, each in ``(0, 1]``; stacks without CPU are absent."""
    rates = stack_cpu_rates(inp)
    peak = max(rates.values(), default=0.0)
    return {k: rate / peak for k, rate in rates.items() if rate > 0} if peak > 0 else {}


class ThreadClock:
    """One thread's clock, read at non-decreasing slots (as frame events come)."""

    def __init__(self, inp: ExportInput, thread: int, shares: dict[tuple[int, int], float]):
        self._period_us = inp.timeline.period_us
        self._runs = [
            (slot, slot + n, shares.get((thread, sid), 0.0))
            for slot, sid, n in inp.timeline.runs.get(thread, ())
            if sid != IDLE
        ]
        self._next = 0  # the first run not wholly before the last slot read
        self._clock = 0.0  # µs at the end of the runs before it

    def at(self, slot: int) -> float:
        """The clock (µs) at the start of ``slot``; ``slot`` never decreases between calls."""
        runs = self._runs
        while self._next < len(runs) and runs[self._next][1] <= slot:
            start, end, share = runs[self._next]
            self._clock += (end - start) * self._period_us * share
            self._next += 1
        if self._next < len(runs) and runs[self._next][0] < slot:
            start, _, share = runs[self._next]
            return self._clock + (slot - start) * self._period_us * share
        return self._clock
