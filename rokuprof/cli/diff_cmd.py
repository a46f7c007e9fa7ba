"""``rokuprof diff A B``: what changed between two captures of the same app, per function."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.chunk_options import DEFAULT_UNIT, WallUnitOption
from rokuprof.cli.inputs import STDIN, CaptureInputError, CaptureSource, open_capture
from rokuprof.cli.options import (
    AlphaOption,
    CounterOverOption,
    JunitOption,
    MinEffectOption,
    MinShareOption,
    SummaryOption,
    capture_argument,
    fail_over_option,
)
from rokuprof.cli.output import print_json, stderr_console, stdout_console
from rokuprof.cli.root import app
from rokuprof.export_names import SORT_KEYS
from rokuprof.store.files import follow_umask
from rokuprof.store.writable import output_file_problem
from rokuprof.verdict.rules import DEFAULT_RULES, Rules

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rokuprof.workflows.diff import LoadAll, Loaded

SortKey = StrEnum("SortKey", {key: key for key in SORT_KEYS})

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
`"verdicts"`; `"fail_over"` with `--fail-over`.

`--html FILE` writes an A/B page (the report's page, one self-contained file): first the
`--fail-over` verdict, the verdicts (each not `same`, with both sides' spread across runs)
and the top regressions and improvements, then per function, line and
leak site A, B, Δ and Δ% (the figures `--json` prints, per second with `--per-second`), a call
tree of both runs, and B's flame graph coloured by how each frame's total changed (new, grown,
shrunk, on a scale); its title names both captures.

Then the verdicts, per function and figure (CPU operations, self wall time, allocated and
live bytes): `regressed`, `improved`, `same` or `unknown`, each explained in one line (see
docs/verdicts.md). A or B may also be a directory of sessions (a series, such as `profile
--repeat` writes): each run is decoded, the spread across runs printed and the two
distributions judged (`--html` draws the run of each series whose total self wall is its
median, and shows the verdicts of every run). `--json` adds `"verdicts"` per device
model; `--summary FILE` appends them as Markdown, `--junit FILE` writes JUnit XML.

Exit status: 0 compared (with `--fail-over`: no verdict regressed or unknown); 1 with
`--fail-over` a verdict is regressed (this wins over 3), or `--html` could not be written; 2
bad usage or a problem found before any work started (an input missing, unreadable or not a
.bsprof, both inputs `-`, an output file that cannot be written; nothing is written); 3 an
input was incomplete or corrupt (what was read is compared, and a line on stderr says what is
missing); 4 with `--fail-over` no verdict regressed but one is unknown (run more: a series on
each side)."""


@app.command(name="diff", help=HELP)
def diff_command(
    a: Annotated[
        str,
        capture_argument(
            "A", "Baseline: a .bsprof file, `-`, a session dir or a directory of sessions."
        ),
    ],
    b: Annotated[
        str,
        capture_argument(
            "B", "The run(s) to judge: a .bsprof file, `-`, a session or a directory of sessions."
        ),
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
            "The exit status follows the verdicts (1 regressed, 4 unknown); a wall time or "
            f"byte figure must change by more than PCT percent to count (default "
            f"{DEFAULT_RULES.fail_over:g})."
        ),
    ] = None,
    counter_over: CounterOverOption = DEFAULT_RULES.counter_over,
    min_effect: MinEffectOption = DEFAULT_RULES.min_effect,
    alpha: AlphaOption = DEFAULT_RULES.alpha,
    min_share: MinShareOption = DEFAULT_RULES.min_share,
    summary: SummaryOption = None,
    junit: JunitOption = None,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
) -> None:
    """Compare two captures (see HELP)."""
    from rokuprof.workflows.diff import Judging, Loaders, Outputs, Printers, run_diff
    from rokuprof.workflows.errors import Stop

    follow_umask()  # a command-line tool's files: the user's umask decides
    if a == STDIN and b == STDIN:
        exits.fail("only one of A and B can be standard input (-)")
    for path in (html, summary, junit):
        if path is not None and (problem := output_file_problem(path)) is not None:
            exits.fail(problem)
    rules = Rules.from_options(fail_over, counter_over, min_effect, alpha, min_share)
    judging = Judging(rules, fail_over is not None, per_second, sort.value)
    outputs = Outputs(as_json, html, summary, junit, top or None)
    loaders = Loaders(_loader(wall_unit.value, False), _loader(wall_unit.value, True))
    printers = Printers(stdout_console(), stderr_console(), print_json, exits.warn)
    try:
        status = run_diff(a, b, judging, outputs, loaders, printers)
    except Stop as stop:
        exits.fail(stop, stop.status)
    raise typer.Exit(status)


def _loader(wall_unit: str, laid_out: bool) -> LoadAll:
    """How ``diff`` opens the captures it is given by name: every one opened (the magic
    checked) before any is decoded, the tables only or (``laid_out``, for the page) with the
    timeline, with progress on a terminal."""

    def load(names: Sequence[str]) -> list[Loaded]:
        from rokuprof.cli.layout import load_aggregates, load_capture
        from rokuprof.workflows.errors import Stop

        sources: list[CaptureSource] = []
        for name in names:
            try:
                sources.append(open_capture(name))
            except CaptureInputError as exc:
                for opened in sources:
                    opened.stream.close()
                raise Stop(exc) from None
        read = load_capture if laid_out else load_aggregates
        err = stderr_console()
        return [(read(source, err, wall_unit), source.label, source.session) for source in sources]

    return load
