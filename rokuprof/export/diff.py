"""Comparing two captures of the same app, function by function (``rokuprof diff``; pure core).

:func:`function_figures` adds up one capture per function, keyed as ``inspect`` keys them:
``(module, function, file)``. Self figures count the call paths whose leaf is the function;
total figures count every call path that has it anywhere on its stack, once per path even when
it recurses (as ``inspect`` counts them). Calls are the calls of the paths it is the leaf of.

:func:`compare` sets two captures side by side: per function the change of every figure, whether
it is in both captures or only in one, and how much it changed (:attr:`FunctionDiff.score`):
the largest change of one of its *self* figures as a share of that figure's run total. Self
figures, because a function made slower also raises the total of every caller; ranking by self
puts the function itself first. ``per_second`` divides each capture's figures by its run length
(:attr:`~rokuprof.export.model.RunInfo.duration`: footer minus header time, or the busiest
thread's busy time when there is no usable footer, the rule the Sentry conversion uses), for
runs of different lengths.

The ``--fail-over`` gate judges the same per-function figures across runs
(:mod:`rokuprof.verdict.judge`). Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from rokuprof.export.aggregate import AnyInput
from rokuprof.export.diff_rows import (
    LINE_METRICS,
    SITE_METRICS,
    RowDiff,
    growth,
    growth_pct,
    line_figures,
    plain_number,
    site_figures,
)
from rokuprof.export.model import function_key
from rokuprof.export_names import DIFF_FIGURES as METRICS  # their home: export_names
from rokuprof.export_names import SORT_KEYS as SORT_KEYS

FunctionKey = tuple[str, str, str]  # (module, function, file)
KEY_FIELDS = ("module", "function", "file")  # a FunctionKey's parts, by name

#: The figures a function's own code accounts for: what ranks the functions.
SELF_METRICS = ("self_wall", "self_cpu", "calls", "self_alloc_bytes", "self_live_bytes")

CHANGED, SAME, ADDED, REMOVED = "changed", "same", "added", "removed"


@dataclass(slots=True)
class Figures:
    """One function in one capture (counts, or per second of run with ``per_second``)."""

    self_wall: float = 0
    total_wall: float = 0
    self_cpu: float = 0
    total_cpu: float = 0
    calls: float = 0
    self_alloc_bytes: float = 0
    total_alloc_bytes: float = 0
    self_live_bytes: float = 0
    total_live_bytes: float = 0

    def get(self, metric: str) -> float:
        return getattr(self, metric)

    def scaled(self, factor: float) -> Figures:
        return Figures(*(getattr(self, f.name) * factor for f in fields(self)))

    def to_json(self) -> dict[str, float]:
        return {m: plain_number(getattr(self, m)) for m in METRICS}


def function_figures(inp: AnyInput) -> dict[FunctionKey, Figures]:
    """Per function, the figures of one capture (integers, exactly as the tables count)."""
    out: dict[FunctionKey, Figures] = {}
    keys: dict[tuple[int, int], FunctionKey] = {}

    def key(thread: int, frame: int) -> FunctionKey:
        k = keys.get((thread, frame))
        if k is None:
            k = keys[(thread, frame)] = function_key(inp, thread, frame)
        return k

    def figures(k: FunctionKey) -> Figures:
        f = out.get(k)
        if f is None:
            f = out[k] = Figures()
        return f

    for p in inp.paths:
        if not p.frames:
            continue
        f = figures(key(p.thread, p.frames[0]))
        f.self_wall += p.wall
        f.self_cpu += p.cpu
        f.calls += p.calls
        f.self_alloc_bytes += p.alloc_bytes
        f.self_live_bytes += p.live_bytes
        for k in {key(p.thread, frame) for frame in p.frames}:
            f = figures(k)
            f.total_wall += p.wall
            f.total_cpu += p.cpu
            f.total_alloc_bytes += p.alloc_bytes
            f.total_live_bytes += p.live_bytes
    return out


@dataclass(frozen=True, slots=True)
class RunSide:
    """One of the two captures, as the comparison saw it."""

    app: str | None
    app_version: str | None
    status: str  # complete | incomplete | corrupt
    problem: str | None
    seconds: float  # run length (0.0 when unknown: no header)
    timing: str | None  # how the run length was found: "footer" | "busiest thread" | None
    wall_unit: str
    totals: Figures  # sums of the self figures over all functions (as compared)
    functions: int

    def to_json(self) -> dict[str, object]:
        """Every field as it is, in field order, but the run length rounded and the totals
        (last) as their self figures."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "totals"}
        out["seconds"] = round(self.seconds, 6)  # a float32 footer time: 45.12, not 45.119999
        out["totals"] = {m: plain_number(self.totals.get(m)) for m in SELF_METRICS}
        return out


@dataclass(frozen=True, slots=True)
class FunctionDiff:
    """One function: its figures in A and B (``None`` where it is missing) and the change."""

    key: FunctionKey
    status: str  # changed | same | added (only in B) | removed (only in A)
    a: Figures | None
    b: Figures | None
    score: float  # largest |change| of a self figure as a share of its run total (0..1+)
    lead: str = "self_wall"  # the self figure whose change gave the score

    @property
    def module(self) -> str:
        return self.key[0]

    @property
    def function(self) -> str:
        return self.key[1]

    @property
    def file(self) -> str:
        return self.key[2]

    def before(self, metric: str) -> float:
        return self.a.get(metric) if self.a is not None else 0

    def after(self, metric: str) -> float:
        return self.b.get(metric) if self.b is not None else 0

    def delta(self, metric: str) -> float:
        return self.after(metric) - self.before(metric)

    def ranked_by(self, sort: str) -> str:
        """The figure whose change ranks this function under ``sort``."""
        return self.lead if sort == "change" else sort

    def growth(self, metric: str = "self_wall") -> float | None:
        """Relative change in percent (see :func:`growth`)."""
        return growth(self.before(metric), self.after(metric))

    def to_json(self) -> dict[str, object]:
        return {
            **dict(zip(KEY_FIELDS, self.key, strict=True)),
            "status": self.status,
            "score": round(self.score, 6),
            "self_wall_growth_pct": growth_pct(self.growth()),
            "a": self.a.to_json() if self.a is not None else None,
            "b": self.b.to_json() if self.b is not None else None,
            "delta": {m: plain_number(self.delta(m)) for m in METRICS},
        }


