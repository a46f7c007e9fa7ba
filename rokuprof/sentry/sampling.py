"""From wall-self time to whole samples at 101 Hz, conserving busy time per call path and per
thread, with exact integer remainders.

A ``.bsprof`` stream reports wall time per call path as incremental integers in a unit the format
does not publish (see :data:`WALL_UNITS`; microseconds is the working assumption and the default).
Sentry wants samples taken every ``T = 1/101 s``. The :class:`Sampler` keeps two invariants over a
whole run, whatever the number or size of the call paths:

* **per call path**: ``samples x T`` equals the path's wall-self total within one period;
* **per thread**: the samples of all the thread's call paths, times ``T``, equal the thread's
  busy time (the sum of those totals) within one period (half a period after
  :meth:`Sampler.round_off` at the end of the run, where the thread had room for it).

Rounding each path on its own keeps the first but not the second: 10,000 paths of 2 ms each are
a fifth of a period apiece, so each would round to nothing and 20 s of busy time would vanish.
So each delta is sampled in two steps (largest remainder, as seats are apportioned):

1. every call path gets the whole samples its carried remainder plus its new wall time make;
   what is left (``0 <= rest < T``, or still below zero, see below) is carried per path, and
   the sum of a thread's remainders is carried per thread;
2. for each whole period the thread's carried sum holds, one more sample goes to a call path of
   the delta with a positive remainder, the largest remainders first (ties: the earlier in the
   stream); that path's remainder drops by a period, to ``-T < rest < 0``, which later wall time
   of the path pays back before it makes a new sample.

So a path's remainder always lies in ``(-T, T)`` (it is within a period of its total) and a
thread's carried sum in ``[0, T)`` after each step 2, unless fewer of the delta's paths had a
positive remainder than the thread was owed periods; then the rest waits for the next delta or
for :meth:`Sampler.round_off`, which gives the thread ``round(sum / T)`` samples over all its
paths, largest remainders first (ties: the lower path ID). The result depends on the deltas'
contents and order alone; the cost is linear in the delta's paths (a selection among those with a
positive remainder when the thread is owed fewer samples than it has such paths).

All arithmetic is on integers: a wall unit is worth ``hz`` ticks and one sample costs
``units_per_second`` ticks, so nothing drifts however long the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

# The wall unit is the stream's fact (rokuprof.bsprof.wall_unit); its names stay importable here.
from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT as DEFAULT_WALL_UNIT
from rokuprof.bsprof.wall_unit import WALL_UNITS as WALL_UNITS
from rokuprof.bsprof.wall_unit import units_per_second as units_per_second

#: Sampling frequency Sentry's SDKs use (101 Hz avoids lockstep with 100 Hz loops).
SAMPLE_RATE_HZ = 101


class Sampler:
    """Turns per-path wall-self deltas into sample counts, carrying remainders per call path and
    per thread (see the module docstring)."""

    __slots__ = ("_native", "carry", "hz", "rest", "units")

    def __init__(
        self,
        wall_unit: str = DEFAULT_WALL_UNIT,
        hz: int = SAMPLE_RATE_HZ,
        native: Callable[..., list[tuple[int, int, int]] | None] | None = None,
    ) -> None:
        self.units = units_per_second(wall_unit)
        self.hz = hz
        #: the C twin of :meth:`take` (``_native/sampler_take.c``: the same results; it declines
        #: numbers beyond 64 bits, which this class then handles), or ``None``
        self._native = native
        #: path -> ticks not yet sampled, -units < rest < units (paths at 0 are not kept)
        self.rest: dict[int, int] = {}
        #: thread -> the sum of its paths' rests, less what it :meth:`owe`\ s
        self.carry: dict[int, int] = {}

    @property
    def period(self) -> float:
        """Seconds per sample."""
        return 1.0 / self.hz

    def seconds(self, wall: int) -> float:
        """Wall units as seconds."""
        return wall / self.units

    def take(self, items: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        """One delta: ``(thread, call path, wall)`` for each path with new wall time, in stream
        order (a path at most once). Returns ``(thread, call path, samples)`` for the paths that
        get samples now, in the same order."""
        if self._native is not None:
            items = items if isinstance(items, list) else list(items)
            taken = self._native(items, self.rest, self.carry, self.units, self.hz)
            if taken is not None:
                return taken
        units, hz = self.units, self.hz
        rest, carry = self.rest, self.carry
        threads: list[int] = []
        paths: list[int] = []
        counts: list[int] = []
        # thread -> for each path with rest > 0, an integer that sorts the largest rest first,
        # then stream order: (units - rest) above the path's index (into paths) in 32 bits
        positive: dict[int, list[int]] = {}
        for thread, path, wall in items:
            before = rest.get(path, 0)
            r = before + wall * hz
            if r >= units:
                n, r = divmod(r, units)
            else:
                n = 0
            if r:
                rest[path] = r
                if r > 0:
                    held = positive.get(thread)
                    if held is None:
                        held = positive[thread] = []
                    held.append((units - r) << 32 | len(paths))
            elif before:
                del rest[path]
            carry[thread] = carry.get(thread, 0) + r - before
            threads.append(thread)
            paths.append(path)
            counts.append(n)
        for thread, keys in positive.items():
            owed = min(carry[thread] // units, len(keys))
            if owed <= 0:
                continue
            if owed < len(keys):
                keys.sort()
                del keys[owed:]
            for key in keys:
                i = key & 0xFFFFFFFF
                counts[i] += 1
                rest[paths[i]] -= units
            carry[thread] -= owed * units
        return [(t, p, n) for t, p, n in zip(threads, paths, counts, strict=True) if n]

    def round_off(
        self,
        thread_of: Callable[[int], int | None],
        room: Callable[[int], int] | None = None,
        alone: Callable[[int], bool] | None = None,
    ) -> list[tuple[int, int]]:
        """End of the run: each thread gets ``round(carried sum / T)`` more samples (at most
        ``room(thread)``, when given), one each to the paths with the largest remainders (ties:
        the lower path ID). Returns ``(path, 1)`` for those, by thread then path. Afterwards a
        thread's carried sum lies in ``[-T/2, T/2)`` when it had the room, and every path's
        remainder still in ``(-T, T)``. A thread for which ``alone(thread)`` is true (one more
        sample would be its only one where it goes, so no chunk could carry it) gets no sample
        for a sum under one period: it is within a period of its busy time without."""
        units = self.units
        candidates: dict[int, list[int]] = {}
        for path, r in self.rest.items():
            if r > 0:
                thread = thread_of(path)
                if thread is not None:
                    candidates.setdefault(thread, []).append(path)
        out: list[tuple[int, int]] = []
        for thread in sorted(candidates):
            paths = candidates[thread]
            carried = self.carry.get(thread, 0)
            owed = min((2 * carried + units) // (2 * units), len(paths))
            if owed == 1 and carried < units and alone is not None and alone(thread):
                owed = 0
            if room is not None and owed > 0:
                owed = min(owed, room(thread))
            if owed <= 0:
                continue
            rest = self.rest
            paths.sort(key=lambda p: (units - rest[p], p))
            for path in sorted(paths[:owed]):
                self.rest[path] -= units
                out.append((path, 1))
            self.carry[thread] -= owed * units
        return out

    def owe(self, thread: int, wall: int) -> None:
        """``wall`` units of ``thread`` were already sampled elsewhere (a crashed run's chunks
        that its call paths' own time does not cover): its paths' remainders pay them back
        before the thread gets another sample beyond its paths' own."""
        self.carry[thread] = self.carry.get(thread, 0) - wall * self.hz

    def pending_seconds(self) -> float:
        """Wall time not (yet) represented by samples, summed over paths (may be negative after
        :meth:`round_off`)."""
        return sum(self.rest.values()) / (self.units * self.hz)

    def remainder_seconds(self, path: int) -> float:
        return self.rest.get(path, 0) / (self.units * self.hz)

    def thread_remainder_seconds(self, thread: int) -> float:
        """A thread's busy time not (yet) represented by samples (its carried sum)."""
        return self.carry.get(thread, 0) / (self.units * self.hz)
