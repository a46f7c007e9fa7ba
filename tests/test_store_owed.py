"""Markers owed for chunks Sentry accepted: kept until written, each retry after a longer wait."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from rokuprof.store.owed import OwedMarkers


@dataclass(frozen=True)
class Chunk:
    key: str


def test_writes_wait_longer_after_each_failure_and_stop_once_settled() -> None:
    owed: OwedMarkers[Chunk] = OwedMarkers(backoff_base=1.0, backoff_cap=8.0, rng=lambda: 1.0)
    assert owed.wait(0.0) is None and owed.due(0.0) == []
    delay = owed.owe(Chunk("a"), "id-a", 200, at=10.0)
    assert owed.owe(Chunk("b"), "id-b", 202, at=10.5) == 0.5  # the same outage
    assert "a" in owed and len(owed) == 2
    assert owed.due(10.0) == []  # not before the backoff ends
    delays = [delay]
    at = 10.0 + delays[-1]
    for _ in range(5):
        assert [c.key for c, _, _ in owed.due(at)] == ["a", "b"]
        delays.append(owed.failed(at))
        at += delays[-1]
    assert delays[:4] == sorted(delays[:4]) and delays[0] < delays[3]  # it backs off
    assert max(delays) <= 8.0  # capped
    owed.settled(["a"])
    assert owed.keys() == {"b"} and owed.failures > 0
    owed.settled(["b"])
    assert owed.wait(at) is None and owed.failures == 0 and owed.retry_at == 0.0


@given(st.lists(st.floats(0.0, 0.999), min_size=1, max_size=30))
def test_no_write_is_due_before_its_backoff(draws: list[float]) -> None:
    rolls = iter(draws)
    owed: OwedMarkers[Chunk] = OwedMarkers(
        backoff_base=0.5, backoff_cap=60.0, rng=lambda: next(rolls, 0.5)
    )
    at = 0.0
    owed.owe(Chunk("x"), "id", 200, at)
    for _ in range(len(draws) - 1):
        wait = owed.wait(at)
        assert wait is not None and wait >= 0
        assert owed.due(at) == [] or wait == 0
        at += wait
        assert owed.due(at)
        owed.failed(at)
        assert owed.retry_at >= at
