"""``rokuprof diff A B`` end to end: one capture against one (every figure's change, then the
verdicts and the app traces' gate) or a series on either side (each run decoded, the spreads
and the verdicts), and the files it writes (the A/B page, CI's Markdown and JUnit).

How a capture given by name is opened and decoded (with progress on a terminal) is the
caller's: it hands in :class:`Loaders`. Whatever stops the command early is a
:class:`~rokuprof.workflows.errors.Stop`; otherwise :func:`run_diff` returns the exit status.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from rokuprof.exit_status import FAILED, INCOMPLETE, OK
from rokuprof.export.aggregate import AnyInput
from rokuprof.verdict.judge import Judgement, judge_models
from rokuprof.verdict.rules import Rules
from rokuprof.verdict.series import Series
from rokuprof.verdict.summary import fail_over_json, page_verdict
from rokuprof.views.text import printable
from rokuprof.workflows.errors import Stop
from rokuprof.workflows.gate import gate_status
from rokuprof.workflows.series_load import LoadOne, series_paths

if TYPE_CHECKING:  # only named: the one-against-one path imports them when it runs
    from rokuprof.export.diff import Comparison
    from rokuprof.trace.compare import TraceComparison

#: ``--fail-over`` found a function whose self wall grew more than allowed (for CI).
EXIT_REGRESSION = FAILED

#: A capture opened and decoded: ``(capture, how messages name it, its session directory)``.
Loaded = tuple[AnyInput, str, Path | None]
#: Opens every capture named (all of them before decoding any; :class:`Stop` if one cannot be
#: opened), then decodes each, in order.
LoadAll = Callable[[Sequence[str]], list[Loaded]]


@dataclass(frozen=True)
class Loaders:
    """How the captures are read: ``aggregates`` decodes the tables only (what the verdicts
    and the table compare); ``laid_out`` lays out the timeline too (what the A/B page draws)."""

    aggregates: LoadAll
    laid_out: LoadAll


@dataclass(frozen=True)
class Outputs:
    """What the command writes besides the terminal's text: ``--json``, ``--html``,
    ``--summary``, ``--junit``; ``top`` functions listed (``None``: all)."""

    as_json: bool
    html: Path | None
    summary: Path | None
    junit: Path | None
    top: int | None


@dataclass(frozen=True)
class Judging:
    """How the runs are compared: the verdicts' rules, whether ``--fail-over`` decides the exit
    status (``enforce``), the table's ``--per-second`` and ``--sort``."""

    rules: Rules
    enforce: bool
    per_second: bool = False
    sort: str = "change"


@dataclass(frozen=True)
class Printers:
    """Where the command speaks: the text on ``out``, progress and notes on ``err``, ``--json``
    through ``print_json``, warnings through ``warn``."""

    out: Console
    err: Console
    print_json: Callable[[object], None]
    warn: Callable[[object], None]


def run_diff(
    a: str, b: str, judging: Judging, outputs: Outputs, loaders: Loaders, printers: Printers
) -> int:
    """Compare A (the baseline) with B and return the exit status (see the command's help)."""
    sides = [series_paths(a), series_paths(b)]
    if len(sides[0]) > 1 or len(sides[1]) > 1:
        return diff_series(a, b, judging, outputs, loaders, printers)
    return diff_two(a, b, judging, outputs, loaders, printers)


