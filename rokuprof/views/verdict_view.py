"""Render a series and its verdicts for a terminal or a pipe: the spread of each busy function
across the runs, then per device model the verdict headline and one line a verdict."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from rokuprof.bsprof.wall_unit import WALL_UNITS
from rokuprof.units import seconds
from rokuprof.verdict.judge import IMPROVED, REGRESSED, UNKNOWN, Judgement, gate_line
from rokuprof.verdict.series import Series
from rokuprof.views.format import count
from rokuprof.views.text import printable, text

STYLES = {REGRESSED: "bold red", UNKNOWN: "yellow", IMPROVED: "green"}


def _say(out: Console, line: str, style: str | None = None) -> None:
    out.print(printable(line), style=style, markup=False, highlight=False, soft_wrap=True)


def say_judgements(
    out: Console, judgements: dict[str, Judgement], *, enforce: bool, fail_over: float = 0.0
) -> None:
    """Per device model: the headline, then every verdict that is not ``same`` (how many were
    the same, after); with ``enforce``, then the gate's line (:func:`gate_line`). Without it
    the headline says the status is not gated."""
    several = len(judgements) > 1
    for model, j in judgements.items():
        where = f"{model or 'device'}: " if several else ""
        gate = "" if enforce else " (no --fail-over: the exit status does not depend on it)"
        _say(out, where + j.headline() + gate, STYLES.get(j.outcome, "bold"))
        for v in j.verdicts:
            if v.outcome != "same":
                _say(out, "  " + v.line(), STYLES.get(v.outcome))
        same = len(j.of("same"))
        if same:
            _say(out, f"  {same} other judged figure(s) the same (inside their floor or noise)")
    if enforce:
        failed = any(j.of(REGRESSED) for j in judgements.values())
        _say(out, gate_line(judgements, fail_over), "bold red" if failed else "bold")


def say_spread(out: Console, series: Series, top: int = 15) -> None:
    """The busiest functions of a series (by median self wall): the median and the
    interquartile range of their self wall and CPU operations across the runs."""
    unit = WALL_UNITS[series.wall_unit]
    table = Table(
        title=f"{len(series.runs)} runs: median and spread (IQR) per function",
        title_justify="left",
        box=None,
        pad_edge=False,
    )
    for name, justify in (
        ("function", "left"),
        ("self wall", "right"),
        ("± IQR", "right"),
        ("CPU operations", "right"),
        ("± IQR", "right"),
        ("file", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for key, wall, cpu in series.busiest(top):
        table.add_row(
            text(key[1]),
            seconds(wall.median / unit),
            seconds(wall.iqr / unit),
            count(cpu.median),
            count(cpu.iqr),
            text(key[2]),
        )
    out.print(table)
