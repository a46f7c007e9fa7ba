"""What a diff says first (pure core): the ``--fail-over`` gate's verdict in words, the top
regressions and improvements, and the warning that A and B are different apps.

Each text is built here once, for the command's output and for the A/B page alike:
:func:`verdict_text` is the line ``rokuprof diff --fail-over`` prints and the page opens with
(``--fail-over 20 %: failed: renderTile +350.8 % (+2.21 s)``: each function that failed the
gate, the growth of its self wall as :func:`~rokuprof.export.diff.regressions` measured it, and
the change of its self wall time in seconds, per second of run with ``per_second``).
:func:`top_changes` picks the rows of the command's ranked table (its order, the figure each
row is ranked by) that grew and that shrank. Pure: no I/O, no clock.
"""

from __future__ import annotations

import math

from rokuprof.bsprof.wall_unit import WALL_UNITS
from rokuprof.export.diff import Comparison, FunctionDiff, RunSide
from rokuprof.export.diff_rows import growth_pct
from rokuprof.units import seconds

#: How many regressions and improvements the A/B page lists first.
TOP_CHANGES = 5


def signed_seconds(value: float) -> str:
    """A change of time: ``+2.21 s``, ``-45.6 ms``, ``0 s``."""
    if not value:
        return "0 s"
    return ("+" if value > 0 else "-") + seconds(abs(value))


def change_words(d: FunctionDiff, comparison: Comparison) -> str:
    """One function's change of self wall: ``renderTile +350.8 % (+2.21 s)`` (``new in B``,
    ``gone`` for a function one side lacks, ``from 0`` for one A has without self wall; ``/s``
    per second of run)."""
    g = d.growth("self_wall")
    if d.a is None:
        grown = "new in B"
    elif d.b is None:
        grown = "gone"
    elif g is None or math.isinf(g):
        grown = "from 0" if g else "±0.0 %"
    else:
        grown = f"{g:+.1f} %"
    unit = WALL_UNITS[comparison.b.wall_unit]
    rate = "/s" if comparison.per_second else ""
    return f"{d.function} {grown} ({signed_seconds(d.delta('self_wall') / unit)}{rate})"


def verdict_text(comparison: Comparison, failed: list[FunctionDiff], over_pct: float) -> str:
    """The gate's verdict: passed, or failed and each function that grew more (largest growth
    first, as :func:`~rokuprof.export.diff.regressions` orders them)."""
    if not failed:
        how = " per second of run" if comparison.per_second else ""
        return (
            f"--fail-over {over_pct:g} %: passed: no function's self wall{how} grew by more "
            f"than {over_pct:g} %"
        )
    said = ", ".join(change_words(d, comparison) for d in failed)
    return f"--fail-over {over_pct:g} %: failed: {said}"


def gate_verdict(
    comparison: Comparison, failed: list[FunctionDiff], over_pct: float
) -> dict[str, object]:
    """The verdict as the A/B page holds it: the threshold, whether it passed, its words
    (:func:`verdict_text`) and each failed function as ``[function, file, growth in percent]``
    (``None``: a function only in B, grown without bound)."""
    return {
        "pct": over_pct,
        "passed": not failed,
        "text": verdict_text(comparison, failed, over_pct),
        "failed": [[d.function, d.file, growth_pct(d.growth("self_wall"))] for d in failed],
    }


def top_changes(comparison: Comparison, n: int = TOP_CHANGES) -> tuple[list[int], list[int]]:
    """The first ``n`` rows of the ranked table whose ranking figure grew (regressions) and
    the first ``n`` whose figure shrank (improvements), as indexes into
    ``comparison.functions``."""
    grew: list[int] = []
    shrank: list[int] = []
    for i, d in enumerate(comparison.functions):
        change = d.delta(d.ranked_by(comparison.sort))
        if change > 0 and len(grew) < n:
            grew.append(i)
        elif change < 0 and len(shrank) < n:
            shrank.append(i)
        if len(grew) >= n and len(shrank) >= n:
            break
    return grew, shrank


def apps_warning(a: RunSide, b: RunSide) -> str | None:
    """The warning when A and B are captures of different apps (``None`` when they are not,
    or when either does not say)."""
    if a.app and b.app and a.app != b.app:
        return (
            f"warning: A and B are different apps ({a.app}, {b.app}): their functions are "
            "compared by name only"
        )
    return None
