"""Measurements beside the samples: the device's vitals and the run's marks, as a V2 chunk's
``measurements`` (pure: no I/O).

* ``cpu_usage`` (unit ``percent``): the app's CPU share from ``chanperf``;
* ``memory_footprint`` (unit ``byte``): the app's memory from ``chanperf``. A run that streams
  its live heap already sends that under this name (``HEAP_MEASUREMENT``, unchanged), so in such
  a run the device's figure travels as ``app_memory_footprint``: one name for one quantity
  within a run;
* ``mark.<label>`` (unit ``nanosecond``): a named moment, its value the nanoseconds since the
  run's start, its timestamp the moment itself; the label is reduced to ``[A-Za-z0-9_.-]`` and
  :data:`MAX_MARK_NAME` characters.

Values wait in :class:`SideValues` for the next chunk the builder writes (as the heap values
do); what waits is bounded per name and in names, the oldest value dropped and counted first.
"""

from __future__ import annotations

import math
import re
from collections import deque
from typing import NamedTuple

CPU_MEASUREMENT = "cpu_usage"
MEMORY_MEASUREMENT = "memory_footprint"
#: The device's memory figure in a run whose live heap already uses ``memory_footprint``.
APP_MEMORY_MEASUREMENT = "app_memory_footprint"
MARK_PREFIX = "mark."
MAX_MARK_NAME = 64  # characters of a mark's measurement name, prefix included
MAX_PENDING_VALUES = 4096  # per name, waiting for a chunk (about an hour of readings)
MAX_PENDING_NAMES = 256  # distinct names waiting (marks with many labels)

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class Measure(NamedTuple):
    """One value of one measurement, at ``timestamp`` (Unix seconds)."""

    name: str
    unit: str
    value: int | float
    timestamp: float


def mark_name(label: str) -> str:
    """``mark.<label>`` with the label reduced to a safe character set and a bounded length."""
    safe = _UNSAFE.sub("_", label).strip("_") or "mark"
    return (MARK_PREFIX + safe)[:MAX_MARK_NAME]


def vitals_measures(time: float, cpu_percent: int | None, mem_bytes: int | None) -> list[Measure]:
    """A vitals reading's measurements (a figure the device did not give is left out)."""
    out = []
    if cpu_percent is not None:
        out.append(Measure(CPU_MEASUREMENT, "percent", cpu_percent, time))
    if mem_bytes is not None:
        out.append(Measure(MEMORY_MEASUREMENT, "byte", mem_bytes, time))
    return out


def mark_measure(label: str, time: float, start: float) -> Measure:
    """A mark's measurement: nanoseconds since the run's ``start`` (never negative)."""
    return Measure(mark_name(label), "nanosecond", max(0, round((time - start) * 1e9)), time)


class SideValues:
    """Measure values waiting for the next chunk (see the module docstring)."""

    def __init__(
        self, max_values: int = MAX_PENDING_VALUES, max_names: int = MAX_PENDING_NAMES
    ) -> None:
        self.max_values = max_values
        self.max_names = max_names
        self.dropped = 0  # values dropped while waiting (over a bound, or not finite)
        self._pending: dict[str, tuple[str, deque[tuple[float, int | float]]]] = {}

    def __len__(self) -> int:
        return sum(len(values) for _, values in self._pending.values())

    def add(self, measure: Measure, *, heap: bool = False) -> None:
        """Keep ``measure`` for the next chunk; ``heap``: the run sends its live heap (the
        device's memory then goes as :data:`APP_MEMORY_MEASUREMENT`)."""
        name, unit, value, timestamp = measure
        if not (math.isfinite(value) and math.isfinite(timestamp)):
            self.dropped += 1
            return
        if heap and name == MEMORY_MEASUREMENT:
            name = APP_MEMORY_MEASUREMENT
        pending = self._pending.get(name)
        if pending is None:
            if len(self._pending) >= self.max_names:
                self.dropped += 1
                return
            pending = self._pending[name] = (unit, deque())
        values = pending[1]
        if len(values) >= self.max_values:
            values.popleft()
            self.dropped += 1
        values.append((timestamp, value))

    def take(self) -> dict[str, object] | None:
        """The waiting values as a chunk's ``measurements`` (JSON-ready), and forget them;
        ``None`` when nothing waits."""
        if not self._pending:
            return None
        pending, self._pending = self._pending, {}
        return {
            name: {"unit": unit, "values": [{"timestamp": t, "value": v} for t, v in values]}
            for name, (unit, values) in sorted(pending.items())
        }
