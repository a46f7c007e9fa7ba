"""The regression gate's statistics (rokuprof/verdict/stats.py) agree with SciPy and NumPy, the
references they are written to equal: Hypothesis samples (tied integers and floats, sizes 1..30
and a few larger) and hand cases named for what they show."""

from __future__ import annotations

import random
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from rokuprof.verdict import stats
from rokuprof.verdict.stats import (
    difference_p,
    iqr,
    ks_p,
    mann_whitney_p,
    median,
    quantile,
    separation,
)


def _close(ours: float, reference: float) -> bool:
    """The agreement the module promises: 1e-9 relative or 1e-12 absolute."""
    return abs(ours - reference) <= max(1e-12, 1e-9 * abs(reference))


def _scipy_mwu(a: list[float], b: list[float]) -> float:
    return float(scipy_stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)


def _scipy_ks(a: list[float], b: list[float]) -> tuple[float, bool]:
    """SciPy's ks_2samp p-value, and whether SciPy gave up on its exact path (it warns)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = float(scipy_stats.ks_2samp(a, b).pvalue)
    return p, any("Exact calculation unsuccessful" in str(w.message) for w in caught)


def _assert_ks_agrees(a: list[float], b: list[float]) -> None:
    reference, gave_up = _scipy_ks(a, b)
    ours = ks_p(a, b)
    if gave_up:  # the documented deviation: SciPy's rounding above 1, we stay exact
        assert reference > 0.9999 and abs(ours - reference) < 1e-4, (ours, reference)
    else:
        assert _close(ours, reference), (ours, reference)


tied = st.lists(st.integers(-3, 3).map(float), min_size=1, max_size=30)
spread = st.lists(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=1, max_size=30
)
samples = st.one_of(tied, spread)
shifted_pairs = st.tuples(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30),
    st.floats(-1.5, 1.5, allow_nan=False),
).map(lambda t: (t[0], [v + t[2] for v in t[1]]))


# ---- location and spread ----------------------------------------------------------------


@settings(deadline=None, max_examples=200)
@given(samples, st.floats(0, 1))
def test_quantile_median_and_iqr_equal_numpy_linear_method(values, q):
    """quantile is numpy.quantile (linear), median numpy.median, iqr the quartiles' gap."""
    assert _close(quantile(values, q), float(np.quantile(values, q)))
    assert _close(median(values), float(np.median(values)))
    expected_iqr = float(np.quantile(values, 0.75) - np.quantile(values, 0.25))
    assert abs(iqr(values) - expected_iqr) <= max(1e-9, 1e-9 * abs(expected_iqr))


def test_quantile_ends_are_the_smallest_and_largest_values():
    values = [3.0, -1.0, 7.5, 2.0]
    assert quantile(values, 0.0) == -1.0
    assert quantile(values, 1.0) == 7.5


def test_median_of_an_even_count_is_the_mean_of_the_middle_two():
    assert median([1.0, 4.0, 2.0, 10.0]) == 3.0


def test_iqr_of_one_value_is_zero():
    assert iqr([42.0]) == 0.0


def test_empty_sample_or_q_outside_zero_one_is_a_value_error():
    with pytest.raises(ValueError):
        median([])
    with pytest.raises(ValueError):
        quantile([], 0.5)
    with pytest.raises(ValueError):
        quantile([1.0], 1.5)


# ---- Mann-Whitney U ----------------------------------------------------------------------


@settings(deadline=None, max_examples=300)
@given(samples, samples)
def test_mann_whitney_p_equals_scipy_on_tied_and_float_samples(a, b):
    """Exact path (a side of at most 8, no ties) and tie-corrected normal path alike."""
    assert _close(mann_whitney_p(a, b), _scipy_mwu(a, b))


@settings(deadline=None, max_examples=150)
@given(shifted_pairs)
def test_mann_whitney_p_equals_scipy_on_shifted_samples(pair):
    """Shifted samples reach the small p-values a gate decides on."""
    a, b = pair
    assert _close(mann_whitney_p(a, b), _scipy_mwu(a, b))


def test_five_runs_above_five_baseline_runs_give_p_2_over_252():
    """The exact distribution: one of C(10, 5) = 252 orderings, either way round."""
    baseline = [10.0, 11.0, 12.0, 13.0, 14.0]
    runs = [20.0, 21.0, 22.0, 23.0, 24.0]
    assert mann_whitney_p(baseline, runs) == pytest.approx(2 / 252, rel=1e-12)
    assert _close(mann_whitney_p(baseline, runs), _scipy_mwu(baseline, runs))


def test_all_values_equal_gives_p_one_where_the_variance_is_zero():
    """Every pooled value ties: the normal path has variance 0; SciPy clips its 2 to 1.0."""
    a, b = [5.0] * 4, [5.0] * 6
    assert mann_whitney_p(a, b) == 1.0 == _scipy_mwu(a, b)
    assert mann_whitney_p([5.0], [5.0]) == 1.0 == _scipy_mwu([5.0], [5.0])


def test_one_value_each_is_exact_and_never_significant():
    assert mann_whitney_p([1.0], [2.0]) == 1.0 == _scipy_mwu([1.0], [2.0])


@pytest.mark.parametrize(("n1", "n2"), [(1, 5), (3, 40), (8, 200), (9, 9), (50, 50)])
def test_mann_whitney_p_equals_scipy_for_uneven_and_larger_sizes(n1, n2):
    rng = random.Random(n1 * 1000 + n2)
    for shift in (0.0, 0.5, 3.0):
        a = [rng.gauss(0, 1) for _ in range(n1)]
        b = [rng.gauss(shift, 1) for _ in range(n2)]
        assert _close(mann_whitney_p(a, b), _scipy_mwu(a, b))


