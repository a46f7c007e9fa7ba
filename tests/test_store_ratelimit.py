"""Sentry rate-limit headers: per category, longest wins, 429 defaults."""

from __future__ import annotations

import pytest

from rokuprof.store.ratelimit import (
    ALL,
    DEFAULT_429_SECONDS,
    RateLimits,
    parse_rate_limits,
    parse_retry_after,
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
