"""The rows of a diff below its functions, and the number rules of every diff figure (pure core).

A source line is keyed as ``inspect`` keys its function, plus the line (its CPU and wall: the
function's own code on that line, over the call paths it is the leaf of); a leak site by its
thread and its functions from the thread's root to the allocating one (the bytes and blocks it
allocated still live at the end). :class:`RowDiff` holds one of them in A and B.
:func:`growth`, :func:`growth_pct` and :func:`plain_number` are how every figure of
``rokuprof diff --json`` and of the diff page is changed into a percentage and written down, so
that the page and the JSON say the same. Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rokuprof.export.aggregate import AnyInput
from rokuprof.export.model import function_key


def growth(before: float, after: float) -> float | None:
    """Relative change in percent; ``inf`` from nothing to something, ``None`` for nothing to
    nothing."""
    if before:
        return 100.0 * (after - before) / before
    return math.inf if after else None


def growth_pct(value: float | None) -> float | None:
    """A growth as JSON has it: rounded; ``None`` where it has no finite value."""
    return None if value is None or math.isinf(value) else round(value, 3)


def plain_number(value: float) -> float | int:
    """Counts stay integers in JSON; rates are rounded to a sensible precision (the one rule
    for every figure ``--json`` prints and the diff page shows)."""
    if isinstance(value, int) or float(value).is_integer():
        return int(value)
    return round(value, 6)


#: A source line's figures: the CPU and wall time of the function's own code on that line.
LINE_METRICS = ("cpu", "wall")
#: A leak site's figures: the bytes and blocks it allocated that were still live at the end.
SITE_METRICS = ("live_bytes", "live_count")

LineKey = tuple[str, str, str, int]  # (module, function, file, source line)
SiteKey = tuple[str, tuple[tuple[str, str], ...]]  # (module, (function, file) from the root)


@dataclass(frozen=True, slots=True)
class RowDiff:
    """A source line or a leak site in A and B: its figures (``LINE_METRICS`` or
    ``SITE_METRICS`` in that order; ``None`` where it is missing) and the change."""

    key: tuple
    status: str  # changed | same | added (only in B) | removed (only in A)
    a: tuple[float, ...] | None
    b: tuple[float, ...] | None

    def before(self, i: int) -> float:
        return self.a[i] if self.a is not None else 0

    def after(self, i: int) -> float:
        return self.b[i] if self.b is not None else 0

    def delta(self, i: int) -> float:
        return self.after(i) - self.before(i)

    def growth(self, i: int) -> float | None:
        return growth(self.before(i), self.after(i))

    def to_json(self, metrics: tuple[str, ...]) -> dict[str, object]:
        if metrics == LINE_METRICS:
            module, function, file, line = self.key
            where: dict[str, object] = {
                "module": module,
                "function": function,
                "file": file,
                "line": line,
            }
        else:
            module, chain = self.key
            where = {"module": module, "path": [{"function": f, "file": p} for f, p in chain]}

        def figures(values: tuple[float, ...] | None) -> dict[str, float] | None:
            if values is None:
                return None
            return {m: plain_number(v) for m, v in zip(metrics, values, strict=True)}

        return {
            **where,
            "status": self.status,
            "a": figures(self.a),
            "b": figures(self.b),
            "delta": {m: plain_number(self.delta(i)) for i, m in enumerate(metrics)},
            "growth_pct": {m: growth_pct(self.growth(i)) for i, m in enumerate(metrics)},
        }


def line_figures(inp: AnyInput) -> dict[LineKey, tuple[int, int]]:
    """Per source line of a function (keyed as ``inspect`` keys the function, plus the line):
    its CPU and wall, summed over the call paths the function is the leaf of."""
    out: dict[LineKey, tuple[int, int]] = {}
    for p in inp.paths:
        if not p.frames:
            continue
        for line, cpu, wall in p.line_cpu:
            key = (*function_key(inp, p.thread, p.frames[0]), line)
            before = out.get(key, (0, 0))
            out[key] = (before[0] + cpu, before[1] + wall)
    return out


def site_figures(inp: AnyInput) -> dict[SiteKey, tuple[int, int]]:
    """Per leak site (a call path by its functions from the thread's root, the allocating one
    last): the bytes and blocks it allocated that were still live at the end."""
    out: dict[SiteKey, tuple[int, int]] = {}
    for p in inp.paths:
        if not p.frames or not (p.live_bytes or p.live_count):
            continue
        module = function_key(inp, p.thread, p.frames[0])[0]
        chain = tuple((inp.frames[f].function, inp.frames[f].file) for f in reversed(p.frames))
        before = out.get((module, chain), (0, 0))
        out[(module, chain)] = (before[0] + p.live_bytes, before[1] + p.live_count)
    return out
