"""The one ISO-8601 time format: UTC with a ``Z``, to a chosen precision (pure, no clock).

``session.json``, markers, Sentry payloads and views all write times through :func:`utc_iso`
and read them back through :func:`parse_iso`::

    utc_iso(1795282956.25)                          '2026-11-21T17:42:36.250Z'
    utc_iso(1795282956.25, "microseconds")          '2026-11-21T17:42:36.250000Z'
    utc_iso(1795282956.25, "seconds")               '2026-11-21T17:42:36Z'
    utc_compact(1795282956.25)                      '20261121T174236.250Z' (for file names)
    parse_iso("2026-11-21T17:42:36.250Z")           1795282956.25
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

Precision = Literal["seconds", "milliseconds", "microseconds"]


def _utc(t: float | datetime) -> datetime:
    return t.astimezone(UTC) if isinstance(t, datetime) else datetime.fromtimestamp(t, UTC)


def utc_iso(t: float | datetime, timespec: Precision = "milliseconds", *, sep: str = "T") -> str:
    """Unix seconds (or an aware datetime) as ISO 8601 UTC ending in ``Z``. Raises
    ``OverflowError``, ``OSError`` or ``ValueError`` for a time a datetime cannot hold."""
    return _utc(t).isoformat(sep, timespec).removesuffix("+00:00") + "Z"


def utc_iso_or_none(t: float | None, timespec: Precision = "milliseconds") -> str | None:
    """:func:`utc_iso`, ``None`` for ``None`` (a run that has not ended)."""
    return None if t is None else utc_iso(t, timespec)


def utc_compact(t: float) -> str:
    """``20261121T174236.250Z``: the basic ISO form to the millisecond, safe in file names."""
    when = _utc(t)
    return f"{when:%Y%m%dT%H%M%S}.{when.microsecond // 1000:03d}Z"


def parse_iso(text: object) -> float | None:
    """Unix seconds from an ISO 8601 time with an offset or ``Z``; ``None`` for anything else
    (not text, not a time, or a time without a zone)."""
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.timestamp() if when.tzinfo is not None else None
