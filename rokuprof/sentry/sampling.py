"""From wall-self time to whole samples at 101 Hz, with exact integer remainders.

A ``.bsprof`` stream reports wall time per call path as incremental integers in a unit the format
does not publish (see :data:`WALL_UNITS`; microseconds is the working assumption and the default).
Sentry wants samples taken every ``T = 1/101 s``. Per call path the :class:`Sampler` keeps what
has not yet made a whole sample and carries it forward, so that over a run
``samples x T`` equals the path's wall-self total within one period (within half a period after
:meth:`Sampler.round_off` at the end of the run).

All arithmetic is on integers: a wall unit is worth ``hz`` ticks and one sample costs
``units_per_second`` ticks, so nothing drifts however long the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

# The wall unit is the stream's fact (rokuprof.bsprof.wall_unit); its names stay importable here.
from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT as DEFAULT_WALL_UNIT
from rokuprof.bsprof.wall_unit import WALL_UNITS as WALL_UNITS
from rokuprof.bsprof.wall_unit import units_per_second as units_per_second

#: Sampling frequency Sentry's SDKs use (101 Hz avoids lockstep with 100 Hz loops).
SAMPLE_RATE_HZ = 101


class Sampler:
    """Turns per-path wall-self deltas into sample counts, carrying remainders."""

    __slots__ = ("hz", "rest", "units")

    def __init__(self, wall_unit: str = DEFAULT_WALL_UNIT, hz: int = SAMPLE_RATE_HZ) -> None:
        self.units = units_per_second(wall_unit)
        self.hz = hz
        self.rest: dict[int, int] = {}  # path -> ticks not yet sampled, 0 <= rest < units

    @property
    def period(self) -> float:
        """Seconds per sample."""
        return 1.0 / self.hz

    def seconds(self, wall: int) -> float:
        """Wall units as seconds."""
        return wall / self.units

    def take(self, path: int, wall: int) -> int:
        """Add ``wall`` units to ``path``; return how many whole samples are now due."""
        n, rest = divmod(self.rest.get(path, 0) + wall * self.hz, self.units)
        self.rest[path] = rest
        return n

    def round_off(self, accept: Callable[[int], bool] | None = None) -> Iterator[tuple[int, int]]:
        """End of the run: one more sample for every path whose remainder is at least half a
        period (and that ``accept(path)`` takes, when given); yields ``(path, 1)`` for those.
        Afterwards every remainder of a rounded path lies in ``[-T/2, T/2)`` and every other
        one in ``[0, T)``."""
        half = self.units
        for path, rest in self.rest.items():
            if 2 * rest >= half and (accept is None or accept(path)):
                self.rest[path] = rest - self.units
                yield path, 1

    def pending_seconds(self) -> float:
        """Wall time not (yet) represented by samples, summed over paths (may be negative after
        :meth:`round_off`)."""
        return sum(self.rest.values()) / (self.units * self.hz)

    def remainder_seconds(self, path: int) -> float:
        return self.rest.get(path, 0) / (self.units * self.hz)