def change_status(before: object, after: object, differ: object) -> str:
    """What happened to a row: only in B (new), only in A (gone), changed or the same."""
    if before is None:
        return ADDED
    if after is None:
        return REMOVED
    return CHANGED if differ else SAME


def compare_rows(
    fa: dict[tuple, tuple[float, ...]], fb: dict[tuple, tuple[float, ...]]
) -> list[RowDiff]:
    """Lines or leak sites side by side, largest change of the first figure first (then of the
    second)."""
    rows = []
    for key in fa.keys() | fb.keys():
        before, after = fa.get(key), fb.get(key)
        rows.append(RowDiff(key, change_status(before, after, before != after), before, after))
    rows.sort(key=lambda r: (-abs(r.delta(0)), -abs(r.delta(1)), r.key))
    return rows


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two captures side by side; :attr:`functions` ordered by ``sort`` (largest change first)."""

    a: RunSide
    b: RunSide
    per_second: bool
    sort: str
    functions: list[FunctionDiff]
    lines: list[RowDiff] = field(default_factory=list)  # source lines, by change of CPU
    leak_sites: list[RowDiff] = field(default_factory=list)  # by change of live bytes

    def count(self, status: str) -> int:
        return sum(1 for f in self.functions if f.status == status)

    def to_json(self, top: int | None = None) -> dict[str, object]:
        shown = self.functions if top is None else self.functions[:top]
        return {
            "per_second": self.per_second,
            "sort": self.sort,
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "summary": {
                "functions": len(self.functions),
                **{s: self.count(s) for s in (CHANGED, ADDED, REMOVED, SAME)},
            },
            "functions": [f.to_json() for f in shown],
            "lines": [r.to_json(LINE_METRICS) for r in self.lines[:top]],
            "leak_sites": [r.to_json(SITE_METRICS) for r in self.leak_sites[:top]],
        }


def _side(inp: AnyInput, figures: dict[FunctionKey, Figures]) -> RunSide:
    totals = Figures()
    for f in figures.values():
        for m in SELF_METRICS:
            setattr(totals, m, totals.get(m) + f.get(m))
    run = inp.run
    return RunSide(
        app=run.app,
        app_version=run.app_version,
        status=run.status,
        problem=run.problem,
        seconds=run.duration,
        timing=inp.summary.timing,
        wall_unit=run.wall_unit,
        totals=totals,
        functions=len(figures),
    )


def _sort_key(sort: str):
    if sort == "change":
        return lambda d: (-d.score, -abs(d.delta("self_wall")), d.key)
    return lambda d: (-abs(d.delta(sort)), -d.score, d.key)


def compare(
    a: AnyInput, b: AnyInput, *, per_second: bool = False, sort: str = "change"
) -> Comparison:
    """Compare capture ``a`` (before) with ``b`` (after); see the module docstring.

    With ``per_second``, a capture whose run length is unknown (no header) is not scaled."""
    if sort not in SORT_KEYS:
        raise ValueError(f"unknown sort key {sort!r} (one of {', '.join(SORT_KEYS)})")
    fa, fb = function_figures(a), function_figures(b)
    la, lb = line_figures(a), line_figures(b)
    sa, sb = site_figures(a), site_figures(b)
    if per_second:
        fa = _per_second(fa, a.run.duration)
        fb = _per_second(fb, b.run.duration)
        la, lb = _rates(la, a.run.duration), _rates(lb, b.run.duration)
        sa, sb = _rates(sa, a.run.duration), _rates(sb, b.run.duration)
    side_a, side_b = _side(a, fa), _side(b, fb)
    scale = {m: max(side_a.totals.get(m), side_b.totals.get(m)) for m in SELF_METRICS}
    diffs = []
    for key in fa.keys() | fb.keys():
        before, after = fa.get(key), fb.get(key)
        status = change_status(
            before, after, before and after and any(before.get(m) != after.get(m) for m in METRICS)
        )
        score, lead = 0.0, "self_wall"
        for m in SELF_METRICS:
            if scale[m]:
                change = (after.get(m) if after else 0) - (before.get(m) if before else 0)
                if abs(change) / scale[m] > score:
                    score, lead = abs(change) / scale[m], m
        diffs.append(FunctionDiff(key, status, before, after, score, lead))
    diffs.sort(key=_sort_key(sort))
    lines, sites = compare_rows(la, lb), compare_rows(sa, sb)
    return Comparison(side_a, side_b, per_second, sort, diffs, lines, sites)


def per_second_factor(seconds: float) -> float:
    """What ``per_second`` multiplies a run's figures by (1 when its length is unknown)."""
    return 1 / seconds if seconds > 0 else 1


def _per_second(figures: dict[FunctionKey, Figures], seconds: float) -> dict[FunctionKey, Figures]:
    if seconds <= 0:
        return figures
    return {k: f.scaled(per_second_factor(seconds)) for k, f in figures.items()}


def _rates(figures: dict, seconds: float) -> dict:
    if seconds <= 0:
        return figures
    factor = per_second_factor(seconds)
    return {k: tuple(v * factor for v in values) for k, values in figures.items()}
