"""The sampler's step in C (``_native/sampler_take.c``) against the Python one.

Both are fed the same generated deltas; after each, the samples handed out, every call path's
remainder and every thread's carried sum (with the dicts' order, which later steps iterate) are
the same, and so is the end of the run's rounding. Numbers beyond what the C code computes
exactly are declined with nothing changed, and the Python step does the work.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rokuprof.sentry.sampling import WALL_UNITS, Sampler


@pytest.fixture
def take(native_engine):
    from rokuprof.profile import engine

    native = engine.native_function("sampler_take")
    assert native is not None
    return native


walls = st.integers(0, 3_000_000) | st.integers(-50_000, 50_000) | st.sampled_from([0, 1, 9_900])
deltas = st.lists(
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 12), walls), max_size=12), max_size=12
)


def state(sampler: Sampler) -> tuple[list, list]:
    return list(sampler.rest.items()), list(sampler.carry.items())


def step_both(native, python: Sampler, c: Sampler, delta: list) -> list:
    expected = python.take(list(delta))
    got = c.take(list(delta))
    assert got == expected
    assert state(c) == state(python)
    return got


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(deltas, st.sampled_from(sorted(WALL_UNITS)), st.sampled_from([1, 7, 101]))
def test_the_c_step_gives_the_python_steps_samples_and_remainders(take, deltas, unit, hz):
    python, c = Sampler(unit, hz), Sampler(unit, hz, take)
    for delta in deltas:
        # a call path's thread is fixed, as the builder has it (a path may repeat in a delta
        # here, which the builder never does: both still agree)
        delta = [(path % 4, path, wall) for _thread, path, wall in delta]
        step_both(take, python, c, delta)
    thread_of = {path: path % 4 for path in range(13)}.get
    assert c.round_off(thread_of) == python.round_off(thread_of)
    assert state(c) == state(python)


def test_numbers_beyond_64_bits_are_left_to_python(take):
    python, c = Sampler("us"), Sampler("us", native=take)
    delta = [(1, 5, 10**30), (1, 6, 3_000)]
    rest, carry = dict(c.rest), dict(c.carry)
    assert take(delta, c.rest, c.carry, c.units, c.hz) is None
    assert (c.rest, c.carry) == (rest, carry)  # declined: nothing changed
    samples = step_both(take, python, c, delta)  # and the sampler's own step did the work
    assert samples[0][:2] == (1, 5) and samples[0][2] > 10**24
    step_both(take, python, c, [(1, 5, 40_000), (2, 7, 20_000)])  # in range again: C
    c.rest[9] = "not a number"
    assert take([(1, 9, 1)], c.rest, c.carry, c.units, c.hz) is None


def test_many_threads_each_owed_a_period(take):
    """Threads are served in the order their first positive remainder came, each its own
    largest remainders first, whatever the number of threads."""
    python, c = Sampler("us", 101), Sampler("us", 101, take)
    delta = [(t, 1000 + t * 10 + i, 4_000 + 37 * i + t) for t in range(300) for i in range(4)]
    step_both(take, python, c, delta)
    step_both(take, python, c, list(reversed(delta)))
