"""The daemon's supervision rules (:mod:`rokuprof.daemon.supervision`) as scripts: times and
random draws are inputs, so every delay is exact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.daemon.supervision import REPEAT_LOG_SECONDS, RepeatFilter, Restarts


def test_restarts_double_up_to_the_cap_and_a_healthy_run_starts_the_count_again() -> None:
    restarts = Restarts(base=1.0, cap=8.0)
    # a loop failing at once, five times, with the top of the jitter: 1, 2, 4, 8, 8 seconds
    assert [restarts.after_failure(ran=0.1, draw=1.0) for _ in range(5)] == [1, 2, 4, 8, 8]
    assert restarts.after_failure(ran=0.1, draw=0.5) == 4.0  # half the ceiling
    assert restarts.after_failure(ran=9.0, draw=1.0) == 1.0  # it ran past the cap: healthy
    assert (restarts.failures, restarts.total) == (1, 7)


def test_a_cap_below_the_base_is_the_ceiling() -> None:
    restarts = Restarts(base=1.0, cap=0.3)  # a test's fast daemon
    assert restarts.after_failure(ran=0.0, draw=1.0) == 0.3
    with pytest.raises(ValueError, match="must be > 0"):
        Restarts(base=0.0)


@given(
    st.floats(0.01, 10),
    st.floats(0.01, 100),
    st.lists(st.tuples(st.floats(0, 1000), st.floats(0, 1, exclude_max=True)), max_size=40),
)
def test_every_delay_is_within_zero_and_the_cap(base, cap, failures) -> None:
    restarts = Restarts(base=base, cap=cap)
    for ran, draw in failures:
        assert 0.0 <= restarts.after_failure(ran, draw) <= cap
    assert restarts.total == len(failures)


def test_a_repeated_message_is_said_again_only_when_it_changes_or_the_window_passed() -> None:
    said = RepeatFilter(window=REPEAT_LOG_SECONDS)
    script = [
        ("refused", 0.0, True),
        ("refused", 10.0, False),
        ("refused", 299.0, False),
        ("timeout", 300.0, True),
        ("refused", 301.0, True),
        ("refused", 600.9, False),
        ("refused", 601.0, True),
    ]
    assert [said.admit(text, now) for text, now, _ in script] == [ok for *_, ok in script]
