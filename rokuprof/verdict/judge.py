"""Regressed, improved, same or unknown: one verdict per function and figure, from two series of
runs, each explained in one line (pure).

The figures judged are a function's own: CPU operations, self wall time, allocated bytes and
bytes still live at the end (:data:`JUDGED`). For each, per function, the two series give two
distributions of one value a run; the verdict follows from

* the **size** of the change: the medians' change in percent must exceed the figure's floor
  (``counter_over`` for a counter, ``fail_over`` for the others) *and* be at least
  ``min_effect`` times the noise, the larger of the two series' interquartile ranges (so a
  change inside what the runs already scatter over is no change). A smaller change is
  ``same``;
* for a **counter** (CPU operations: the device counts BrightScript operations, the same on
  every run and every device model), the size, and the median past every baseline run (a
  counter that scatters is not read by its median alone): ``regressed`` or ``improved``, even
  with one run a side;
* for a **clock** or a byte figure, also the evidence that the two distributions differ: the
  smaller of the Mann-Whitney U and Kolmogorov-Smirnov p-values (Chromium Pinpoint's rule: the
  first misses changes of spread, the second is weak with discrete values) must be below
  ``alpha``; otherwise the change may be noise: ``unknown``, and more runs can decide.

A function is judged on a figure when its median share of its run's total of that figure is at
least ``min_share`` percent in either series (noise in tiny functions is not worth a verdict).
When the series' run lengths differ (:func:`~rokuprof.verdict.series.lengths_differ`) every
value is per second of run. Pure: numbers in, verdicts out; the same series give the same
verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from rokuprof.bsprof.wall_unit import WALL_UNITS
from rokuprof.export.diff import FunctionKey
from rokuprof.units import seconds, size
from rokuprof.verdict.rules import DEFAULT_RULES, JUDGED, Rules
from rokuprof.verdict.series import Series, lengths_differ, spread
from rokuprof.verdict.stats import difference_p, separation

REGRESSED, IMPROVED, SAME, UNKNOWN = "regressed", "improved", "same", "unknown"
OUTCOMES = (REGRESSED, UNKNOWN, IMPROVED, SAME)  # the order verdicts are listed in


@dataclass(frozen=True, slots=True)
class Verdict:
    """One function's verdict on one figure, with what it was decided from."""

    key: FunctionKey
    metric: str
    outcome: str
    a: tuple[float, ...]  # the baseline's values, a run each
    b: tuple[float, ...]  # the judged series' values
    median_a: float
    median_b: float
    change_pct: float  # of the baseline's median (±inf from 0)
    noise: float  # the larger interquartile range
    p: float
    reason: str  # why, in words: the tail of the line
    unit: str = "us"  # the wall unit (wall figures only)
    per_second: bool = False

    @property
    def function(self) -> str:
        return self.key[1]

    @property
    def counter(self) -> bool:
        return JUDGED[self.metric][1]

    @property
    def effect(self) -> float:
        """The change in multiples of the noise (inf when the runs do not scatter)."""
        diff = abs(self.median_b - self.median_a)
        if not diff:
            return 0.0
        return diff / self.noise if self.noise else math.inf

    def line(self) -> str:
        """The verdict in one line: ``work: CPU operations +6.0 % (53,000 vs 50,000, medians),
        all 5 runs above every baseline run, p = 0.008 → regressed``."""
        name = JUDGED[self.metric][0]
        medians = "" if len(self.a) == len(self.b) == 1 else ", medians"
        tail = f" ({self.reason})" if self.reason else ""
        return (
            f"{self.function}: {name} {self.change()} ({self.figures()}{medians}), "
            f"{self._runs()}, p {_p(self.p)} → {self.outcome}{tail}"
        )

    def change(self) -> str:
        """The medians' change: ``+6.0 %``, ``new`` (from 0)."""
        return _pct(self.change_pct)

    def figures(self) -> str:
        """The medians, judged first: ``53,000 vs 50,000``, ``1.25 s vs 1.20 s``."""
        return f"{self.value(self.median_b)} vs {self.value(self.median_a)}"

    def value(self, value: float) -> str:
        """One value of this figure in words (seconds, operations, bytes; ``/s`` per second)."""
        rate = "/s" if self.per_second else ""
        if self.metric == "self_wall":
            return seconds(value / WALL_UNITS[self.unit]) + rate
        if self.metric == "self_cpu":
            return f"{value:,.0f}{rate}"
        return size(value) + rate

    def _runs(self) -> str:
        """How the runs lie against the baseline's."""
        n_a, n_b = len(self.a), len(self.b)
        if n_a == n_b == 1:
            return "1 run vs 1 run"
        above, below = separation(self.a, self.b)
        runs = "the run" if n_b == 1 else f"all {n_b} runs"
        if above == n_b:
            return f"{runs} above every baseline run"
        if below == n_b:
            return f"{runs} below every baseline run"
        if above:
            return f"{above} of {n_b} runs above every baseline run"
        if below:
            return f"{below} of {n_b} runs below every baseline run"
        return "the runs overlap the baseline's"

    def to_json(self) -> dict[str, object]:
        module, function, file = self.key
        return {
            "module": module,
            "function": function,
            "file": file,
            "metric": self.metric,
            "kind": "counter" if self.counter else "clock",
            "verdict": self.outcome,
            "change_pct": _json_pct(self.change_pct),
            "p": round(self.p, 6),
            "effect_iqr": None if math.isinf(self.effect) else round(self.effect, 3),
            "a": spread(list(self.a)).to_json(),
            "b": spread(list(self.b)).to_json(),
            "line": self.line(),
        }


