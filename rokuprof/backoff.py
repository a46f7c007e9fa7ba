"""The one retry-delay rule: capped exponential backoff with jitter (pure, no clock, no I/O).

Every loop that retries (a device's connects, a device task's restarts, uploads, pushes) asks
:func:`backoff_delay` how long to wait, giving its own random number so that tests can pin it.
"""

from __future__ import annotations

MAX_EXPONENT = 60  # 2**60 times any base is past every cap: no overflow, no surprise


def backoff_delay(
    attempt: int, base: float, cap: float, rand: float = 1.0, *, floor: float = 0.0
) -> float:
    """Seconds to wait after ``attempt`` failures in a row (``attempt`` >= 1).

    The ceiling doubles from ``base`` with each failure up to ``cap``; the delay is ``floor``
    plus ``rand`` (uniform in [0, 1]) of the way from ``floor`` to that ceiling (``floor = 0``
    is "full jitter"). A ``floor`` above the ceiling wins: a loop never polls faster than it.
    """
    ceiling = min(cap, base * 2.0 ** min(max(attempt, 1) - 1, MAX_EXPONENT))
    rand = max(0.0, min(1.0, rand))
    return max(floor, floor + rand * (ceiling - floor))
