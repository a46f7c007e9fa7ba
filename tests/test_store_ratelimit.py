"""Sentry rate-limit headers: per category, longest wins, 429 defaults."""

from __future__ import annotations

import pytest

from rokuprof.store.ratelimit import (
    ALL,
    DEFAULT_429_SECONDS,
    MAX_RETRY_SECONDS,
    RateLimits,
    parse_http_date,
    parse_rate_limits,
    parse_retry_after,
    retry_delay,
)


def test_parse_rate_limits() -> None:
    header = "60:transaction;profile_chunk:key, 2700:default;error:organization:quota, 5::org"
    assert parse_rate_limits(header) == {
        "transaction": 60.0,
        "profile_chunk": 60.0,
        "default": 2700.0,
        "error": 2700.0,
        ALL: 5.0,
    }
    assert parse_rate_limits("10:profile_chunk:key, 30:profile_chunk:org") == {
        "profile_chunk": 30.0
    }
    assert parse_rate_limits("junk, x:y:z, -1:a:b, nan:a:b") == {}
    assert parse_rate_limits(None) == {}


def test_parse_retry_after() -> None:
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    # an HTTP date, 30 s after the given "now"
    assert parse_retry_after("Wed, 21 Oct 2026 07:28:30 GMT", 1792567680.0) == pytest.approx(30.0)


@pytest.mark.parametrize(
    ("status", "headers", "blocked"),
    [
        (429, {}, DEFAULT_429_SECONDS),
        (429, {"retry-after": "7"}, 7.0),
        (429, {"x-sentry-rate-limits": "9:profile_chunk:key"}, 9.0),
        (429, {"x-sentry-rate-limits": "9:profile_duration:key", "retry-after": "3"}, 9.0),
        (429, {"x-sentry-rate-limits": "4:profile_chunk:key", "retry-after": "8"}, 8.0),
        (429, {"x-sentry-rate-limits": "100:error:key"}, DEFAULT_429_SECONDS),
        (200, {"x-sentry-rate-limits": "20::organization"}, 20.0),
        (200, {"x-sentry-rate-limits": "20:error;transaction:key"}, 0.0),
        (200, {"retry-after": "20"}, 0.0),
        (500, {}, 0.0),
    ],
)
def test_blocking(status: int, headers: dict, blocked: float) -> None:
    limits = RateLimits()
    assert limits.update(status, headers, now=1000.0) == pytest.approx(blocked)
    assert limits.blocked_for(1000.0 + blocked) == 0.0


def test_longest_limit_per_category_is_kept() -> None:
    limits = RateLimits()
    limits.update(200, {"x-sentry-rate-limits": "50:profile_chunk:key"}, now=0.0)
    limits.update(200, {"x-sentry-rate-limits": "10:profile_chunk:key"}, now=5.0)
    assert limits.blocked_for(20.0) == 30.0
    assert limits.blocked_for(20.0, ("error",)) == 0.0


def test_retry_delay_doubles_up_to_a_ceiling_of_60_seconds() -> None:
    assert MAX_RETRY_SECONDS == 60.0
    ceilings = [retry_delay(n, base=1.0) for n in range(1, 12)]
    assert ceilings == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60]
    assert retry_delay(0, base=1.0) == 1.0  # no failure yet counts as the first
    # full jitter: a uniform fraction of the ceiling
    assert retry_delay(3, base=1.0, rand=0.5) == 2.0
    assert retry_delay(3, base=1.0, rand=0.0) == 0.0


@pytest.mark.parametrize("attempt", [1, 5, 10, 64, 10_000])
@pytest.mark.parametrize(("base", "cap"), [(1.0, 300.0), (5.0, 60.0), (100.0, 1e9), (0.05, 0.3)])
def test_retry_delay_never_exceeds_the_ceiling(attempt: int, base: float, cap: float) -> None:
    for rand in (0.0, 0.3, 0.999, 1.0, 7.0):
        delay = retry_delay(attempt, base, cap, rand)
        assert 0.0 <= delay <= min(cap, MAX_RETRY_SECONDS)
    assert retry_delay(attempt, base, cap, 1.0) == min(cap, 60.0, base * 2 ** min(attempt - 1, 60))


@pytest.mark.parametrize(
    "text",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  # RFC 850
        "Sun Nov  6 08:49:37 1994",  # asctime
        "Thu, 01 Jan 2065 00:00:00 GMT",
    ],
)
def test_http_dates_in_all_three_forms(text: str) -> None:
    from email.utils import parsedate_to_datetime  # the reference (it loads socket: tests only)

    assert parse_http_date(text) == parsedate_to_datetime(text).timestamp()


@pytest.mark.parametrize("text", ["soon", "Wed, 31 Feb 2026 07:28:30 GMT", "Mon, 01 Foo 2026"])
def test_a_bad_http_date_is_none(text: str) -> None:
    assert parse_http_date(text) is None
    assert parse_retry_after(text, 0.0) is None
