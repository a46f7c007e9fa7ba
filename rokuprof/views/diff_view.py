"""Render a :class:`~rokuprof.export.diff.Comparison` (``rokuprof diff``) for a terminal or a
pipe: the two runs, a summary, and one row per function, largest change first."""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rokuprof.export.diff import ADDED, REMOVED, SAME, Comparison, FunctionDiff, RunSide
from rokuprof.export.diff_summary import apps_warning
from rokuprof.sentry.sampling import WALL_UNITS
from rokuprof.units import seconds, size
from rokuprof.views.format import count
from rokuprof.views.text import printable, text

#: Columns, and the narrowest terminal that still shows each; ``--json`` has every figure.
COLUMNS = (
    ("function", "left", 0),
    ("module", "left", 0),
    ("ranked by", "right", 0),  # the figure the rows are ordered by (its header names it)
    ("Δ self wall", "right", 0),
    ("change", "right", 0),
    ("self wall B", "right", 70),
    ("Δ total wall", "right", 130),
    ("Δ self CPU", "right", 110),
    ("Δ calls", "right", 90),
    ("Δ alloc", "right", 100),
    ("Δ live", "right", 80),
    ("file", "left", 150),
)

SORT_TITLES = {
    "change": "largest change of a function's own figures, as a share of the run",
    "self_wall": "change of self wall time",
    "total_wall": "change of total wall time",
    "self_cpu": "change of self CPU",
    "total_cpu": "change of total CPU",
    "calls": "change of calls",
    "self_alloc_bytes": "change of allocated bytes (self)",
    "total_alloc_bytes": "change of allocated bytes (total)",
    "self_live_bytes": "change of live bytes at the end (self)",
    "total_live_bytes": "change of live bytes at the end (total)",
}


def _signed(value: float, fmt) -> str:
    if not value:
        return "0"
    return ("+" if value > 0 else "-") + fmt(abs(value))  # ASCII, as the growth column


def _growth(d: FunctionDiff) -> Text:
    if d.status == ADDED:
        return Text("new", style="bold red")
    if d.status == REMOVED:
        return Text("gone", style="green")
    g = d.growth("self_wall")
    if g is None or math.isinf(g) or abs(g) < 0.05:
        return Text("·" if d.status == SAME else "", style="dim")
    return Text(f"{g:+.1f}%", style="red" if g > 0 else "green")


def _side_line(name: str, label: str, side: RunSide) -> Text:
    out = Text.assemble((f"{name} ", "bold"), printable(label), ": ")
    app = " ".join(x for x in (side.app, side.app_version) if x) or "(no header)"
    out.append(printable(app))
    if side.seconds:
        how = "footer" if side.timing == "footer" else "busiest thread's busy time"
        out.append(f", {seconds(side.seconds)} run ({how})")
    out.append(f", {count(side.functions)} functions, ")
    if side.problem:
        said = side.problem.startswith(f"{side.status}:")  # "incomplete: the stream stops..."
        text = side.problem if said else f"{side.status}: {side.problem}"
        out.append(printable(text), style="yellow")
    else:
        out.append(side.status, style="green" if side.status == "complete" else "yellow")
    return out


#: The ranking column's header for each sort key.
RANK_HEADERS = {"change": "Δ share of run", **{k: f"Δ {k}" for k in SORT_TITLES if k != "change"}}


def _ranked(d: FunctionDiff, sort: str, wall, number, nbytes) -> str:
    """The figure ``sort`` orders the rows by, as the column shows it: the score as a share of
    the run for ``change``, else the figure's change."""
    if sort == "change":
        return f"{d.score * 100:.1f}%"
    fmt = wall if sort.endswith("_wall") else nbytes if sort.endswith("_bytes") else number
    return _signed(d.delta(sort), fmt)


def _cells(
    d: FunctionDiff, wall_seconds: float, rate: str, sort: str = "change"
) -> dict[str, Text | str]:
    def wall(v: float) -> str:
        return seconds(v * wall_seconds) + rate

    def number(v: float) -> str:
        return count(v) + rate

    def nbytes(v: float) -> str:
        return size(v) + rate

    return {
        "function": text(d.function),
        "module": text(d.module),
        "ranked by": _ranked(d, sort, wall, number, nbytes),
        "Δ self wall": _signed(d.delta("self_wall"), wall),
        "change": _growth(d),
        "self wall B": wall(d.after("self_wall")) if d.b is not None else "-",
        "Δ total wall": _signed(d.delta("total_wall"), wall),
        "Δ self CPU": _signed(d.delta("self_cpu"), number),
        "Δ calls": _signed(d.delta("calls"), number),
        "Δ alloc": _signed(d.delta("self_alloc_bytes"), nbytes),
        "Δ live": _signed(d.delta("self_live_bytes"), nbytes),
        "file": text(d.file),
    }


def render_diff(
    comparison: Comparison,
    console: Console,
    *,
    labels: tuple[str, str],
    top: int | None,
    width: int | None = None,
) -> None:
    """Print the comparison; ``top`` limits the rows (``None``: all), ``width`` picks the
    columns (default: the console's width)."""
    a, b = comparison.a, comparison.b
    console.print(_side_line("A", labels[0], a), soft_wrap=True)
    console.print(_side_line("B", labels[1], b), soft_wrap=True)
    warning = apps_warning(a, b)
    if warning:
        console.print(Text(printable(warning), style="yellow"), soft_wrap=True)
    if a.wall_unit != b.wall_unit:  # pragma: no cover - both come from one option today
        console.print(Text("warning: the two runs use different wall units", style="yellow"))
    summary = (
        f"{count(len(comparison.functions))} functions: {comparison.count('changed')} changed, "
        f"{comparison.count(ADDED)} only in B (new), {comparison.count(REMOVED)} only in A "
        f"(gone), {comparison.count(SAME)} unchanged"
    )
    if comparison.per_second:
        summary += "; figures per second of run"
    console.print(summary, soft_wrap=True, highlight=False)
    rows = comparison.functions if top is None else comparison.functions[:top]
    rows = [d for d in rows if d.status != SAME]
    if not rows:
        console.print("No function changed.")
        return
    shown_width = width if width is not None else console.width
    columns = [(n, j) for n, j, least in COLUMNS if shown_width >= least]
    title = f"By {SORT_TITLES[comparison.sort]} (B - A)"
    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        header = RANK_HEADERS[comparison.sort] if name == "ranked by" else name
        table.add_column(header, justify=justify, no_wrap=True, overflow="ellipsis")
    wall_seconds = 1 / WALL_UNITS[b.wall_unit]
    rate = "/s" if comparison.per_second else ""
    for d in rows:
        cells = _cells(d, wall_seconds, rate, comparison.sort)
        style = "dim" if d.status == REMOVED else ""
        table.add_row(*(cells[name] for name, _ in columns), style=style)
    console.print(table)
    hidden = len(comparison.functions) - len(rows) - comparison.count(SAME)
    if hidden > 0:
        console.print(f"({hidden} more changed; --top 0 shows all)", highlight=False)
