"""The regression gate ``diff --fail-over`` and ``profile --baseline`` share: the diff, said."""

from __future__ import annotations

from rich.console import Console

from rokuprof.export.aggregate import AnyInput
from rokuprof.export.diff import Comparison, FunctionDiff, compare, regressions
from rokuprof.export.diff_summary import verdict_text
from rokuprof.views.diff_view import render_diff
from rokuprof.views.text import printable

#: ``profile --baseline`` compares per second of run when the two runs' lengths differ by more
#: than this share of the longer (a scenario replayed twice lasts the same to within a tick).
LENGTH_TOLERANCE = 0.02


def lengths_differ(a: AnyInput, b: AnyInput) -> bool:
    """True when the runs' lengths differ by more than :data:`LENGTH_TOLERANCE`."""
    la, lb = a.run.duration, b.run.duration
    longer = max(la, lb)
    return longer > 0 and abs(la - lb) > LENGTH_TOLERANCE * longer


def gate(
    baseline: AnyInput,
    run: AnyInput,
    out: Console,
    *,
    labels: tuple[str, str],
    fail_over: float | None,
    min_share: float,
    top: int = 15,
) -> list[FunctionDiff]:
    """Print the diff of ``run`` against ``baseline`` (per second when their lengths differ)
    and, with ``fail_over``, the functions that grew more; return those."""
    per_second = lengths_differ(baseline, run)
    comparison = compare(baseline, run, per_second=per_second)
    render_diff(comparison, out, labels=labels, top=top)
    if fail_over is None:
        return []
    failed = regressions(comparison, fail_over, min_share)
    say_regressions(out, comparison, failed, fail_over, min_share)
    return failed


def say_regressions(
    out: Console, comparison: Comparison, failed: list, over: float, min_share: float
) -> None:
    """The ``--fail-over`` verdict in the A/B page's words (one line), then where each
    function that grew more lives."""
    line = printable(verdict_text(comparison, failed, over))
    if not failed:
        out.print(
            f"{line} (functions under {min_share:g}% of the run ignored)",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
        return
    out.print(line, style="bold red", soft_wrap=True, markup=False, highlight=False)
    for d in failed:
        out.print(
            f"  {printable(d.function)}: {printable(d.module)}, {printable(d.file)}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
