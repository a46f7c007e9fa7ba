"""A session's app trace, read, and its part of the regression gate (``diff A B`` and
``profile --baseline`` of two sessions that both have one): compare missed frames and
rendezvous time (:mod:`rokuprof.trace.compare`), say it."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from rokuprof.export.report.session import read_trace_file
from rokuprof.trace.compare import TraceComparison, TraceFigure, compare_traces
from rokuprof.trace.model import Trace
from rokuprof.trace.summary import trace_report
from rokuprof.views.text import printable

WHOLE = 1 << 62  # bytes: no cut (the reader bounds what it holds)


def session_trace(session: Path | None) -> Trace | None:
    """A session directory's ``trace.perfetto-trace``, read whole (``None``: no session, or no
    trace in it); the report's reading, without its page-size cut: the gate and the chunks
    judge the whole run."""
    if session is None:
        return None
    trace, _ = read_trace_file(Path(session), limit=WHOLE)
    return trace


def session_trace_report(session: Path | None) -> dict | None:
    """The trace report of a session directory's trace (``None``: none)."""
    trace = session_trace(session)
    return None if trace is None else trace_report(trace)


def compare_sessions(a: Path | None, b: Path | None) -> TraceComparison | None:
    """The two sessions' traces compared, when both have one."""
    report_a = session_trace_report(a)
    report_b = session_trace_report(b) if report_a is not None else None
    if report_a is None or report_b is None:
        return None
    return compare_traces(report_a, report_b)


def say_trace(
    out: Console, comparison: TraceComparison, over_pct: float | None
) -> list[TraceFigure]:
    """The app traces' figures, a line each, then (with ``over_pct``) the verdict on them;
    returns the figures that grew more."""
    for line in comparison.lines():
        out.print(f"app trace: {printable(line)}", soft_wrap=True, markup=False, highlight=False)
    if over_pct is None:
        return []
    failed = comparison.regressions(over_pct)
    if failed:
        names = ", ".join(f.name for f in failed)
        out.print(
            f"app trace: {names} grew by more than {over_pct:g}%",
            style="bold red",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
    return failed
