"""The live view's figures (pure: no terminal, no clock; times are arguments).

Per function, the run's cumulative figures as ``inspect`` aggregates them
(:func:`~rokuprof.profile.functions.aggregate_functions`, with allocations) and each one's part
of the last ``window`` seconds; data and entry rates; the live heap's trend; which rows show,
in which order; the app's last vitals reading.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from rokuprof.capture.vitals import Reading
from rokuprof.profile.functions import FunctionKey, FunctionStats, aggregate_functions
from rokuprof.profile.tables import ProfileTables
from rokuprof.units import size

#: Functions that wait rather than work, hidden by the ``i`` key (compared without case).
IDLE_FUNCTIONS = frozenset({"wait", "waitport", "sleep"})
SPARK = "▁▂▃▄▅▆▇█"


@dataclass(slots=True)
class FunctionRow:
    """One function: its cumulative figures in the run, and its part of the last window."""

    stats: FunctionStats
    recent: int = 0  # self wall in the last window
    share: float = 0.0  # of all self wall in the last window, 0..1

    @property
    def key(self) -> FunctionKey:
        return (self.stats.module, self.stats.function, self.stats.file)


def function_rows(tables: ProfileTables) -> dict[FunctionKey, FunctionRow]:
    """A row per function of ``tables``: self and total wall, self CPU, calls, allocated bytes."""
    rows = (FunctionRow(f) for f in aggregate_functions(tables, allocations=True))
    return {row.key: row for row in rows}


#: Sort columns the ``s`` key cycles through: (name, key of a row).
SORTS: tuple[tuple[str, Callable[[FunctionRow], float]], ...] = (
    ("now", lambda r: r.recent),
    ("self wall", lambda r: r.stats.self_wall),
    ("total wall", lambda r: r.stats.total_wall),
    ("CPU", lambda r: r.stats.self_cpu),
    ("calls", lambda r: r.stats.calls),
    ("alloc", lambda r: r.stats.alloc_bytes),
)


def visible_rows(
    rows: dict[FunctionKey, FunctionRow], sort: int, thread: str | None, hide_idle: bool
) -> list[FunctionRow]:
    """The rows shown: of ``thread`` (``None``: all), idle ones left out if ``hide_idle``,
    largest first by ``SORTS[sort]`` (then self wall, then names)."""
    shown = [
        r
        for r in rows.values()
        if (thread is None or r.stats.module == thread)
        and not (hide_idle and r.stats.function.lower() in IDLE_FUNCTIONS)
    ]
    by = SORTS[sort][1]
    shown.sort(key=lambda r: (-by(r), -r.stats.self_wall, *r.key))
    return shown


class Window:
    """Each function's self wall over the last ``seconds``, from cumulative snapshots."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.points: deque[tuple[float, dict[FunctionKey, int]]] = deque()

    def reset(self) -> None:
        self.points.clear()

    def update(self, now: float, rows: dict[FunctionKey, FunctionRow]) -> None:
        """Add the snapshot ``rows`` taken at ``now`` and set each row's ``recent`` and
        ``share``: the change since the last snapshot at or before ``now - seconds`` (the
        first one, until the window is full)."""
        points = self.points
        points.append((now, {k: r.stats.self_wall for k, r in rows.items()}))
        while len(points) > 1 and points[1][0] <= now - self.seconds:
            points.popleft()
        base = points[0][1] if len(points) > 1 else {}
        total = 0
        for key, row in rows.items():
            row.recent = row.stats.self_wall - base.get(key, 0)
            total += row.recent
        for row in rows.values():
            row.share = row.recent / total if total else 0.0


class Rates:
    """Bytes and entries per second over the last few seconds."""

    def __init__(self, window: float = 3.0) -> None:
        self.window = window
        self.points: list[tuple[float, int, int]] = []

    def update(self, now: float, nbytes: int, entries: int) -> tuple[float, float]:
        if self.points and (nbytes < self.points[-1][1]):  # a new run started
            self.points.clear()
        self.points.append((now, nbytes, entries))
        while len(self.points) > 2 and now - self.points[0][0] > self.window:
            self.points.pop(0)
        t0, b0, e0 = self.points[0]
        span = now - t0
        if span <= 0:
            return 0.0, 0.0
        return (nbytes - b0) / span, (entries - e0) / span


class Heap:
    """Live heap bytes over time: the value now, its change over the window, a sparkline."""

    def __init__(self, window: float, points: int = 24) -> None:
        self.window = window
        self.values: deque[tuple[float, int]] = deque(maxlen=max(points, int(window) + 2))
        self.points = points

    def add(self, now: float, live: int) -> None:
        if self.values and now - self.values[-1][0] < 0.5:
            self.values[-1] = (self.values[-1][0], live)
        else:
            self.values.append((now, live))

    def describe(self) -> str:
        if not self.values:
            return ""
        now, live = self.values[-1]
        past = next((v for t, v in self.values if t >= now - self.window), live)
        recent = [v for _, v in self.values][-self.points :]
        low, high = min(recent), max(recent)
        spark = "".join(
            SPARK[(v - low) * (len(SPARK) - 1) // (high - low)] if high > low else SPARK[0]
            for v in recent
        )
        change = live - past
        sign = "+" if change > 0 else "−" if change < 0 else "±"
        return f"{spark} {sign}{size(abs(change))} in {self.window:g} s"


def vitals_text(reading: Reading | None) -> str:
    """The app's last vitals reading, as ``app 7% cpu · 14.8 MiB``; ``""`` when there is none
    (or it has no figure)."""
    if reading is None:
        return ""
    parts = []
    if reading.cpu_percent is not None:
        parts.append(f"{reading.cpu_percent}% cpu")
    if reading.mem_bytes is not None:
        parts.append(size(reading.mem_bytes))
    return "app " + " · ".join(parts) if parts else ""
