"""``rokuprof diff A B``: what changed between two captures of the same app, per function."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.chunk_options import DEFAULT_UNIT, WallUnitOption
from rokuprof.cli.inputs import STDIN, CaptureInputError, CaptureSource, open_capture
from rokuprof.cli.options import MinShareOption, capture_argument, fail_over_option
from rokuprof.cli.output import print_json, stderr_console, stdout_console
from rokuprof.cli.root import app
from rokuprof.export_names import SORT_KEYS
from rokuprof.store.files import follow_umask
from rokuprof.views.text import printable

if TYPE_CHECKING:
    pass

SortKey = StrEnum("SortKey", {key: key for key in SORT_KEYS})

#: ``--fail-over`` found a function whose self wall grew more than allowed (for CI).
EXIT_REGRESSION = exits.FAILED

HELP = """Compare two captures of the same app (two runs, two builds), function by function.

A is the baseline, B the run to judge; each is a .bsprof file, `-` (standard input, for one of
them) or a session directory. Functions are keyed as `inspect` keys them (module, function,
file). For each: the change in self and total wall time and CPU, calls, allocated bytes and
bytes still live at the end, and whether it is only in A (gone) or only in B (new).

Rows are ordered by the largest change of a function's own (self) figures as a share of the
run's total of that figure, so a function made slower, added, removed or leaking comes first,
not its callers; `--sort` orders by one figure's absolute change instead. `--per-second`
divides every figure by its run's length (footer time minus header time; without a footer, the
busiest thread's busy time), for runs of different lengths.

`--json` prints every figure: `{"per_second", "sort", "a": run, "b": run, "summary",
"functions": [...]}`, a run being `{"app", "app_version", "status", "problem", "seconds",
"timing", "wall_unit", "functions", "totals"}` and a function `{"module", "function", "file",
"status": changed|same|added|removed, "score", "self_wall_growth_pct", "a", "b", "delta"}` with
figures `self_wall`, `total_wall`, `self_cpu`, `total_cpu`, `calls`, `self_alloc_bytes`,
`total_alloc_bytes`, `self_live_bytes`, `total_live_bytes` (wall in the stream's wall unit;
`a`/`b` null where the function is missing); `"lines"`: per source line of a function's own
code `{"module", "function", "file", "line", "status", "a", "b", "delta", "growth_pct"}` with
figures `cpu`, `wall`; `"leak_sites"`: per call path that left memory live at the end
`{"module", "path": [{"function", "file"}, ...] (root first), "status", "a", "b", "delta",
"growth_pct"}` with figures `live_bytes`, `live_count` (`--top` limits each list); plus
`"fail_over"` with `--fail-over`.

