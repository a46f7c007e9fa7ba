"""Render ``rokuprof inspect TRACE`` (a Perfetto app trace's report) for a terminal."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from rokuprof.units import size
from rokuprof.views.format import count, timestamp_ms
from rokuprof.views.text import printable, text


def _head(r: dict) -> Text:
    out = Text()
    status = "complete" if r["complete"] else (r["error"] or "incomplete")
    out.append(
        f"Perfetto app trace: {size(r['bytes'])}, {count(r['packets'])} packets, "
        f"{count(r['slices'])} slices, {count(r['flows'])} flows",
        style="bold",
    )
    out.append("\n")
    out.append_text(text(status, style="green" if r["complete"] else "bold red"))
    out.append("\n")
    if r["span_ms"] is not None:
        start = f", from {timestamp_ms(int(r['start_unix_ms']))}" if r["start_unix_ms"] else ""
        out.append(f"spans {r['span_ms']:,.1f} ms{start}\n")
    out.append("threads: " + printable(", ".join(r["threads"]) or "none") + "\n")
    for problem in r["problems"]:
        out.append_text(text(f"problem: {problem}", style="yellow"))
        out.append("\n")
    losses = [
        (r["lost_chunks"], "chunks lost by the tracing service"),
        (r["loss_marks"], "packets after a loss"),
        (r["skipped_packets"], "packets skipped (their names were never sent)"),
        (r["unmatched_ends"], "slice ends with nothing open"),
        (r["unfinished"], "slices still open at the end (never summed)"),
    ]
    for n, what in losses:
        if n:
            out.append(f"{count(n)} {what}\n", style="yellow")
    return out


def _frames(r: dict) -> Text:
    f = r["frames"]
    out = Text("frames: ", style="bold")
    if not f["frames"]:
        out.append("no swapBuffers in this trace\n")
        return out
    out.append(
        f"{count(f['frames'])} swaps, {count(f['over_budget'])} of {count(f['intervals'])} "
        f"intervals over 16.7 ms, {count(f['missed'])} missed "
        f"({count(f['missed_by_two'])} by two budgets, worst {f['worst_ms']:.1f} ms), "
        f"{count(f['slow_swaps'])} slow swaps\n"
    )
    for m in r["missed_frames"][:10]:
        at, interval = m["start_ms"], m["interval_ms"]
        out.append(f"  missed at +{at:,.1f} ms: {interval:.1f} ms, {m['cause']}\n")
    return out


def _table(
    title: str, columns: list[str], rows: list[list[str]], text_columns: int = 1
) -> Table | Text:
    if not rows:
        return Text(f"{title}: none\n")
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for i, c in enumerate(columns):
        table.add_column(c, justify="left" if i < text_columns else "right", overflow="fold")
    for row in rows:
        table.add_row(*(printable(cell) for cell in row))
    return table


def render_trace(r: dict, console: Console) -> None:
    """The report as text: the same figures as ``--json``."""
    o = r["observers"]
    args = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in r["args"].items())
    parts = [
        _head(r),
        _frames(r),
        _table(
            "rendezvous",
            ["thread", "field", "count", "blocked ms", "max latency ms", "max exec ms"],
            [
                [
                    x["thread"],
                    x["field"],
                    count(x["count"]),
                    f"{x['total_ms']:.3f}",
                    f"{x['max_latency_ms']:.3f}",
                    f"{x['max_exec_ms']:.3f}",
                ]
                for x in r["rendezvous"][:15]
            ],
            text_columns=2,
        ),
        Text(
            f"observers: {count(o['count'])}, outermost {o['outermost_ms']:.3f} ms "
            f"(all nested {o['naive_ms']:.3f} ms), deepest cascade {o['max_depth']}\n"
        ),
        _table(
            "script (ExecBrightScript by call stack)",
            ["call stack", "slices", "wall ms", "cpu ms", "state"],
            [
                [
                    x["callstack"],
                    count(x["slices"]),
                    f"{x['wall_ms']:.3f}",
                    "-" if x["cpu_ms"] is None else f"{x['cpu_ms']:.3f}",
                    x["state"],
                ]
                for x in r["script"][:15]
            ],
        ),
        _table(
            "repeated reads",
            ["field", "longest run"],
            [[x["field"], count(x["run"])] for x in r["repeated_reads"][:10]],
        ),
        Text(
            f"network requests {count(r['network'])}, key events {count(r['key_events'])}; "
            f"arguments: {args}\n"
        ),
    ]
    console.print(Group(*parts))
