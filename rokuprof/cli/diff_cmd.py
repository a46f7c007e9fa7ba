"""``rokuprof diff A B``: what changed between two captures of the same app, per function."""

from __future__ import annotations

from dataclasses import dataclass
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
    from rokuprof.workflows.errors import Stop
    from rokuprof.workflows.series_load import series_paths

    follow_umask()  # a command-line tool's files: the user's umask decides
    if a == STDIN and b == STDIN:
        exits.fail("only one of A and B can be standard input (-)")
    for path in (html, summary, junit):
        if path is not None and (problem := output_file_problem(path)) is not None:
            exits.fail(problem)
    rules = Rules(
        fail_over=DEFAULT_RULES.fail_over if fail_over is None else fail_over,
        counter_over=counter_over,
        min_effect=min_effect,
        alpha=alpha,
        min_share=min_share,
    )
    try:
        sides = [series_paths(a), series_paths(b)]
    except Stop as stop:
        exits.fail(stop, stop.status)
    outputs = _Outputs(as_json, html, summary, junit, top or None)
    if len(sides[0]) > 1 or len(sides[1]) > 1:
        status = _diff_series(
            a, b, rules, fail_over is not None, outputs, wall_unit.value, per_second, sort.value
        )
    else:
        status = _diff_two(
            a, b, rules, fail_over is not None, outputs, wall_unit.value, per_second, sort.value
        )
    raise typer.Exit(status)


@dataclass(frozen=True)
class _Outputs:
    as_json: bool
    html: Path | None
    summary: Path | None
    junit: Path | None
    top: int | None


def _diff_two(
    a: str,
    b: str,
    rules: Rules,
    enforce: bool,
    outputs: _Outputs,
    wall_unit: str,
    per_second: bool,
    sort: str,
) -> int:
    """One capture against one: the table of every figure's change, then the verdicts."""
    from rokuprof.cli.layout import load_aggregates, load_capture
    from rokuprof.export.diff import compare
    from rokuprof.verdict.judge import judge_models
    from rokuprof.verdict.series import Series, run_of
    from rokuprof.verdict.summary import fail_over_json, page_verdict
    from rokuprof.views.diff_view import render_diff
    from rokuprof.views.verdict_view import say_judgements
    from rokuprof.workflows.gate import gate_status
    from rokuprof.workflows.trace_gate import compare_sessions, say_trace

    err = stderr_console()
    sources: list[CaptureSource] = []
    for arg in (a, b):
        try:
            sources.append(open_capture(arg))
        except CaptureInputError as exc:
            for opened in sources:
                opened.stream.close()
            exits.fail(exc)
    load = load_aggregates if outputs.html is None else load_capture  # only the page draws
    inputs = [load(source, err, wall_unit) for source in sources]
    labels = (sources[0].label, sources[1].label)
    comparison = compare(inputs[0], inputs[1], per_second=per_second, sort=sort)
    judgements = judge_models(
        Series(labels[0], (run_of(inputs[0], labels[0]),)),
        Series(labels[1], (run_of(inputs[1], labels[1]),)),
        rules,
    )
    traces = compare_sessions(sources[0].session, sources[1].session)
    trace_over = rules.fail_over if enforce else None
    failed_trace = traces.regressions(trace_over) if traces and trace_over is not None else []

    if outputs.as_json:
        report = comparison.to_json(outputs.top)
        report["a"]["input"], report["b"]["input"] = labels
        report["verdicts"] = {model: j.to_json() for model, j in judgements.items()}
        if enforce:
            report["fail_over"] = fail_over_json(rules, judgements)
        if traces is not None:
            report["trace"] = traces.to_json(trace_over)
        print_json(report)
    else:
        out = stdout_console()
        render_diff(comparison, out, labels=labels, top=outputs.top)
        out.print("")
        say_judgements(out, judgements, enforce=enforce, fail_over=rules.fail_over)
        if traces is not None:
            say_trace(out, traces, trace_over)
    _ci_files(outputs, judgements)
    if outputs.html is not None:
        from rokuprof.export.report.diff_model import diff_page

        verdict = page_verdict(judgements, rules) if enforce else None
        trace = None if traces is None else {**traces.to_json(trace_over), "lines": traces.lines()}
        page = diff_page(
            inputs[0], inputs[1], comparison, labels, verdict, trace,
            judgements={model: j.to_json() for model, j in judgements.items()},
        )  # fmt: skip
        _write_html(outputs.html, page)
        err.print(f"A/B page: {printable(outputs.html)}", markup=False, soft_wrap=True)
    for source, inp in zip(sources, inputs, strict=True):
        if inp.run.problem:
            exits.warn(f"{source.label}: {inp.run.problem}; compared what was read")
    if enforce:
        status = gate_status(judgements)
        if status == exits.OK and failed_trace:
            status = EXIT_REGRESSION
        if status != exits.OK:
            return status
    if any(inp.run.problem for inp in inputs):
        return exits.INCOMPLETE
    return exits.OK