`--html FILE` writes an A/B page (the report's page, one self-contained file): first the
`--fail-over` verdict and the top regressions and improvements, then per function, line and
leak site A, B, Δ and Δ% (the figures `--json` prints, per second with `--per-second`), a call
tree of both runs, and B's flame graph coloured by how each frame's total changed (new, grown,
shrunk, on a scale); its title names both captures.

Exit status: 0 compared; 1 `--fail-over` found a function whose self wall grew by more than
PCT percent (it says which, by how much and by how many seconds; this wins over 3), or `--html`
could not be written; 2 bad usage or a problem found before any work started (an input missing,
unreadable or not a .bsprof, both inputs `-`, an `--html` file that cannot be written; nothing
is written); 3 an input was incomplete or corrupt (what was read is compared, and a line on
stderr says what is missing)."""


@app.command(name="diff", help=HELP)
def diff_command(
    a: Annotated[
        str,
        capture_argument("A", "Baseline: a .bsprof file, `-` (standard input) or a session dir."),
    ],
    b: Annotated[
        str, capture_argument("B", "The run to judge: a .bsprof file, `-` or a session directory.")
    ],
    as_json: Annotated[
        bool, typer.Option("-j", "--json", help="Print every figure as JSON.")
    ] = False,
    top: Annotated[
        int,
        typer.Option(metavar="N", min=0, help="How many functions to list (0: all)."),
    ] = 25,
    sort: Annotated[
        SortKey,
        typer.Option(
            help="Order by the largest change of a function's own figures as a share of the "
            "run (`change`), or by one figure's absolute change."
        ),
    ] = SortKey.change,
    per_second: Annotated[
        bool,
        typer.Option("--per-second", help="Divide each run's figures by its run length."),
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Also write an A/B page: A, B and the change per function, line, leak site and "
            "call path, and B's flame graph coloured by change.",
        ),
    ] = None,
    fail_over: Annotated[
        float | None,
        fail_over_option(
            "Exit 1 when a function's self wall grew by more than PCT percent "
            "(one only in B counts as grown without bound)."
        ),
    ] = None,
    min_share: MinShareOption = 1.0,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
) -> None:
    """Compare two captures (see HELP)."""
    from rokuprof.cli.layout import load_aggregates, load_capture
    from rokuprof.export.diff import compare, regressions
    from rokuprof.export.diff_summary import gate_verdict
    from rokuprof.views.diff_view import render_diff
    from rokuprof.workflows.gate import say_regressions  # the command's, not its help's
    from rokuprof.workflows.trace_gate import compare_sessions, say_trace

    err = stderr_console()
    follow_umask()  # a command-line tool's files: the user's umask decides
    if a == STDIN and b == STDIN:
        exits.fail("only one of A and B can be standard input (-)")
    if html is not None:
        _check_output(html)
    sources: list[CaptureSource] = []
    for arg in (a, b):
        try:
            sources.append(open_capture(arg))
        except CaptureInputError as exc:
            for opened in sources:
                opened.stream.close()
            exits.fail(exc)
    load = load_aggregates if html is None else load_capture  # only the page draws timelines
    inputs = [load(source, err, wall_unit.value) for source in sources]
    comparison = compare(inputs[0], inputs[1], per_second=per_second, sort=sort.value)
    failed = regressions(comparison, fail_over, min_share) if fail_over is not None else []
    traces = compare_sessions(sources[0].session, sources[1].session)
    failed_trace = traces.regressions(fail_over) if traces and fail_over is not None else []
    labels = (sources[0].label, sources[1].label)
    shown = top or None

    if as_json:
        report = comparison.to_json(shown)
        report["a"]["input"], report["b"]["input"] = labels
        if fail_over is not None:
            report["fail_over"] = {
                "pct": fail_over,
                "min_share_pct": min_share,
                "failed": [
                    {"module": d.module, "function": d.function, "file": d.file} for d in failed
                ],
            }
        if traces is not None:
            report["trace"] = traces.to_json(fail_over)
        print_json(report)
    else:
        out = stdout_console()
        render_diff(comparison, out, labels=labels, top=shown)
        if fail_over is not None:
            say_regressions(out, comparison, failed, fail_over, min_share)
        if traces is not None:
            say_trace(out, traces, fail_over)

    if html is not None:
        from rokuprof.export.report.diff_model import diff_page

        verdict = gate_verdict(comparison, failed, fail_over) if fail_over is not None else None
        trace = None if traces is None else {**traces.to_json(fail_over), "lines": traces.lines()}
        page = diff_page(inputs[0], inputs[1], comparison, labels, verdict, trace)
        _write_html(html, page)
        err.print(f"A/B page: {printable(html)}", markup=False, soft_wrap=True)
    for source, inp in zip(sources, inputs, strict=True):
        if inp.run.problem:
            exits.warn(f"{source.label}: {inp.run.problem}; compared what was read")
    if failed or failed_trace:
        raise typer.Exit(EXIT_REGRESSION)
    if any(inp.run.problem for inp in inputs):
        raise typer.Exit(exits.INCOMPLETE)
    raise typer.Exit(exits.OK)


def _check_output(path: Path) -> None:
    """``--html``: fail before any work when the file could not be written."""
    if path.is_dir():
        exits.fail(f"cannot write {path}: it is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        exits.fail(f"cannot write {path}: no directory {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        exits.fail(f"cannot write {path}: {parent} is not writable")


def _write_html(path: Path, page: bytes) -> None:
    from rokuprof.store.files import write_atomic

    try:
        write_atomic(path, page)
    except OSError as exc:
        exits.fail(f"cannot write {path}: {exc.strerror or exc}", status=exits.FAILED)
