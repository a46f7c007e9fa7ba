"""Small human formats for counts and timestamps (sizes and durations are
:mod:`rokuprof.units`'s)."""

from __future__ import annotations

from rokuprof.timefmt import utc_iso


def count(n: float) -> str:
    return f"{n:,.0f}"


def timestamp_ms(ms: int) -> str:
    try:
        return utc_iso(ms / 1000, sep=" ")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