def diff_two(
    a: str, b: str, judging: Judging, outputs: Outputs, loaders: Loaders, printers: Printers
) -> int:
    """One capture against one: the table of every figure's change, then the verdicts."""
    from rokuprof.export.diff import compare
    from rokuprof.verdict.series import run_of
    from rokuprof.workflows.trace_gate import compare_sessions

    load = loaders.aggregates if outputs.html is None else loaders.laid_out  # only the page draws
    (input_a, label_a, session_a), (input_b, label_b, session_b) = load([a, b])
    inputs, labels = (input_a, input_b), (label_a, label_b)
    comparison = compare(input_a, input_b, per_second=judging.per_second, sort=judging.sort)
    judgements = judge_models(
        Series(label_a, (run_of(input_a, label_a),)),
        Series(label_b, (run_of(input_b, label_b),)),
        judging.rules,
    )
    traces = compare_sessions(session_a, session_b)
    trace_over = judging.rules.fail_over if judging.enforce else None
    if outputs.as_json:
        printers.print_json(_two_json(comparison, labels, judgements, traces, judging, outputs))
    else:
        _say_two(printers.out, comparison, labels, judgements, traces, judging, outputs.top)
    _ci_files(outputs, judgements)
    if outputs.html is not None:
        _two_page(inputs, comparison, labels, judgements, traces, judging, outputs.html)
        printers.err.print(f"A/B page: {printable(outputs.html)}", markup=False, soft_wrap=True)
    for label, inp in zip(labels, inputs, strict=True):
        if inp.run.problem:
            printers.warn(f"{label}: {inp.run.problem}; compared what was read")
    return _two_status(inputs, judgements, traces, trace_over)


def _two_json(
    comparison: Comparison,
    labels: tuple[str, str],
    judgements: dict[str, Judgement],
    traces: TraceComparison | None,
    judging: Judging,
    outputs: Outputs,
) -> dict:
    """``--json`` of one capture against one: every figure, the verdicts, the traces' gate."""
    report = comparison.to_json(outputs.top)
    report["a"]["input"], report["b"]["input"] = labels
    report["verdicts"] = {model: j.to_json() for model, j in judgements.items()}
    if judging.enforce:
        report["fail_over"] = fail_over_json(judging.rules, judgements)
    if traces is not None:
        report["trace"] = traces.to_json(judging.rules.fail_over if judging.enforce else None)
    return report


def _say_two(
    out: Console,
    comparison: Comparison,
    labels: tuple[str, str],
    judgements: dict[str, Judgement],
    traces: TraceComparison | None,
    judging: Judging,
    top: int | None,
) -> None:
    """The terminal's text of one capture against one: the table, the verdicts, the traces."""
    from rokuprof.views.diff_view import render_diff
    from rokuprof.views.verdict_view import say_judgements
    from rokuprof.workflows.trace_gate import say_trace

    render_diff(comparison, out, labels=labels, top=top)
    out.print("")
    rules = judging.rules
    say_judgements(out, judgements, enforce=judging.enforce, fail_over=rules.fail_over)
    if traces is not None:
        say_trace(out, traces, rules.fail_over if judging.enforce else None)


def _two_page(
    inputs: tuple[AnyInput, AnyInput],
    comparison: Comparison,
    labels: tuple[str, str],
    judgements: dict[str, Judgement],
    traces: TraceComparison | None,
    judging: Judging,
    html: Path,
) -> None:
    """``--html`` of one capture against one: the A/B page, with the gate's verdict first."""
    from rokuprof.export.report.diff_model import diff_page

    trace_over = judging.rules.fail_over if judging.enforce else None
    verdict = page_verdict(judgements, judging.rules) if judging.enforce else None
    trace = None if traces is None else {**traces.to_json(trace_over), "lines": traces.lines()}
    page = diff_page(
        inputs[0], inputs[1], comparison, labels, verdict, trace,
        judgements={model: j.to_json() for model, j in judgements.items()},
    )  # fmt: skip
    _write_html(html, page)


def _two_status(
    inputs: tuple[AnyInput, AnyInput],
    judgements: dict[str, Judgement],
    traces: TraceComparison | None,
    trace_over: float | None,
) -> int:
    """The exit status: with ``--fail-over`` the verdicts' (the traces' gate adds a regression),
    else incomplete when an input was, else 0."""
    if trace_over is not None:
        failed_trace = traces.regressions(trace_over) if traces else []
        status = gate_status(judgements)
        if status == OK and failed_trace:
            status = EXIT_REGRESSION
        if status != OK:
            return status
    if any(inp.run.problem for inp in inputs):
        return INCOMPLETE
    return OK