@dataclass(frozen=True, slots=True)
class Judgement:
    """Every verdict of one comparison, regressions first."""

    baseline: Series
    judged: Series
    rules: Rules
    per_second: bool
    verdicts: list[Verdict] = field(default_factory=list)
    #: said after the headline's counts: e.g. that the baseline has no run on this model
    note: str = ""

    def of(self, outcome: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.outcome == outcome]

    @property
    def outcome(self) -> str:
        """``regressed`` when any verdict is, else ``unknown`` when any is, else ``passed``."""
        if self.of(REGRESSED):
            return REGRESSED
        return UNKNOWN if self.of(UNKNOWN) else "passed"

    def headline(self) -> str:
        """The comparison in one line: what was compared with what, and the outcome."""
        counts = ", ".join(
            f"{len(self.of(o))} {o}" for o in (REGRESSED, UNKNOWN, IMPROVED) if self.of(o)
        )
        runs = f"{len(self.judged.runs)} run(s) vs {len(self.baseline.runs)} baseline run(s)"
        how = ", per second of run" if self.per_second else ""
        note = f"; {self.note}" if self.note else ""
        said = counts or "every judged figure the same"
        return f"verdict: {self.outcome} ({runs}{how}; {said}{note})"

    def lines(self, *, same: bool = False) -> list[str]:
        """The verdict lines (with ``same``, those that found no change too)."""
        return [v.line() for v in self.verdicts if same or v.outcome != SAME]

    def to_json(self) -> dict[str, object]:
        return {
            "outcome": self.outcome,
            "runs": len(self.judged.runs),
            "baseline_runs": len(self.baseline.runs),
            "per_second": self.per_second,
            "rules": self.rules.to_json(),
            "counts": {o: len(self.of(o)) for o in OUTCOMES},
            "headline": self.headline(),
            "verdicts": [v.to_json() for v in self.verdicts],
        }


def judge(baseline: Series, judged: Series, rules: Rules | None = None) -> Judgement:
    """Every function's verdict on every figure of :data:`JUDGED` (see the module docstring);
    regressions first, then unknown, improved and same, each by size of change."""
    rules = rules or DEFAULT_RULES
    per_second = lengths_differ(baseline, judged)
    verdicts: list[tuple[float, Verdict]] = []
    keys = sorted(baseline.functions() | judged.functions())
    for metric in JUDGED:
        total_a = _median(baseline.totals(metric, per_second))
        total_b = _median(judged.totals(metric, per_second))
        for key in keys:
            a = baseline.values(key, metric, per_second)
            b = judged.values(key, metric, per_second)
            share = max(_share(a, total_a), _share(b, total_b))
            if share < rules.min_share or not (any(a) or any(b)):
                continue
            verdict = _verdict(key, metric, a, b, rules, judged.wall_unit, per_second)
            impact = abs(verdict.median_b - verdict.median_a) / (max(total_a, total_b) or 1)
            verdicts.append((impact, verdict))
    rank = {o: i for i, o in enumerate(OUTCOMES)}
    verdicts.sort(key=lambda iv: (rank[iv[1].outcome], -iv[0], iv[1].key, iv[1].metric))
    return Judgement(baseline, judged, rules, per_second, [v for _, v in verdicts])


