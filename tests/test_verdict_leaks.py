"""Leaks by iteration on generated timelines: a leak planted in one call path among flat and
noisy ones is found with its slope; allocations freed within each iteration, noise around a
constant, and growth during the warm-up only, are no leak; the marks are read as the scenario
writes them."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.verdict.leaks import (
    LeakParams,
    PathName,
    iteration_groups,
    iteration_mark,
    leak_groups,
    min_measured,
)

HZ = 100
SPAN = 100  # slots per iteration
LABEL = "open details"
LEAKY = 7
PARAMS = LeakParams()


class Run:
    """A generated timeline: per iteration, net bytes per call path, laid out as the timeline
    holds them (alloc and free rows on slots inside the iteration), and its marks."""

    def __init__(self, iterations: int) -> None:
        self.iterations = iterations
        self.memory: dict[int, dict[int, list[int]]] = {}

    def op(self, iteration: int, offset: int, path: int, alloc: int = 0, freed: int = 0) -> None:
        """An operation ``offset`` slots (1..SPAN-1) into ``iteration`` (0-based; -1: before
        the first mark)."""
        slot = SPAN * (iteration + 1) + offset
        row = self.memory.setdefault(slot, {}).setdefault(path, [0, 0, 0, 0, 0])
        row[0] += alloc > 0
        row[1] += alloc
        row[2] += freed > 0
        row[4] += freed

    def net(self, iteration: int, offset: int, path: int, change: int) -> None:
        self.op(iteration, offset, path, alloc=max(change, 0), freed=max(-change, 0))

    def marks(self) -> list[dict[str, object]]:
        numbers = [*range(1, self.iterations + 1), None]
        return [
            {"label": iteration_mark(LABEL, n), "time": (SPAN * (k + 1) + 0.5) / HZ, "offset": 0}
            for k, n in enumerate(numbers)
        ]

    def judge(self, params: LeakParams = PARAMS):
        memory = [(slot, self.memory[slot]) for slot in sorted(self.memory)]
        [group] = leak_groups(memory, 0.0, HZ, self.marks(), name_of, params)
        return group


def name_of(path: int) -> PathName:
    return PathName(f"fn{path}", f"pkg:/source/f{path}.brs")


def freed_within(run: Run, rng: random.Random, path: int) -> None:
    """Allocations of any size, each freed before the iteration ends."""
    for i in range(run.iterations):
        size = rng.randint(1, 1 << 20)
        run.op(i, rng.randint(1, 40), path, alloc=size)
        run.op(i, rng.randint(41, SPAN - 1), path, freed=size)


def around(run: Run, rng: random.Random, path: int, amplitude: int) -> None:
    """Live bytes at each boundary: a constant plus noise within ``amplitude``."""
    run.net(-1, 1, path, 10_000_000)
    level = 0
    for i in range(run.iterations):
        target = rng.randint(-amplitude, amplitude)
        run.net(i, rng.randint(1, SPAN - 1), path, target - level)
        level = target


iterations = st.integers(min_measured(PARAMS.alpha) + PARAMS.warmup, 40)


@given(iterations, st.integers(2048, 1 << 20), st.integers(0, 4), st.randoms(use_true_random=False))
def test_a_planted_leak_is_found_with_its_slope(
    n: int, k: int, others: int, rng: random.Random
) -> None:
    run = Run(n)
    wobble = k // 8  # the leak's own noise: less than it grows
    level = 0
    for i in range(n):
        target = k * (i + 1) + rng.randint(-wobble, wobble)
        run.net(i, rng.randint(1, SPAN - 1), LEAKY, target - level)
        level = target
    for path in range(10, 10 + others):
        freed_within(run, rng, path)
    measured = n - PARAMS.warmup
    for path in range(20, 20 + others):  # noise that cannot add up to the floor
        around(run, rng, path, PARAMS.min_growth // (2 * measured) - 1)
    group = run.judge()
    assert [s.path for s in group.leaks] == [LEAKY]
    [leak] = group.leaks
    assert abs(leak.slope - k) <= 2 * wobble
    assert leak.grew == leak.measured == measured
    assert leak.growth == tuple(b - a for a, b in zip(leak.live, leak.live[1:], strict=False))
    [line] = group.lines()
    assert line.startswith("leak: fn7 (pkg:/source/f7.brs) keeps +")
    assert f'per iteration of "open details" ({n} iterations, 2 warm-up, growth in ' in line


def test_the_line_says_the_growth_and_the_evidence() -> None:
    run = Run(8)
    for i in range(8):
        run.net(i, 10, LEAKY, 12 * 1024)
    [line] = run.judge().lines()
    assert line == (
        'leak: fn7 (pkg:/source/f7.brs) keeps +12.0 KiB live per iteration of "open details" '
        "(8 iterations, 2 warm-up, growth in 6 of 6, p = 2.0e-04)"
    )


@given(iterations, st.integers(1, 6), st.randoms(use_true_random=False))
def test_allocations_freed_within_each_iteration_are_no_leak(
    n: int, paths: int, rng: random.Random
) -> None:
    run = Run(n)
    for path in range(1, paths + 1):
        freed_within(run, rng, path)
    group = run.judge()
    assert group.leaks == () and not group.total.leak
    assert all(s.live[PARAMS.warmup :] == s.live[-1:] * (n - 1) for s in group.paths)
    assert group.lines()[0].startswith(f'no leak: "open details" ({n} iterations, 2 warm-up)')


@given(iterations, st.integers(1, 6), st.randoms(use_true_random=False))
def test_noise_too_small_to_reach_the_floor_is_no_leak(
    n: int, paths: int, rng: random.Random
) -> None:
    run = Run(n)
    for path in range(1, paths + 1):
        around(run, rng, path, PARAMS.min_growth // (2 * (n - PARAMS.warmup)) - 1)
    group = run.judge()
    assert group.leaks == () and not group.total.leak


def test_large_noise_around_a_constant_is_rarely_called_a_leak() -> None:
    """Noise of +-64 KiB: a trend test at alpha = 1 % errs about once in a hundred series."""
    rng = random.Random(20240601)
    called = 0
    for _ in range(300):
        run = Run(rng.randint(6, 20))
        around(run, rng, 1, 64 * 1024)
        called += bool(run.judge().leaks)
    assert called <= 9  # 3 % of 300: the nominal 1 %, with room for chance


@given(
    st.integers(min_measured(PARAMS.alpha), 30),
    st.integers(1, 4),
    st.integers(2048, 1 << 20),
    st.randoms(use_true_random=False),
)
def test_growth_during_the_warm_up_only_is_no_leak(
    measured: int, warmup: int, k: int, rng: random.Random
) -> None:
    n = warmup + measured
    run = Run(n)
    for i in range(warmup):
        run.net(i, rng.randint(1, SPAN - 1), LEAKY, k)
    freed_within(run, rng, LEAKY)
    group = run.judge(LeakParams(warmup=warmup))
    assert group.leaks == () and not group.total.leak
    assert group.total.live[warmup] == warmup * k  # it did grow, in the warm-up


def test_too_few_iterations_are_said_not_judged() -> None:
    run = Run(5)
    for i in range(5):
        run.net(i, 10, LEAKY, 1 << 20)
    group = run.judge()
    assert group.total is None and group.leaks == ()
    assert group.lines() == [
        'no verdict: "open details": 5 iterations (2 warm-up): too few to judge; at least 6 '
        "are needed"
    ]
    assert min_measured(0.01) == 4 and min_measured(0.05) == 3


def test_objects_freed_in_another_call_path_are_no_leak_when_the_end_heap_says_so() -> None:
    run = Run(10)
    for i in range(10):
        run.net(i, 10, 1, 50_000)  # allocates
        run.net(i, 20, 2, -50_000)  # frees what 1 allocated
        run.net(i, 30, LEAKY, 4096)  # a real leak beside them
    memory = [(slot, run.memory[slot]) for slot in sorted(run.memory)]
    [alone] = leak_groups(memory, 0.0, HZ, run.marks(), name_of)
    assert {s.path for s in alone.leaks} == {1, LEAKY}  # frees are the freeing path's
    retained = {1: 0, 2: 0, LEAKY: 10 * 4096}  # the live heap at the end, by allocating path
    [group] = leak_groups(memory, 0.0, HZ, run.marks(), name_of, retained=retained)
    assert [s.path for s in group.leaks] == [LEAKY]


def test_a_leak_spread_over_call_paths_is_the_heaps() -> None:
    run = Run(10)
    for i in range(10):
        run.net(i, 10, 100 + i, 4096)  # a new call path each iteration
    [line] = run.judge().lines()
    assert line.startswith('leak: the heap keeps +4.0 KiB live per iteration of "open details"')
    assert line.endswith("no one call path does)")


def test_callers_are_named_only_where_two_paths_share_a_leaf() -> None:
    run = Run(8)
    for i in range(8):
        for path in (1, 2, 3):
            run.net(i, 10, path, 8192)
    names = {
        1: PathName("f", "a.brs", "g"),
        2: PathName("f", "a.brs", "h"),
        3: PathName("x", "b.brs", "g"),
    }
    memory = [(slot, run.memory[slot]) for slot in sorted(run.memory)]
    [group] = leak_groups(memory, 0.0, HZ, run.marks(), names.get)
    assert sorted(line.split(" keeps")[0] for line in group.lines()) == [
        "leak: f (a.brs) via g",
        "leak: f (a.brs) via h",
        "leak: x (b.brs)",
    ]


def test_marks_are_grouped_by_label_in_order_and_cut_where_they_stop() -> None:
    marks = [
        {"label": "a #1", "time": 1.0},
        {"label": "b #1", "time": 1.5},
        {"label": "a #2", "time": 2.0},
        {"label": "a #end", "time": 3.0},
        {"label": "b #2", "time": 2.5},
        {"label": "b #4", "time": 4.0},  # #3 lost: b ends at #2
        {"label": "browse", "time": 0.5},
        {"label": "c #2", "time": 1.0},  # no #1: no group
        {"label": "d #1", "time": "soon"},
    ]
    assert iteration_groups(marks) == {"a": ([1.0, 2.0, 3.0], True), "b": ([1.5, 2.5], False)}


@pytest.mark.parametrize("n", [10, 1000])
def test_the_cost_is_one_pass_over_the_operations(n: int) -> None:
    """A thousand iterations of a thousand call paths each: the series of the paths that
    changed, the trend tests of at most max_paths of them."""
    run = Run(n)
    for i in range(n):
        for path in range(1000 // n * 10):
            run.net(i, 5, path, 100)
            run.net(i, 50, path, -100)
        run.net(i, 60, LEAKY, 4096)
    group = run.judge()
    assert [s.path for s in group.leaks] == [LEAKY]
    assert len(group.paths) <= PARAMS.max_paths