def diff_series(
    a: str, b: str, judging: Judging, outputs: Outputs, loaders: Loaders, printers: Printers
) -> int:
    """A series on either side: each run decoded, the spreads and the verdicts; with ``--html``
    the A/B page of one representative run of each side (``Series.representative``) with the
    verdicts of every run."""
    from rokuprof.views.verdict_view import say_judgements, say_spread
    from rokuprof.workflows.series_load import load_series
    from rokuprof.workflows.series_record import series_json

    load = _load_one(loaders.aggregates)
    series_a, series_b = load_series(a, load), load_series(b, load)
    rules, enforce = judging.rules, judging.enforce
    judgements = judge_models(series_a, series_b, rules)
    if outputs.as_json:
        printers.print_json(
            {
                "a": series_json(series_a, None, None, []),
                "b": series_json(series_b, None, None, []),
                "verdicts": {model: j.to_json() for model, j in judgements.items()},
                **({"fail_over": fail_over_json(rules, judgements)} if enforce else {}),
            }
        )
    else:
        out = printers.out
        for label, series in ((a, series_a), (b, series_b)):
            if len(series.runs) > 1:
                out.print(f"{printable(label)}:", markup=False, highlight=False)
                say_spread(out, series)
                out.print("")
        say_judgements(out, judgements, enforce=enforce, fail_over=rules.fail_over)
    _ci_files(outputs, judgements)
    if outputs.html is not None:
        sides = (series_a, series_b)
        _series_page((a, b), sides, judgements, judging, outputs.html, loaders, printers.err)
    return gate_status(judgements) if enforce else OK


def _load_one(load_all: LoadAll) -> LoadOne:
    """A series' runs, one at a time, as :func:`~rokuprof.workflows.series_load.load_series`
    asks for them: ``(capture, label)``."""

    def load(name: str, quiet: bool) -> tuple[AnyInput, str]:
        inp, label, _ = load_all([name])[0]
        return inp, label

    return load


def _series_page(
    args: tuple[str, str],
    sides: tuple[Series, Series],
    judgements: dict[str, Judgement],
    judging: Judging,
    html: Path,
    loaders: Loaders,
    err: Console,
) -> None:
    """``--html`` with a series on a side: the A/B page drawn from one run of each side (the
    run of the median total self wall, ``Series.representative``), its verdicts those of every
    run; the page's subtitle and a line on stderr say which runs."""
    from rokuprof.export.diff import compare
    from rokuprof.export.report.diff_model import diff_page

    inputs, labels, drawn = [], [], []
    for arg, series in zip(args, sides, strict=True):
        index = series.representative()
        name = series_paths(arg)[index]  # the runs are loaded in this order
        inp, label, _ = loaders.laid_out([name])[0]
        inputs.append(inp)
        labels.append(label)
        n = len(series.runs)
        drawn.append(None if n < 2 else {"input": arg, "run": label, "index": index + 1, "runs": n})
    comparison = compare(inputs[0], inputs[1], per_second=judging.per_second, sort=judging.sort)
    page = diff_page(
        inputs[0], inputs[1], comparison, (labels[0], labels[1]),
        page_verdict(judgements, judging.rules) if judging.enforce else None,
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


def _ci_files(outputs: Outputs, judgements: dict[str, Judgement]) -> None:
    """``--summary`` (the verdicts as Markdown, appended) and ``--junit`` (JUnit XML)."""
    from rokuprof.store.files import append_text, write_atomic
    from rokuprof.verdict.summary import junit, markdown

    if outputs.summary is not None:
        try:
            append_text(outputs.summary, markdown(judgements) + "\n")
        except OSError as exc:
            raise Stop(f"cannot write {outputs.summary}: {exc.strerror or exc}", FAILED) from None
    if outputs.junit is not None:
        try:
            write_atomic(outputs.junit, junit(judgements))
        except OSError as exc:
            raise Stop(f"cannot write {outputs.junit}: {exc.strerror or exc}", FAILED) from None


def _write_html(path: Path, page: bytes) -> None:
    from rokuprof.store.files import write_atomic

    try:
        write_atomic(path, page)
    except OSError as exc:
        raise Stop(f"cannot write {path}: {exc.strerror or exc}", FAILED) from None