def _diff_series(
    a: str,
    b: str,
    rules: Rules,
    enforce: bool,
    outputs: _Outputs,
    wall_unit: str,
    per_second: bool = False,
    sort: str = "change",
) -> int:
    """A series on either side: each run decoded, the spreads and the verdicts; with ``--html``
    the A/B page of one representative run of each side (``Series.representative``) with the
    verdicts of every run."""
    from rokuprof.verdict.judge import judge_models
    from rokuprof.verdict.summary import fail_over_json
    from rokuprof.views.verdict_view import say_judgements, say_spread
    from rokuprof.workflows.errors import Stop
    from rokuprof.workflows.gate import gate_status
    from rokuprof.workflows.series_load import load_series
    from rokuprof.workflows.series_record import series_json

    load = _series_loader(wall_unit)
    try:
        series_a, series_b = load_series(a, load), load_series(b, load)
    except Stop as stop:
        exits.fail(stop, stop.status)
    judgements = judge_models(series_a, series_b, rules)
    if outputs.as_json:
        print_json(
            {
                "a": series_json(series_a, None, None, []),
                "b": series_json(series_b, None, None, []),
                "verdicts": {model: j.to_json() for model, j in judgements.items()},
                **({"fail_over": fail_over_json(rules, judgements)} if enforce else {}),
            }
        )
    else:
        out = stdout_console()
        for label, series in ((a, series_a), (b, series_b)):
            if len(series.runs) > 1:
                out.print(f"{printable(label)}:", markup=False, highlight=False)
                say_spread(out, series)
                out.print("")
        say_judgements(out, judgements, enforce=enforce, fail_over=rules.fail_over)
    _ci_files(outputs, judgements)
    if outputs.html is not None:
        _series_page(
            (a, b), (series_a, series_b), judgements, rules, enforce, outputs.html, wall_unit,
            per_second, sort,
        )  # fmt: skip
    return gate_status(judgements) if enforce else exits.OK


def _series_page(
    args: tuple[str, str],
    sides: tuple,
    judgements: dict,
    rules: Rules,
    enforce: bool,
    html: Path,
    wall_unit: str,
    per_second: bool,
    sort: str,
) -> None:
    """``--html`` with a series on a side: the A/B page drawn from one run of each side (the
    run of the median total self wall, ``Series.representative``), its verdicts those of every
    run; the page's subtitle and a line on stderr say which runs."""
    from rokuprof.cli.layout import load_capture
    from rokuprof.export.diff import compare
    from rokuprof.export.report.diff_model import diff_page
    from rokuprof.verdict.summary import page_verdict
    from rokuprof.workflows.series_load import series_paths

    err = stderr_console()
    inputs, labels, drawn = [], [], []
    for arg, series in zip(args, sides, strict=True):
        index = series.representative()
        name = series_paths(arg)[index]  # the runs are loaded in this order
        try:
            source = open_capture(name)
        except CaptureInputError as exc:
            exits.fail(exc)
        inputs.append(load_capture(source, err, wall_unit))
        labels.append(source.label)
        n = len(series.runs)
        drawn.append(
            None if n < 2 else {"input": arg, "run": source.label, "index": index + 1, "runs": n}
        )
    comparison = compare(inputs[0], inputs[1], per_second=per_second, sort=sort)
    page = diff_page(
        inputs[0], inputs[1], comparison, (labels[0], labels[1]),
        page_verdict(judgements, rules) if enforce else None,
        judgements={model: j.to_json() for model, j in judgements.items()},
        series=(drawn[0], drawn[1]),
    )  # fmt: skip
    _write_html(html, page)
    which = "; ".join(
        f"{side} drawn from run {s['run']} ({s['index']} of {s['runs']}, the median total self "
        "wall)"
        for side, s in zip("AB", drawn, strict=True)
        if s is not None
    )
    err.print(
        f"A/B page: {printable(html)} ({printable(which)}; the verdicts judge every run)",
        markup=False,
        soft_wrap=True,
    )


def _series_loader(wall_unit: str):
    from rokuprof.cli.layout import load_aggregates
    from rokuprof.workflows.errors import Stop

    err = stderr_console()

    def load(name: str, quiet: bool):
        try:
            source = open_capture(name)
        except CaptureInputError as error:
            raise Stop(error) from None
        return load_aggregates(source, err, wall_unit), source.label

    return load


def _ci_files(outputs: _Outputs, judgements: dict) -> None:
    from rokuprof.store.files import append_text, write_atomic
    from rokuprof.verdict.summary import junit, markdown

    if outputs.summary is not None:
        try:
            append_text(outputs.summary, markdown(judgements) + "\n")
        except OSError as exc:
            exits.fail(
                f"cannot write {outputs.summary}: {exc.strerror or exc}", status=exits.FAILED
            )
    if outputs.junit is not None:
        try:
            write_atomic(outputs.junit, junit(judgements))
        except OSError as exc:
            exits.fail(f"cannot write {outputs.junit}: {exc.strerror or exc}", status=exits.FAILED)


def _write_html(path: Path, page: bytes) -> None:
    from rokuprof.store.files import write_atomic

    try:
        write_atomic(path, page)
    except OSError as exc:
        exits.fail(f"cannot write {path}: {exc.strerror or exc}", status=exits.FAILED)
