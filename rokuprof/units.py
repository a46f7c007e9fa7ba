"""The one byte-size and one duration format of rokuprof's text (pure)."""

from __future__ import annotations

_BINARY = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def size(n: float, *, exact: bool = False) -> str:
    """Bytes in binary units: a figure with one decimal (``1.5 MiB``), or with ``exact`` a
    limit or setting as it could be written back (``64 MiB``, ``1.25 GiB``, four significant
    digits). Below 1 KiB, whole bytes (``300 B``)."""
    for unit, scale in _BINARY:
        if abs(n) >= scale:
            return f"{n / scale:.4g} {unit}" if exact else f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def seconds(s: float) -> str:
    """A duration for a person: ``1,234 s``, ``12.35 s``, ``45.6 ms``."""
    if s >= 100:
        return f"{s:,.0f} s"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1000:.1f} ms"
