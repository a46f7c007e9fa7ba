"""The trend statistics equal SciPy's on generated series: the Theil-Sen slope
(``theilslopes``) and the one-sided Mann-Kendall p-value (``kendalltau(range(n), y,
alternative="greater")``), on both of SciPy's paths (exact without ties up to 33 values or one
pair out of order, asymptotic with the tie correction otherwise)."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from rokuprof.verdict.trend import mann_kendall_p, mann_kendall_s, theil_sen_slope

#: few distinct values (many ties), any floats, distinct integers (the exact path)
values = st.one_of(
    st.lists(st.integers(0, 4), min_size=2, max_size=60),
    st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=2, max_size=60),
    st.lists(st.integers(-(10**6), 10**6), min_size=2, max_size=45, unique=True),
)


def scipy_p(y: list[float]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(stats.kendalltau(range(len(y)), y, alternative="greater").pvalue)
    return 1.0 if math.isnan(p) else p  # all values equal: no order, so no evidence


@given(values)
def test_the_slope_is_scipys_theil_sen(y: list[float]) -> None:
    assert theil_sen_slope(y) == pytest.approx(stats.theilslopes(y).slope, rel=1e-12, abs=1e-9)


@given(values)
def test_the_p_value_is_scipys_one_sided_kendall_tau(y: list[float]) -> None:
    assert mann_kendall_p(y) == pytest.approx(scipy_p(y), rel=1e-9, abs=1e-15)


@given(st.integers(2, 80), st.integers(0, 2), st.booleans(), st.data())
def test_nearly_sorted_series_take_scipys_exact_tail_at_any_length(
    n: int, swaps: int, falling: bool, data: st.DataObject
) -> None:
    """One pair out of order past 33 values is still SciPy's exact path (its closed forms)."""
    y = list(range(n))
    for _ in range(swaps):
        i = data.draw(st.integers(0, n - 2))
        y[i], y[i + 1] = y[i + 1], y[i]
    if falling:
        y.reverse()
    assert mann_kendall_p(y) == pytest.approx(scipy_p(y), rel=1e-9, abs=1e-15)


def test_the_edges() -> None:
    assert theil_sen_slope([]) == theil_sen_slope([5]) == 0.0
    assert mann_kendall_p([]) == mann_kendall_p([3]) == mann_kendall_p([2, 2, 2]) == 1.0
    assert mann_kendall_s([1, 2, 3, 3]) == 5
    assert mann_kendall_p(list(range(7))) == pytest.approx(1 / math.factorial(7))
    assert theil_sen_slope([0, 10, 20, 30, 1000]) == 10.0  # one outlier does not move it
