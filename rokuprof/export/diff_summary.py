"""What a diff says first (pure core): the top regressions and improvements, and the warning
that A and B are different apps.

Each is built here once, for the command's output and for the A/B page alike:
:func:`top_changes` picks the rows of the command's ranked table (its order, the figure each
row is ranked by) that grew and that shrank. The gate's verdicts and their words are
:mod:`rokuprof.verdict.judge`'s. Pure: no I/O, no clock.
"""

from __future__ import annotations

from rokuprof.export.diff import Comparison, RunSide

#: How many regressions and improvements the A/B page lists first.
TOP_CHANGES = 5


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
