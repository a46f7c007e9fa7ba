"""The regression gate ``diff --fail-over`` and ``profile --baseline --fail-over`` share: the
verdicts (:mod:`rokuprof.verdict.judge`) decide the exit status."""

from __future__ import annotations

from rokuprof.exit_status import FAILED, OK, UNDECIDED
from rokuprof.export.aggregate import AnyInput
from rokuprof.verdict.judge import REGRESSED, UNKNOWN, Judgement

#: ``profile --baseline`` compares per second of run when the two runs' lengths differ by more
#: than this share of the longer (a scenario replayed twice lasts the same to within a tick).
LENGTH_TOLERANCE = 0.02


def lengths_differ(a: AnyInput, b: AnyInput) -> bool:
    """True when the runs' lengths differ by more than :data:`LENGTH_TOLERANCE`."""
    la, lb = a.run.duration, b.run.duration
    longer = max(la, lb)
    return longer > 0 and abs(la - lb) > LENGTH_TOLERANCE * longer


def gate_status(judgements: dict[str, Judgement]) -> int:
    """1 (FAILED) when a verdict on any device model is ``regressed``; else 4 (UNDECIDED) when
    one is ``unknown``; else 0."""
    outcomes = {j.outcome for j in judgements.values()}
    if REGRESSED in outcomes:
        return FAILED
    if UNKNOWN in outcomes:
        return UNDECIDED
    return OK
