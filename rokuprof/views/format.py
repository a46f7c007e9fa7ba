"""Small human formats for numbers, sizes, times."""

from __future__ import annotations

from rokuprof.timefmt import utc_iso


def size(n: float) -> str:
    """Bytes as B / KiB / MiB / GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def count(n: float) -> str:
    return f"{n:,.0f}"


def seconds(s: float) -> str:
    if s >= 100:
        return f"{s:,.0f} s"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1000:.1f} ms"


def timestamp_ms(ms: int) -> str:
    try:
        return utc_iso(ms / 1000, sep=" ")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
