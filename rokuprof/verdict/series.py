"""A series: the runs of one build, each reduced to its per-function figures (pure).

A run is what :func:`~rokuprof.export.diff.function_figures` makes of one capture (per function,
keyed ``(module, function, file)`` as ``inspect`` keys them), its length and the device model it
ran on. A series holds one or more runs; a function missing from a run counts 0 there (it did
not run), so every function has one value per run in every figure. The spread of a figure is
the median and the quartiles of those values (NumPy's linear quantiles).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rokuprof.export.aggregate import AnyInput
from rokuprof.export.diff import Figures, FunctionKey, function_figures
from rokuprof.verdict.stats import median, quantile

#: Runs whose median lengths differ by more than this share of the longer are compared per
#: second of run. A scenario replayed does the same work whatever its start and end jitter
#: (a tenth of a second on runs of seconds): within this, figures are compared as counted.
LENGTH_TOLERANCE = 0.10


@dataclass(frozen=True, slots=True)
class Run:
    """One capture of the series."""

    label: str  # how messages name it: the session directory or the file
    figures: dict[FunctionKey, Figures]
    seconds: float  # the run's length (0.0: unknown)
    model: str = ""  # the device model ("" when the capture does not say)
    wall_unit: str = "us"


def run_of(inp: AnyInput, label: str, model: str | None = None) -> Run:
    """A capture reduced to a run (the model: the header's unless given)."""
    header_model = model if model is not None else (inp.run.model or "")
    return Run(label, function_figures(inp), inp.run.duration, header_model, inp.run.wall_unit)


@dataclass(frozen=True, slots=True)
class Spread:
    """A figure across a series' runs."""

    median: float
    q1: float
    q3: float
    low: float
    high: float
    runs: int

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def to_json(self) -> dict[str, float | int]:
        return {
            "median": _plain(self.median),
            "q1": _plain(self.q1),
            "q3": _plain(self.q3),
            "min": _plain(self.low),
            "max": _plain(self.high),
            "runs": self.runs,
        }


def spread(values: list[float]) -> Spread:
    return Spread(
        median(values),
        quantile(values, 0.25),
        quantile(values, 0.75),
        min(values),
        max(values),
        len(values),
    )


@dataclass(frozen=True, slots=True)
class Series:
    """The runs of one build (at least one)."""

    label: str
    runs: tuple[Run, ...]

    def __post_init__(self) -> None:
        if not self.runs:
            raise ValueError("a series holds at least one run")

    @property
    def wall_unit(self) -> str:
        return self.runs[0].wall_unit

    def functions(self) -> set[FunctionKey]:
        return {key for run in self.runs for key in run.figures}

    def median_seconds(self) -> float:
        return median([run.seconds for run in self.runs])

    def values(self, key: FunctionKey, metric: str, per_second: bool = False) -> list[float]:
        """The figure of one function in each run, in run order (0 where it did not run);
        with ``per_second``, divided by each run's length (when known)."""
        out = []
        for run in self.runs:
            figures = run.figures.get(key)
            value = figures.get(metric) if figures is not None else 0.0
            if per_second and run.seconds > 0:
                value /= run.seconds
            out.append(value)
        return out

    def totals(self, metric: str, per_second: bool = False) -> list[float]:
        """A figure summed over every function, in each run."""
        out = []
        for run in self.runs:
            total = sum(f.get(metric) for f in run.figures.values())
            out.append(total / run.seconds if per_second and run.seconds > 0 else total)
        return out

    def busiest(self, top: int) -> list[tuple[FunctionKey, Spread, Spread]]:
        """The ``top`` functions by median self wall (then by key): each with the spread of
        its self wall and of its CPU operations across the runs."""
        rows = []
        for key in self.functions():
            wall = spread(self.values(key, "self_wall"))
            rows.append((-wall.median, key, wall, spread(self.values(key, "self_cpu"))))
        rows.sort(key=lambda r: (r[0], r[1]))
        return [(key, wall, cpu) for _, key, wall, cpu in rows[:top]]

    def representative(self) -> int:
        """The run that stands for the series where one must be drawn (the A/B page): the one
        whose total self wall is the series' median (of an even count, the first in run order
        of the two middle runs)."""
        totals = self.totals("self_wall")
        middle = median(totals)
        return min(range(len(totals)), key=lambda i: (abs(totals[i] - middle), i))

    def models(self) -> list[str]:
        """The device models of the runs, in first-seen order."""
        return list(dict.fromkeys(run.model for run in self.runs))

    def of_model(self, model: str) -> Series | None:
        """The runs made on one device model (``None``: none)."""
        runs = tuple(run for run in self.runs if run.model == model)
        return Series(self.label, runs) if runs else None


def lengths_differ(a: Series, b: Series) -> bool:
    """True when the two series' median run lengths differ by more than
    :data:`LENGTH_TOLERANCE` of the longer: then they are compared per second of run."""
    la, lb = a.median_seconds(), b.median_seconds()
    longer = max(la, lb)
    return longer > 0 and abs(la - lb) > LENGTH_TOLERANCE * longer


def series_of(label: str, runs: Iterable[Run]) -> Series:
    return Series(label, tuple(runs))


def _plain(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 6)