def judge_models(
    baseline: Series, judged: Series, rules: Rules | None = None
) -> dict[str, Judgement]:
    """A judgement per device model of the judged series: against the baseline's runs on the
    same model when it has any, else against all of them."""
    out = {}
    for model in judged.models():
        runs = judged.of_model(model)
        assert runs is not None
        same_model = baseline.of_model(model)
        if same_model is not None:
            out[model] = judge(same_model, runs, rules)
        else:
            whole = judge(baseline, runs, rules)
            note = f"no baseline run on {model or 'this model'}: judged against every model's"
            out[model] = replace(whole, note=note)
    return out


def _verdict(
    key: FunctionKey,
    metric: str,
    a: list[float],
    b: list[float],
    rules: Rules,
    unit: str,
    per_second: bool,
) -> Verdict:
    sa, sb = spread(a), spread(b)
    diff = sb.median - sa.median
    change = _change_pct(sa.median, sb.median)
    noise = max(sa.iqr, sb.iqr)
    effect = (abs(diff) / noise if noise else math.inf) if diff else 0.0
    p = difference_p(a, b)
    floor = rules.floor(metric)
    counter = JUDGED[metric][1]
    direction = REGRESSED if diff > 0 else IMPROVED
    if abs(change) <= floor:
        outcome, reason = SAME, f"inside the {floor:g} % floor"
    elif effect < rules.min_effect:
        outcome, reason = SAME, f"inside the runs' noise: {effect:.2g} IQR"
    elif counter and not (sb.median > sa.high if diff > 0 else sb.median < sa.low):
        outcome, reason = SAME, "inside the baseline runs' range"
    elif counter or p < rules.alpha:
        outcome, reason = direction, ""
    else:
        outcome, reason = UNKNOWN, f"p ≥ {rules.alpha:g}: more runs can tell"
    return Verdict(
        key, metric, outcome, tuple(a), tuple(b), sa.median, sb.median, change, noise, p, reason,
        unit, per_second,
    )  # fmt: skip


def _change_pct(before: float, after: float) -> float:
    if before:
        return 100.0 * (after - before) / abs(before)
    if after:
        return math.copysign(math.inf, after)
    return 0.0


def _share(values: list[float], total: float) -> float:
    return 100.0 * _median(values) / total if total else 0.0


def _median(values: list[float]) -> float:
    return spread(values).median


def _pct(change: float) -> str:
    if math.isinf(change):
        return "new" if change > 0 else "gone"
    return f"{change:+.1f} %"


def _json_pct(change: float) -> float | None:
    return None if math.isinf(change) else round(change, 3)


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def gate_line(judgements: dict[str, Judgement], fail_over: float) -> str:
    """The gate's verdict in one line, the words ``diff`` and ``profile`` print and the A/B
    page opens with: ``--fail-over 20 %: failed: parseString self wall time +100.0 % (2.01 s
    vs 1.00 s), ...`` (each regressed verdict), ``... undecided: ...`` (unknown ones, no
    regression) or ``... passed: ...``."""
    head = f"--fail-over {fail_over:g} %"
    verdicts = [v for j in judgements.values() for v in j.verdicts]
    regressed = [v for v in verdicts if v.outcome == REGRESSED]
    unknown = [v for v in verdicts if v.outcome == UNKNOWN]
    if regressed:
        return f"{head}: failed: " + ", ".join(_short(v) for v in regressed)
    if unknown:
        said = ", ".join(_short(v) for v in unknown)
        return f"{head}: undecided: {said}: more runs can tell"
    return f"{head}: passed: no verdict regressed or unknown"


def _short(v: Verdict) -> str:
    return f"{v.function} {JUDGED[v.metric][0]} {v.change()} ({v.figures()})"
