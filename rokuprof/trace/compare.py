"""Two runs' app traces side by side: missed frames and time blocked in rendezvous, the figures
``diff`` and ``profile --baseline`` judge besides the functions (pure).

Each side is a :func:`~rokuprof.trace.summary.trace_report`. When the two traces' spans differ
by more than :data:`LENGTH_TOLERANCE`, figures are compared per second of trace (a longer run
misses more frames without being worse). A figure regresses under ``--fail-over PCT`` when B's
is more than PCT percent above A's; one that A does not have at all (0) and B has grew without
bound, as a function only in B does.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Spans within this share of the longer compare as they are (as the functions' gate does).
LENGTH_TOLERANCE = 0.02


@dataclass(frozen=True)
class TraceFigure:
    """One figure of both runs (per second of trace when ``per_second``)."""

    name: str  # "missed frames" | "rendezvous blocked ms"
    key: str  # its JSON name
    a: float
    b: float

    @property
    def change_pct(self) -> float | None:
        """B against A in percent; ``None`` when A is 0 and B is not (grown without bound)."""
        if self.a == 0:
            return 0.0 if self.b == 0 else None
        return (self.b - self.a) / self.a * 100

    def regressed(self, over_pct: float) -> bool:
        change = self.change_pct
        return change is None or change > over_pct

    def to_json(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "change_pct": _round(self.change_pct)}


@dataclass(frozen=True)
class TraceComparison:
    per_second: bool
    figures: tuple[TraceFigure, ...]

    def regressions(self, over_pct: float) -> list[TraceFigure]:
        return [f for f in self.figures if f.regressed(over_pct)]

    def to_json(self, over_pct: float | None = None) -> dict[str, object]:
        out: dict[str, object] = {
            "per_second": self.per_second,
            **{f.key: f.to_json() for f in self.figures},
        }
        if over_pct is not None:
            out["failed"] = [f.key for f in self.regressions(over_pct)]
        return out

    def lines(self) -> list[str]:
        """The figures as short lines of text."""
        unit = " a second" if self.per_second else ""
        out = []
        for f in self.figures:
            change = f.change_pct
            said = "new in B" if change is None else f"{change:+.1f}%"
            out.append(f"{f.name}{unit}: {_num(f.a)} -> {_num(f.b)} ({said})")
        return out


def compare_traces(a: dict, b: dict) -> TraceComparison:
    """The figures of two trace reports (see the module docstring)."""
    span_a, span_b = a.get("span_ms") or 0.0, b.get("span_ms") or 0.0
    longer = max(span_a, span_b)
    per_second = longer > 0 and abs(span_a - span_b) > LENGTH_TOLERANCE * longer

    def scaled(value: float, span: float) -> float:
        if not per_second:
            return value
        return value / (span / 1000) if span > 0 else 0.0

    figures = (
        TraceFigure(
            "missed frames",
            "missed_frames",
            scaled(a["frames"]["missed"], span_a),
            scaled(b["frames"]["missed"], span_b),
        ),
        TraceFigure(
            "rendezvous blocked ms",
            "rendezvous_ms",
            scaled(_rendezvous_ms(a), span_a),
            scaled(_rendezvous_ms(b), span_b),
        ),
    )
    return TraceComparison(per_second, figures)


def _rendezvous_ms(report: dict) -> float:
    """Every rendezvous' blocked time (all rows, not only those the report lists)."""
    return float(report["rendezvous_total_ms"])


def _num(value: float) -> str:
    return f"{value:g}" if float(value).is_integer() else f"{value:.3f}"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
