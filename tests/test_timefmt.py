"""The one ISO-8601 helper: formats that round-trip, and what parsing refuses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from rokuprof.timefmt import parse_iso, utc_compact, utc_iso, utc_iso_or_none

T = 1_795_282_956.123456  # 2026-11-21T17:42:36.123456Z


def test_precisions() -> None:
    assert utc_iso(T) == "2026-11-21T17:42:36.123Z"
    assert utc_iso(T, "seconds") == "2026-11-21T17:42:36Z"
    assert utc_iso(T, "microseconds") == "2026-11-21T17:42:36.123456Z"
    assert utc_iso(T, sep=" ") == "2026-11-21 17:42:36.123Z"
    assert utc_compact(T) == "20261121T174236.123Z"
    assert utc_iso_or_none(None) is None


def test_an_aware_datetime_is_shown_in_utc() -> None:
    when = datetime(2026, 11, 21, 18, 42, 36, tzinfo=timezone(timedelta(hours=1)))
    assert utc_iso(when, "seconds") == "2026-11-21T17:42:36Z"


@pytest.mark.parametrize("timespec", ["seconds", "milliseconds", "microseconds"])
def test_round_trip(timespec: str) -> None:
    back = parse_iso(utc_iso(T, timespec))  # type: ignore[arg-type]
    assert back is not None and T - 1 < back <= T


@pytest.mark.parametrize(
    "text", [None, 12.5, "", "yesterday", "2026-11-21T17:42:36", "2026-13-01T00:00:00Z"]
)
def test_parse_refuses(text: object) -> None:
    assert parse_iso(text) is None


def test_parse_offsets() -> None:
    assert (
        parse_iso("2026-11-21T18:42:36+01:00")
        == datetime(2026, 11, 21, 17, 42, 36, tzinfo=UTC).timestamp()
    )


def test_impossible_time_raises() -> None:
    with pytest.raises((OverflowError, OSError, ValueError)):
        utc_iso(1e20)
