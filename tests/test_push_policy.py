"""The Pyroscope push policy (:mod:`rokuprof.store.push_policy`) as scripts: answers with their
times in, what to do out; the jitter is an input, so every time is exact."""

from __future__ import annotations

from rokuprof.store.delivery import Cause
from rokuprof.store.push_policy import Again, Pushed, PushPolicy, Refused

WALL = 1_800_000_000.0


def policy(draw: float = 1.0) -> PushPolicy:
    return PushPolicy(backoff_base=1.0, backoff_cap=8.0, probe_base=5.0, rng=lambda: draw)


def test_failures_back_off_doubling_to_the_cap_and_a_push_starts_again() -> None:
    p = policy()
    times = [p.failed("ConnectError", at=100.0).at for _ in range(5)]
    assert times == [101.0, 102.0, 104.0, 108.0, 108.0]
    assert p.answered(503, {}, "busy", at=200.0, wall=WALL) == Again(
        208.0, Cause.FAILED, "HTTP 503: busy"
    )
    assert p.answered(200, {}, "ok", at=300.0, wall=WALL) == Pushed(200)
    assert p.failed("ConnectError", at=400.0).at == 401.0  # the count started again


def test_a_429_waits_as_told_and_blocks_the_next_backoff_too() -> None:
    p = policy(draw=0.0)  # no jitter: only what Pyroscope said
    again = p.answered(429, {"retry-after": "30"}, "slow down", at=10.0, wall=WALL)
    assert (again.at, again.cause) == (40.0, Cause.RATE_LIMITED)
    assert p.failed("timeout", at=20.0).at == 40.0  # a failure meanwhile: still blocked
    told = {"retry-after": "Fri, 15 Jan 2027 08:00:10 GMT"}
    date = p.answered(429, told, "", at=50.0, wall=WALL)  # WALL is 08:00:00 that day
    assert date.at == 50.0 + 10.0
    assert p.answered(429, {}, "", at=100.0, wall=WALL).at == 160.0  # 60 s without a header


def test_statuses_that_refuse_the_profile_for_good() -> None:
    for status in (400, 413, 415, 422):
        assert policy().answered(status, {}, "bad", at=0.0, wall=WALL) == Refused(status, "bad")


def test_refused_credentials_probe_from_their_own_base_and_are_said_once() -> None:
    p = policy()
    first = p.answered(401, {}, "no", at=0.0, wall=WALL)
    second = p.answered(401, {}, "no", at=5.0, wall=WALL)
    assert (first.at, first.cause, first.logged) == (5.0, Cause.KEY_REFUSED, True)
    assert (second.at, second.logged) == (13.0, False)  # 5 s doubled, capped at 8; said once
    assert "refused the credentials (HTTP 401)" in first.say
