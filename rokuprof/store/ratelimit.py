"""When to send again: Sentry's rate-limit answers and the retry backoff (pure, no I/O).

The rate-limit header may come on any response (even a 200) and applies per category. On a 429,
``Retry-After`` also applies to every category (the chunk in hand was refused), and a 429 that
limits no profile category and has no ``Retry-After`` blocks profile chunks for 60 s.

``X-Sentry-Rate-Limits: <seconds>:<cat1;cat2>:<scope>[:<reason>], ...`` - an empty category
list means every category. A profile chunk is blocked by ``profile_chunk``,
``profile_duration`` or an all-categories limit. The longest limit per category wins. Times
are on the caller's monotonic clock.

Failures Sentry did not explain (5xx, network errors, timeouts) and a refused key are retried
after :func:`retry_delay`: capped exponential backoff with full jitter, never more than
:data:`MAX_RETRY_SECONDS` (Relay's own ceiling), so uploads resume within a minute of Sentry
(or the key) working again.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from rokuprof.backoff import backoff_delay

ALL = ""  # the "every category" key
PROFILE_CATEGORIES = ("profile_chunk", "profile_duration", ALL)
DEFAULT_429_SECONDS = 60.0
MAX_LIMIT_SECONDS = 24 * 3600.0  # a broken header must not park the uploader for ever
MAX_RETRY_SECONDS = 60.0
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT" and RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT"
_DAY_FIRST = re.compile(r"(\d{1,2})[ -]([a-z]{3})[ -](\d{2,4}) (\d{1,2}):(\d{2}):(\d{2})", re.I)
# asctime "Sun Nov  6 08:49:37 1994"
_ASCTIME = re.compile(r"([a-z]{3}) +(\d{1,2}) (\d{1,2}):(\d{2}):(\d{2}) (\d{4})", re.I)


def retry_delay(
    attempt: int, base: float, cap: float = MAX_RETRY_SECONDS, rand: float = 1.0
) -> float:
    """Seconds to wait before try number ``attempt + 1`` after ``attempt`` failures in a row:
    :func:`~rokuprof.backoff.backoff_delay` with full jitter, its cap at most
    :data:`MAX_RETRY_SECONDS` whatever ``cap`` says."""
    return backoff_delay(attempt, base, min(cap, MAX_RETRY_SECONDS), rand)


@dataclass
class RetryDelays:
    """The retry rules every sender shares (Sentry's uploads, their owed markers, Pyroscope's
    pushes): after failures, :func:`retry_delay` from ``base``; after refused credentials, the
    same from ``probe_base``; never more than ``cap`` (itself at most
    :data:`MAX_RETRY_SECONDS`); the jitter from ``rng`` (uniform in [0, 1))."""

    base: float = 1.0
    cap: float = MAX_RETRY_SECONDS
    probe_base: float = 5.0
    rng: Callable[[], float] = random.random

    def __post_init__(self) -> None:
        self.cap = min(self.cap, MAX_RETRY_SECONDS)

    def after_failures(self, failures: int) -> float:
        """Seconds to wait after ``failures`` failures in a row."""
        return retry_delay(failures, self.base, self.cap, self.rng())

    def after_refusals(self, refusals: int) -> float:
        """Seconds before the next probe after the credentials were refused ``refusals`` times."""
        return retry_delay(refusals, self.probe_base, self.cap, self.rng())


def parse_http_date(value: str) -> float | None:
    """Unix seconds of an HTTP date (RFC 9110's three forms, always GMT); ``None`` if bad."""
    if m := _DAY_FIRST.search(value):
        day, month, year, hh, mm, ss = m.groups()
    elif m := _ASCTIME.search(value):
        month, day, hh, mm, ss, year = m.groups()
    else:
        return None
    try:
        number = _MONTHS.index(month.lower()) + 1
    except ValueError:
        return None
    year_n = int(year)
    if len(year) == 2:  # RFC 850: 00-69 are 20xx, 70-99 are 19xx
        year_n += 2000 if year_n < 70 else 1900
    try:
        when = datetime(year_n, number, int(day), int(hh), int(mm), int(ss), tzinfo=UTC)
    except ValueError:
        return None
    return when.timestamp()


def parse_retry_after(value: str | None, now_wall: float | None = None) -> float | None:
    """Seconds from ``Retry-After`` (a number or an HTTP date); ``None`` if absent or bad."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        when = parse_http_date(value)
        if when is None:
            return None
        seconds = when - (time.time() if now_wall is None else now_wall)
    if not math.isfinite(seconds):
        return None
    return min(MAX_LIMIT_SECONDS, max(0.0, seconds))


def parse_rate_limits(value: str | None) -> dict[str, float]:
    """``X-Sentry-Rate-Limits`` -> {category: seconds} (``""`` = every category)."""
    limits: dict[str, float] = {}
    if not value:
        return limits
    for part in value.split(","):
        fields = part.strip().split(":")
        if len(fields) < 2:
            continue
        try:
            seconds = float(fields[0])
        except ValueError:
            continue
        if not math.isfinite(seconds) or seconds < 0:
            continue
        seconds = min(MAX_LIMIT_SECONDS, seconds)
        categories = [c.strip() for c in fields[1].split(";") if c.strip()] or [ALL]
        for category in categories:
            limits[category] = max(limits.get(category, 0.0), seconds)
    return limits


class RateLimits:
    """Per-category "blocked until" times, fed from every response."""

    def __init__(self) -> None:
        self.until: dict[str, float] = {}

    def update(
        self,
        status: int,
        headers: dict[str, str] | object,
        now: float,
        now_wall: float | None = None,
    ) -> float:
        """Take a response's limits; return how long profile chunks are now blocked."""
        get = headers.get  # type: ignore[attr-defined]
        limits = parse_rate_limits(get("x-sentry-rate-limits"))
        if status == 429:  # this chunk was refused: never retry it sooner than told
            seconds = parse_retry_after(get("retry-after"), now_wall)
            if seconds is not None:
                limits[ALL] = max(limits.get(ALL, 0.0), seconds)
            elif not any(c in limits for c in PROFILE_CATEGORIES):
                limits[ALL] = DEFAULT_429_SECONDS
        for category, seconds in limits.items():
            self.until[category] = max(self.until.get(category, 0.0), now + seconds)
        return self.blocked_for(now)

    def blocked_for(self, now: float, categories: tuple[str, ...] = PROFILE_CATEGORIES) -> float:
        """Seconds until a profile chunk may be sent again (0: now)."""
        return max([0.0] + [self.until.get(c, 0.0) - now for c in categories])
