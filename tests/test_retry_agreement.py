"""Sentry's delivery policy and Pyroscope's push policy answer alike where the two services
agree (one rule set, :mod:`rokuprof.store.retrying`): every status from 100 to 599, the same
headers, the same jitter draws, so the same outcome at the same time; they differ only on the
statuses that refuse a payload for good, and after a refusal (Pyroscope's count of failures in
a row starts again there, Sentry's only at a 2xx), so a history is compared up to its first
refusal."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.store.delivery import CHUNK_REFUSED, Answered, Deliver, DeliveryPolicy, Reject, Retry
from rokuprof.store.push_policy import PROFILE_REFUSED, Again, Pushed, PushPolicy, Refused

T0 = 500.0
WALL = 1_800_000_000.0
ONLY_PYROSCOPE_REFUSES = PROFILE_REFUSED - CHUNK_REFUSED  # 415, 422: Sentry retries those


def sentry_outcome(policy: DeliveryPolicy, status: int, headers: dict[str, str], at: float):
    actions = policy.handle(Answered(status, headers, "x", at, WALL + at, policy.ticket()))
    (kept,) = [a for a in actions if isinstance(a, Deliver | Reject | Retry)]
    match kept:
        case Deliver(code):
            return ("done", code)
        case Reject(_, code):
            return ("refused", code)
        case Retry(when, cause):
            return ("again", when, cause)


def pyroscope_outcome(policy: PushPolicy, status: int, headers: dict[str, str], at: float):
    match policy.answered(status, headers, "x", at, WALL + at):
        case Again(when, cause):
            return ("again", when, cause)
        case Refused(code, _):
            return ("refused", code)
        case Pushed(code):
            return ("done", code)


#: The statuses the rules name, and any other.
STATUS = st.one_of(
    st.sampled_from([200, 202, 400, 401, 403, 413, 415, 422, 429, 500, 502, 503]),
    st.integers(100, 599),
)


@settings(max_examples=60, deadline=None)
@given(
    statuses=st.lists(STATUS, min_size=1, max_size=12),
    draws=st.lists(st.floats(0.0, 0.999), min_size=12, max_size=12),
    retry_after=st.sampled_from([None, "0", "7", "90"]),
)
def test_both_policies_answer_a_run_of_statuses_alike(
    statuses: list[int], draws: list[float], retry_after: str | None
) -> None:
    def rules(seq: list[float]) -> dict:
        it = iter(seq)
        return {
            "backoff_base": 1.0,
            "backoff_cap": 30.0,
            "probe_base": 5.0,
            "rng": lambda: next(it),
        }

    sentry = DeliveryPolicy(**rules(draws * 2))
    pyroscope = PushPolicy(**rules(draws * 2))
    headers = {} if retry_after is None else {"retry-after": retry_after}
    for i, status in enumerate(statuses):
        at = T0 + 100.0 * i  # each answer after the previous wait is over
        ours, theirs = (
            sentry_outcome(sentry, status, headers, at),
            pyroscope_outcome(pyroscope, status, headers, at),
        )
        if status in ONLY_PYROSCOPE_REFUSES:
            assert ours[0] == "again" and theirs == ("refused", status)
            return  # the two histories part here
        assert ours == theirs, f"HTTP {status} after {statuses[:i]}"
        if status in CHUNK_REFUSED:
            return  # both refused it; their failure counts part here (see the docstring)