def test_negative_and_huge_values_rank_like_any_others():
    a = [-1e300, -5e299, 1e-300, 3.0]
    b = [1e300, 9e299, 8e299, 7e299, 6e299]
    assert _close(mann_whitney_p(a, b), _scipy_mwu(a, b))
    _assert_ks_agrees(a, b)


# ---- Kolmogorov-Smirnov ------------------------------------------------------------------


@settings(deadline=None, max_examples=300)
@given(samples, samples)
def test_ks_p_equals_scipy_exact_path_on_tied_and_float_samples(a, b):
    _assert_ks_agrees(a, b)


@settings(deadline=None, max_examples=150)
@given(shifted_pairs)
def test_ks_p_equals_scipy_exact_path_on_shifted_samples(pair):
    _assert_ks_agrees(*pair)


@pytest.mark.parametrize(
    ("n1", "n2"), [(1, 5), (3, 40), (50, 50), (200, 150), (1000, 999), (10_000, 7)]
)
def test_ks_p_equals_scipy_exact_path_for_uneven_and_larger_sizes(n1, n2):
    rng = random.Random(n1 * 100_000 + n2)
    for shift in (0.0, 0.1, 1.0):
        a = [rng.gauss(0, 1) for _ in range(n1)]
        b = [rng.gauss(shift, 1) for _ in range(n2)]
        _assert_ks_agrees(a, b)


def test_ks_all_values_equal_gives_p_one():
    assert ks_p([2.0] * 3, [2.0] * 5) == 1.0 == _scipy_ks([2.0] * 3, [2.0] * 5)[0]


def test_ks_where_scipy_rounds_above_one_we_answer_the_exact_one():
    """7 vs 7 interleaved: the largest CDF gap is 1/7, which every ordering reaches (p = 1);
    SciPy's sum rounds above 1 and falls back to kstwo's 0.99996."""
    a = [float(v) for v in range(0, 14, 2)]
    b = [float(v) for v in range(1, 14, 2)]
    reference, gave_up = _scipy_ks(a, b)
    assert gave_up and reference == pytest.approx(0.99996, abs=1e-5)
    assert ks_p(a, b) == 1.0


def test_ks_beyond_the_exact_band_budget_only_approximates_tiny_p_values():
    """10,000 vs 9,999 with a gap whose band exceeds KS_EXACT_CELLS: Stephens' formula (the
    documented deviation) for a p-value SciPy puts below 1e-12, within 10% of it."""
    rng = random.Random(7)
    a = [rng.gauss(0, 1) for _ in range(10_000)]
    b = [rng.gauss(0.12, 1) for _ in range(9_999)]
    assert 2 * stats._ks_distance(a, b) > stats.KS_EXACT_CELLS
    reference, _ = _scipy_ks(a, b)
    assert reference < 1e-12
    assert ks_p(a, b) == pytest.approx(reference, rel=0.1)


def test_ks_beyond_scipys_exact_limit_approximates_within_a_few_percent():
    """Over 10,000 values SciPy itself leaves the exact path (kstwo at n1 n2 / (n1 + n2))."""
    rng = random.Random(8)
    a = [rng.gauss(0, 1) for _ in range(20_000)]
    b = [rng.gauss(0.03, 1) for _ in range(15_000)]
    reference, _ = _scipy_ks(a, b)
    assert ks_p(a, b) == pytest.approx(reference, rel=0.05)


def test_ten_thousand_against_ten_thousand_is_fast_and_equals_scipy():
    rng = random.Random(9)
    a = [rng.gauss(0, 1) for _ in range(10_000)]
    b = [rng.gauss(0.02, 1) for _ in range(10_000)]
    started = time.perf_counter()
    p = difference_p(a, b)
    assert time.perf_counter() - started < 1.0
    assert _close(mann_whitney_p(a, b), _scipy_mwu(a, b))
    _assert_ks_agrees(a, b)
    assert p == min(mann_whitney_p(a, b), ks_p(a, b))


# ---- the gate's combinations ---------------------------------------------------------------


@settings(deadline=None, max_examples=100)
@given(samples, samples)
def test_difference_p_is_the_smaller_of_the_two_tests(a, b):
    assert difference_p(a, b) == min(mann_whitney_p(a, b), ks_p(a, b))


def test_difference_p_catches_a_change_in_spread_that_mann_whitney_misses():
    """Same centre, wider spread: MWU sees nothing, K-S sees it (Pinpoint's reason for both)."""
    baseline = [10.0 + 0.01 * i for i in range(-20, 21)]
    wider = [10.0 + 0.2 * i for i in range(-20, 21)]
    assert mann_whitney_p(baseline, wider) > 0.5
    assert difference_p(baseline, wider) == ks_p(baseline, wider) < 0.01


def test_difference_p_of_an_empty_sample_is_one():
    assert difference_p([], [1.0, 2.0]) == 1.0
    assert difference_p([1.0], []) == 1.0


def test_separation_counts_runs_above_and_below_every_baseline_run():
    assert separation([10.0, 11.0, 12.0], [20.0, 21.0, 22.0, 23.0, 24.0]) == (5, 0)
    assert separation([10.0, 11.0, 12.0], [1.0, 11.0, 12.0, 13.0]) == (1, 1)
    assert separation([5.0], [5.0, 5.0]) == (0, 0)  # a tie is neither above nor below


def test_separation_with_an_empty_sample_is_zero_zero():
    assert separation([], [1.0]) == (0, 0)
    assert separation([1.0], []) == (0, 0)
