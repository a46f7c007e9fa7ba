"""The delivery policy (rokuprof/store/delivery.py) fed scripted events: no sockets, no clock.

Named tests pin each rule with exact times and texts; property tests drive the policy as the
uploader does (sends start only when it allows, answers arrive after scripted latencies) over
random outages and check what every delivery must satisfy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.store.delivery import (
    Answered,
    Cause,
    Deliver,
    DeliveryPolicy,
    Failed,
    PauseUntil,
    Reject,
    Retry,
    Say,
    Unsendable,
    next_sends,
    over_limit,
    spool_cut,
    spool_full_message,
)
from rokuprof.store.ratelimit import PROFILE_CATEGORIES

T0 = 1000.0  # the uploader's monotonic clock
WALL = 1_800_000_000.0  # Unix seconds at T0
LIMIT = "x-sentry-rate-limits"


def policy(**kwargs) -> DeliveryPolicy:
    kwargs = {
        "backoff_base": 1.0,
        "probe_base": 5.0,
        "max_in_flight": 4,
        "rng": lambda: 1.0,
    } | kwargs
    return DeliveryPolicy(**kwargs)


def answer(status: int, at: float = T0, ticket: int = 0, text: str = "", **headers) -> Answered:
    heads = {k.replace("_", "-"): v for k, v in headers.items()}
    return Answered(status, heads, text, at, WALL + at - T0, ticket, pending=3)


def says(actions) -> list[Say]:
    return [a for a in actions if isinstance(a, Say)]


# -- answers -------------------------------------------------------------------------------


def test_a_2xx_delivers_and_ends_the_backoff() -> None:
    p = policy()
    p.handle(Failed("cannot reach Sentry (will retry)", T0, p.ticket()))
    assert (p.failures, p.send_limit(), p.wait(T0)) == (1, 1, 1.0)
    assert p.handle(answer(200, T0 + 1, p.ticket())) == [Deliver(200)]
    assert (p.failures, p.send_limit(), p.wait(T0 + 1)) == (0, 4, 0.0)


def test_a_limit_on_a_200_pauses_its_category() -> None:
    p = policy()
    actions = p.handle(answer(200, x_sentry_rate_limits="30:profile_chunk:key"))
    assert actions == [PauseUntil("profile_chunk", T0 + 30), Deliver(200)]
    assert p.wait(T0 + 29.5) == 0.5 and p.wait(T0 + 30) == 0.0


def test_a_limit_on_other_categories_does_not_hold_chunks_back() -> None:
    p = policy()
    actions = p.handle(answer(200, x_sentry_rate_limits="60:error;transaction:key"))
    assert actions == [
        PauseUntil("error", T0 + 60),
        PauseUntil("transaction", T0 + 60),
        Deliver(200),
    ]
    assert p.wait(T0) == 0.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({}, 60.0),
        ({"retry_after": "7"}, 7.0),
        ({"retry_after": "Thu, 15 Jan 2027 08:00:12 GMT"}, 12.0),  # WALL is 08:00:00
        ({"retry_after": "3", LIMIT.replace("-", "_"): "9:profile_duration:key"}, 9.0),
    ],
)
def test_429_waits_as_told_then_sends_the_chunk_again(headers: dict, seconds: float) -> None:
    p = policy()
    actions = p.handle(answer(429, **headers))
    assert Retry(T0 + seconds, Cause.RATE_LIMITED) in actions
    assert says(actions) == [Say(f"rate limited by Sentry (HTTP 429): waiting {seconds:.0f} s")]
    assert p.wait(T0 + seconds - 0.25) == 0.25 and p.wait(T0 + seconds) == 0.0
    assert p.failures == 0 and p.send_limit() == 4  # not a failure: no probe


@pytest.mark.parametrize("status", [400, 413])
def test_400_and_413_reject_only_that_chunk(status: int) -> None:
    p = policy()
    reason = f"Sentry refused the chunk: HTTP {status} too big"
    assert p.handle(answer(status, text="too big")) == [Reject(reason, status)]
    assert (p.failures, p.wait(T0), p.pause) == (0, 0.0, None)


def test_an_invalid_chunk_is_rejected_without_a_status() -> None:
    assert policy().handle(Unsendable("not a valid chunk")) == [Reject("not a valid chunk", None)]


# -- failures ------------------------------------------------------------------------------


def test_failures_back_off_doubling_up_to_60_seconds() -> None:
    p = policy(backoff_cap=300.0)  # capped at 60 s whatever is asked
    now, delays = T0, []
    for _ in range(10):
        actions = p.handle(Failed("Sentry answered HTTP 503 (will retry)", now, p.ticket()))
        retry = actions[0]
        delays.append(retry.at - now)
        assert says(actions)[0].text.endswith(f"; next try in {retry.at - now:.1f} s")
        now = retry.at
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]


def test_the_jitter_is_the_given_random_fraction() -> None:
    rands = iter([0.5, 0.25, 0.0])
    p = policy(rng=lambda: next(rands))
    at = [p.handle(Failed("x", T0, p.ticket()))[0].at for _ in range(3)]
    assert at == [T0 + 0.5, T0 + 0.5, T0 + 0.0]  # 0.5 of 1 s, 0.25 of 2 s, 0 of 4 s


def test_failures_in_flight_together_back_off_once() -> None:
    p = policy(backoff_base=0.3)
    tickets = [p.ticket() for _ in range(4)]  # four sends in flight at once
    first = p.handle(answer(503, T0, tickets[0], text="busy"))
    assert first == [
        Retry(T0 + 0.3, Cause.FAILED),
        Say("Sentry answered HTTP 503 busy (will retry); next try in 0.3 s"),
    ]
    for i, ticket in enumerate(tickets[1:], 1):
        later = p.handle(answer(503, T0 + i / 100, ticket, text="busy"))
        assert later == [
            Retry(T0 + 0.3, Cause.FAILED),
            Say("Sentry answered HTTP 503 busy (will retry)", logged=False),
        ]
    assert (p.failures, p.send_limit()) == (1, 1)  # one backoff, then one probe alone
    # a straggler that fails after the backoff ran out counts as a new failure
    assert p.handle(Failed("x", T0 + 0.5, tickets[0]))[0] == Retry(T0 + 1.1, Cause.FAILED)


# -- a refused key -------------------------------------------------------------------------


def test_a_refused_key_pauses_every_send_and_the_next_answer_resumes() -> None:
    p = policy()
    tickets = [p.ticket() for _ in range(4)]
    first = p.handle(answer(401, T0, tickets[0], text='{"detail":"invalid key"}'))
    message = (
        'uploads paused: Sentry refused the key (HTTP 401): {"detail":"invalid key"}; 3 chunk(s)'
        " wait on disk, nothing is rejected; probing again at most 60 s apart (check the DSN)"
    )
    assert first == [Retry(T0 + 5, Cause.KEY_REFUSED), Say(message, "error")]
    assert p.pause is not None and (p.pause.since, p.pause.refusals) == (WALL, 1)
    # the rest of the batch: counted, not said, not scheduled again
    for ticket in tickets[1:]:
        assert p.handle(answer(403, T0 + 0.1, ticket)) == [Retry(T0 + 5, Cause.KEY_REFUSED)]
    assert p.pause.refusals == 1 and p.send_limit() == 1
    # the probes back off from there: 5 s, 10 s ...
    probe = p.handle(answer(403, T0 + 5, p.ticket()))
    assert probe[0] == Retry(T0 + 15, Cause.KEY_REFUSED)
    assert [(s.level, s.logged, s.record) for s in says(probe)] == [
        ("warning", False, True),
        ("debug", True, False),
    ]
    assert says(probe)[1].text == (
        "Sentry refused the key (HTTP 403) still refused (2 times); next try in 10.0 s"
    )
    assert p.pause.status == 403 and p.pause.refusals == 2
    resumed = p.handle(answer(200, T0 + 15, p.ticket()))
    assert resumed == [
        Say(
            "uploads resumed: Sentry accepted the key again after 15 s paused (2 refusal(s))",
            record=False,
        ),
        Deliver(200),
    ]
    assert (p.pause, p.send_limit(), p.wait(T0 + 15)) == (None, 4, 0.0)


def test_any_other_answer_ends_a_pause() -> None:
    p = policy()
    p.handle(answer(401, T0, p.ticket()))
    actions = p.handle(answer(500, T0 + 5, p.ticket()))
    assert says(actions)[0].text.startswith("uploads resumed")
    assert actions[1] == Retry(T0 + 6, Cause.FAILED) and p.pause is None


# -- which chunks --------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    key: str
    size: int = 10
    session: str = "dev/s1"

    @property
    def session_dir(self) -> Path:
        return Path("/out", self.session)


def test_next_sends_are_the_oldest_one_per_session() -> None:
    items = [Item("a1"), Item("a2"), Item("b1", session="dev/s2"), Item("c1", session="tv/s3")]
    assert next_sends(items, {}, set(), 4) == [items[0], items[2], items[3]]
    assert next_sends(items, {"a1"}, {Path("/out/dev/s1")}, 4) == [items[2], items[3]]
    assert next_sends(items, {}, set(), 1) == [items[0]]
    assert next_sends(items, {}, set(), 0) == []


def test_a_full_spool_drops_the_oldest_not_in_flight() -> None:
    items = [Item(f"c{i}", session=f"tv-{i % 2}/s") for i in range(10)]
    assert not over_limit(100, 100) and over_limit(101, 100) and not over_limit(10**9, None)
    # 100 bytes pending, limit 60: down to 54 at most, so 5 chunks go
    assert spool_cut(items, 100, 60, {}) == items[:5]
    assert spool_cut(items, 100, 60, {"c0", "c2"}) == [items[i] for i in (1, 3, 4, 5, 6)]
    assert spool_cut(items, 50, 60, {}) == []
    assert spool_full_message(3 << 20, 2 << 20, items[:3]) == (
        "spool full (3.0 MiB of chunks waiting, limit 2.0 MiB): dropped the 3 oldest"
        " undelivered chunk(s) (0.0 MiB) of tv-0/s, tv-1/s; their archives are kept"
        " (rokuprof convert rebuilds them)"
    )


# -- properties over scripted outages ------------------------------------------------------

REPLIES = st.one_of(
    st.just(("status", 200)),
    st.sampled_from([("status", 500), ("status", 503), ("fail", 0), ("status", 413)]),
    st.sampled_from([("status", 401), ("status", 403)]),
    st.tuples(st.just("429"), st.sampled_from([None, 0.5, 3.0, 90.0])),
    st.tuples(st.just("limit"), st.sampled_from([0.5, 4.0])),
)


@dataclass
class Trace:
    cap: float
    timeline: list[tuple[float, list | None]] = field(default_factory=list)  # None: a send

    @property
    def events(self) -> list[tuple[float, list]]:
        return [(at, acts) for at, acts in self.timeline if acts is not None]


def drive(replies, latencies, rands, max_in_flight: int, cap: float) -> Trace:
    """The uploader's part, scripted: start sends while the policy allows, up to its limit;
    each gets the next scripted reply after the next scripted latency."""
    rand = itertools.cycle(rands).__next__
    p = DeliveryPolicy(
        backoff_base=0.5, backoff_cap=cap, probe_base=1.0, rng=rand, max_in_flight=max_in_flight
    )
    lat = itertools.cycle(latencies).__next__
    todo, flying, now = list(replies), [], T0
    trace = Trace(p.delays.cap)
    while todo or flying:
        if p.wait(now) <= 0:
            while todo and len(flying) < p.send_limit():
                flying.append((now + lat(), len(trace.timeline), p.ticket(), todo.pop(0)))
                trace.timeline.append((now, None))
        # when the wait ends, exactly (the latest of the backoff and the profile limits)
        ends = [p.retry_at, *(p.limits.until.get(c, 0.0) for c in PROFILE_CATEGORIES)]
        wake = [max(ends)] if todo and p.wait(now) > 0 else []
        done = min(flying, default=None)
        if done is None or (wake and wake[0] < done[0]):
            now = wake[0]
            continue
        flying.remove(done)
        now, _, ticket, (kind, value) = done
        if kind == "fail":
            event = Failed("cannot reach Sentry", now, ticket)
        elif kind == "429":
            headers = {} if value is None else {"retry-after": f"{value:g}"}
            event = Answered(429, headers, "", now, WALL + now, ticket)
        elif kind == "limit":
            event = Answered(200, {LIMIT: f"{value:g}::org"}, "", now, WALL + now, ticket)
        else:
            event = Answered(value, {}, "", now, WALL + now, ticket)
        trace.timeline.append((now, p.handle(event)))
        assert p.retry_at - now <= p.delays.cap + 1e-9  # never more than the cap from now
    return trace


def fresh_start(action) -> bool:
    """A delivery, or a pause beginning or ending: the backoff starts afresh (a pause probes on
    a schedule of its own, even when a failure's backoff was running)."""
    if isinstance(action, Say) and action.logged:
        return action.text.startswith(("uploads resumed", "uploads paused"))
    return isinstance(action, Deliver)


@given(
    st.lists(REPLIES, min_size=1, max_size=25),
    st.lists(st.sampled_from([0.0, 0.1, 0.7, 2.0]), min_size=1, max_size=6),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    st.integers(1, 4),
    st.sampled_from([0.2, 5.0, 300.0]),
)
def test_properties_of_any_outage(replies, latencies, rands, max_in_flight, cap) -> None:
    trace = drive(replies, latencies, rands, max_in_flight, cap)
    retries: list[float] = []  # retry times since the backoff last started afresh
    limited = 0.0  # the latest end of a limit on profile chunks so far
    retry_at = 0.0  # no send before this (0 after a fresh start)
    for at, actions in trace.timeline:
        if actions is None:  # a send: never while paused or backing off
            assert at >= limited and at >= retry_at
            continue
        # one verdict per answer or failure
        assert sum(isinstance(a, (Deliver, Reject, Retry)) for a in actions) == 1
        for action in actions:
            if isinstance(action, PauseUntil) and action.category in PROFILE_CATEGORIES:
                limited = max(limited, action.until)
            if fresh_start(action):
                retries, retry_at = [], 0.0
        for action in actions:
            if isinstance(action, Retry):
                assert action.at >= at  # never in the past
                assert action.at <= max(at + trace.cap, limited)  # the cap, unless Sentry said
                assert not retries or action.at >= retries[-1]  # never backwards
                retries.append(action.at)
                retry_at = action.at
    # a pause is said once when it begins and once when it ends
    said = [a.text for _, acts in trace.events for a in acts if isinstance(a, Say) and a.logged]
    paused = sum(t.startswith("uploads paused") for t in said)
    resumed = sum(t.startswith("uploads resumed") for t in said)
    assert resumed in (paused, paused - 1)
