"""Render the ``inspect`` report for a terminal."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT, units_per_second
from rokuprof.units import seconds, size
from rokuprof.views.format import count, timestamp_ms
from rokuprof.views.text import printable, text


def _header_lines(report: dict) -> Text:
    h = report["header"]
    out = Text()
    if h is None:
        out.append("No header could be read.\n", style="bold red")
        return out
    out.append(printable(f"{h['target_name']} {h['target_version']}"), style="bold")
    out.append(printable(f"  on {h['vendor']} {h['model']}, firmware {h['firmware']}") + "\n")
    if h["supplemental"]:
        out.append(printable(h["supplemental"]) + "\n", style="dim")
    flags = [name for name in ("line_data", "memory_ops") if h[name]]
    out.append(
        f"format {h['major']}.{h['minor']}.{h['patch']}, header {h['header_size']} bytes, "
        f"sample ratio {h['requested_sample_ratio']:g} requested / "
        f"{h['actual_sample_ratio']:g} actual, flags: {', '.join(flags) or 'none'}\n"
    )
    start = h["start_ms"]
    footer = report["footer"]
    out.append(f"start {timestamp_ms(start)}")
    if footer:
        end = footer["end_ms"]
        out.append(f", end {timestamp_ms(end)}, duration {seconds((end - start) / 1000)}")
    else:
        out.append(", end unknown (no footer)")
    out.append("\n")
    return out


def _status(report: dict) -> Text:
    if report["complete"]:
        return Text(f"complete: {count(report['bytes'])} bytes", style="green")
    return text(report["problem"] or report["status"], style="bold red")


def _totals(report: dict, wall_seconds: float) -> Table:
    t = report["totals"]
    table = Table.grid(padding=(0, 2))
    table.add_row("entries", count(t["entries"]), "strings", count(t["strings"]))
    table.add_row("modules", count(t["modules"]), "call paths", count(t["paths"]))
    table.add_row(
        "CPU (operations)",
        count(t["cpu"]),
        "wall (self, all threads)",
        seconds(t["wall"] * wall_seconds),
    )
    table.add_row("calls", count(t["calls"]), "", "")
    return table


#: Columns of the functions table, and the narrowest terminal that still shows each one;
#: ``--json`` always has everything.
FUNCTION_COLUMNS = (
    ("function", "left", 0),
    ("module", "left", 0),
    ("self wall", "right", 0),
    ("self %", "right", 90),
    ("total wall", "right", 0),
    ("self CPU", "right", 100),
    ("calls", "right", 0),
    ("file", "left", 120),
)


def _function_cells(f: dict, total_wall: int, wall_seconds: float) -> dict[str, Text | str]:
    return {
        "function": text(f["function"]),
        "module": text(f["module"]),
        "self wall": seconds(f["self_wall"] * wall_seconds),
        "self %": f"{100 * f['self_wall'] / total_wall:.1f}",
        "total wall": seconds(f["total_wall"] * wall_seconds),
        "self CPU": count(f["self_cpu"]),
        "calls": count(f["calls"]),
        "file": text(f["file"]),
    }


def _functions(report: dict, width: int, wall_seconds: float) -> Table:
    total_wall = report["totals"]["wall"] or 1
    columns = [(name, justify) for name, justify, least in FUNCTION_COLUMNS if width >= least]
    table = Table(title="Top functions by self wall time", title_justify="left")
    for name, justify in columns:
        # Names and figures never wrap mid-word; a long file path is shortened with an ellipsis.
        table.add_column(name, justify=justify, no_wrap=name != "file", overflow="ellipsis")
    for f in report["functions"]:
        cells = _function_cells(f, total_wall, wall_seconds)
        table.add_row(*(cells[name] for name, _ in columns))
    return table


def _memory(report: dict) -> Group | Text:
    t = report["totals"]
    if not (t["alloc_count"] or t["free_count"] or t["free_realloc_count"]):
        header = report["header"]
        recorded = header and header["memory_ops"]
        return Text("Memory: no operations" + ("" if recorded else " (not recorded)"))
    lines = Text()
    lines.append("Memory: ", style="bold")
    lines.append(
        f"{count(t['alloc_count'])} allocations ({size(t['alloc_bytes'])}), "
        f"{count(t['free_count'])} frees, {count(t['free_realloc_count'])} realloc frees "
        f"({size(t['freed_bytes'])} freed), {count(t['unknown_frees'])} frees of unknown "
        f"addresses; live at the end: {size(t['live_bytes'])} in {count(t['live_count'])} "
        "allocations\n"
    )
    table = Table(title="Top leak sites (allocations still live)", title_justify="left")
    for name, justify in (
        ("live", "right"),
        ("count", "right"),
        ("module", "left"),
        ("call path (leaf first)", "left"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "call path (leaf first)")
    for site in report["leak_sites"]:
        table.add_row(
            size(site["bytes"]),
            count(site["count"]),
            text(site["module"] or "?"),
            text(" ← ".join(site["stack"])),
        )
    return Group(lines, table)


def render_inspect(report: dict, console: Console, wall_unit: str = DEFAULT_WALL_UNIT) -> None:
    """``report`` (:func:`~rokuprof.profile.report.inspect_report`) on ``console``, its wall
    times read in ``wall_unit`` (``rokuprof.bsprof.wall_unit.WALL_UNITS``)."""
    wall_seconds = 1 / units_per_second(wall_unit)
    console.print(_header_lines(report), end="")
    console.print(_status(report))
    for warning in report["warnings"]:
        console.print(text(f"warning: {warning}", style="yellow"))
    console.print(_totals(report, wall_seconds))
    if report["functions"]:
        console.print(_functions(report, console.width, wall_seconds))
    console.print(_memory(report))
