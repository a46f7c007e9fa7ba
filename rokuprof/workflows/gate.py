"""The regression gate ``diff --fail-over`` and ``profile --baseline --fail-over`` share: the
verdicts (:mod:`rokuprof.verdict.judge`) decide the exit status."""

from __future__ import annotations

from rokuprof.exit_status import FAILED, OK, UNDECIDED
from rokuprof.export.aggregate import AnyInput
from rokuprof.verdict.judge import REGRESSED, UNKNOWN, Judgement
from rokuprof.verdict.series import LENGTH_TOLERANCE


def lengths_differ(a: AnyInput, b: AnyInput) -> bool:
    """True when the runs' lengths differ by more than the verdicts'
    :data:`~rokuprof.verdict.series.LENGTH_TOLERANCE` (then the one-against-one table of
    ``profile --baseline`` is per second of run, as the verdicts are)."""
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
