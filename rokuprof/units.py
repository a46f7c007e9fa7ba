"""The one byte-size and one duration format of rokuprof's text, and the one size syntax it
reads (``"20GiB"``, ``"500MB"``: the config's keys and the commands' options) (pure)."""

from __future__ import annotations

import re

BINARY_UNITS = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3}
_UNITS |= {"gb": 1000**3, "t": 1000**4, "tb": 1000**4}
_UNITS |= {"kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int) -> int:
    """``"20GiB"`` -> bytes (``KB``/``MB``/``GB`` are powers of 1000, ``KiB``... of 1024)."""
    if isinstance(text, bool):
        raise ValueError("expected a size such as '20GiB'")
    if isinstance(text, int):
        if text < 0:
            raise ValueError("a size cannot be negative")
        return text
    m = _SIZE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"expected a size such as '500MB' or '20GiB', got {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def size(n: float, *, exact: bool = False) -> str:
    """Bytes in binary units: a figure with one decimal (``1.5 MiB``), or with ``exact`` a
    limit or setting as it could be written back (``64 MiB``, ``1.25 GiB``, four significant
    digits). Below 1 KiB, whole bytes (``300 B``)."""
    for unit, scale in BINARY_UNITS:
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
