"""The figures every viewer must show: ``rokuprof inspect --json``'s, per function.

``inspect`` gives self/total wall and CPU and calls per (module, function, file); allocation and
live-heap figures per function are added up here from the same tables, the way ``inspect`` adds up
time: self from the call paths whose leaf is the function, total once per call path on whose stack
it appears.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rokuprof.path_model import ALLOC_BYTES, ALLOCS, CPU, WALL
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.report import inspect_report

Key = tuple[str, str, str]  # (module = thread, function, file)

#: The synthetic timeline's sample period (the Sentry chunks' 101 Hz), in microseconds.
SAMPLE_PERIOD_US = 1e6 / 101


@dataclass
class Figures:
    self: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    total: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class Expected:
    functions: dict[Key, Figures]
    paths: int  # call paths with time, calls or allocations (an upper bound on distinct stacks)
    totals: dict[str, int]

    def threads(self) -> set[str]:
        return {k[0] for k in self.functions}

    def by(self, group: Callable[[Key], object], metric: str, kind: str = "self") -> dict:
        """Per-group sums of one figure (e.g. by function name across threads), zeros left out."""
        out: dict[object, int] = defaultdict(int)
        for key, figs in self.functions.items():
            value = getattr(figs, kind)[metric]
            if value:
                out[group(key)] += value
        return dict(out)


def expected_figures(reader: ProfileReader) -> Expected:
    report = inspect_report(reader)
    functions: dict[Key, Figures] = defaultdict(Figures)
    for f in report["functions"]:
        figs = functions[(f["module"], f["function"], f["file"])]
        for metric in ("cpu", "wall"):
            figs.self[metric] = f[f"self_{metric}"]
            figs.total[metric] = f[f"total_{metric}"]
        figs.self["calls"] = f["calls"]

    tables = reader.tables

    def key_of(node) -> Key:
        return (
            tables.module_name(node.module),
            tables.string(node.function_id),
            tables.string(node.file_id),
        )

    def add(pid: int, metric: str, value: int) -> None:
        stack = tables.stack(pid)
        if not stack or not value:
            return
        functions[key_of(stack[0])].self[metric] += value
        for key in {key_of(node) for node in stack}:
            functions[key].total[metric] += value

    paths = 0
    for pid, c in tables.counters.items():
        add(pid, "alloc_count", c[ALLOCS])
        add(pid, "alloc_bytes", c[ALLOC_BYTES])
        if tables.stack(pid) and any(c):
            paths += 1
        # "paths": how many timed call paths end in (self) or pass through (total) the function;
        # a sampled view may be off by up to one sample period per such path.
        add(pid, "paths", 1 if c[WALL] or c[CPU] else 0)
    for pid, count, size in tables.leak_sites():
        add(pid, "live_count", count)
        add(pid, "live_bytes", size)
    return Expected(dict(functions), paths, dict(report["totals"]))


def close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance


def differences(
    got: dict, want: dict, tolerance: Callable[[object], float] | float = 0
) -> list[str]:
    """Human-readable differences between two {name: value} maps (zeros count as absent)."""
    tol = tolerance if callable(tolerance) else (lambda _k, t=tolerance: t)
    problems = []
    for k in sorted(set(got) | set(want), key=str):
        g, w = got.get(k, 0), want.get(k, 0)
        if not close(g, w, tol(k)):
            problems.append(f"{k}: viewer {g} != ours {w} (tolerance {tol(k)})")
    return problems


def sum_by(items: Iterable[tuple[object, float]]) -> dict:
    out: dict[object, float] = defaultdict(float)
    for k, v in items:
        out[k] += v
    return dict(out)
