"""Does a series keep growing? The Theil-Sen slope and the one-sided Mann-Kendall test (pure).

A series here is values at equally spaced points ``0, 1, .., n-1`` (live bytes at each
iteration boundary). Both statistics look at every pair ``i < j``:

* :func:`theil_sen_slope`: the median of the pairwise slopes ``(y[j] - y[i]) / (j - i)`` (the
  mean of the two middle ones when their count is even): what ``scipy.stats.theilslopes(y)``
  returns as ``slope``. Robust: a few outliers do not move it.
* :func:`mann_kendall_p`: the p-value of "the series increases", from ``S``, the number of
  pairs that grow minus those that shrink (equal values count neither): what
  ``scipy.stats.kendalltau(range(n), y, alternative="greater").pvalue`` returns, derived as
  SciPy decides (its source, 1.17: ``method="auto"``):

  * **exact** when no two values are equal and ``n <= 33``, or when at most one pair is out of
    order in either direction: the share of the ``n!`` orderings with at least as many rising
    pairs, counted with the Mahonian numbers (orderings of ``n`` by their inversions), here in
    whole numbers, so exactly;
  * **asymptotic** otherwise: ``S`` over its standard deviation under no trend, with the tie
    correction ``var = (n(n-1)(2n+5) - sum t(t-1)(2t+5)) / 18`` over the groups of ``t`` equal
    values, and the normal distribution's upper tail.

  A series of fewer than two values, or of equal values only, has no order: SciPy says NaN,
  this says ``1.0`` (no evidence of growth).

Cost: quadratic in ``n`` (every pair), which the callers bound (at most 1,000 iterations).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

#: SciPy's rule: exact counts up to this many values (without ties)
EXACT_MAX = 33


def theil_sen_slope(y: Sequence[float]) -> float:
    """The median of the slopes between every two points of ``y`` (at x = 0, 1, ..); 0.0 for
    fewer than two points."""
    n = len(y)
    if n < 2:
        return 0.0
    slopes = sorted((y[j] - y[i]) / (j - i) for i in range(n) for j in range(i + 1, n))
    half, odd = divmod(len(slopes), 2)
    return slopes[half] if odd else (slopes[half - 1] + slopes[half]) / 2


def mann_kendall_s(y: Sequence[float]) -> int:
    """Pairs ``i < j`` with ``y[j] > y[i]`` minus those with ``y[j] < y[i]``."""
    n = len(y)
    return sum((b > a) - (b < a) for i, a in enumerate(y) for b in (y[j] for j in range(i + 1, n)))


def mann_kendall_p(y: Sequence[float]) -> float:
    """The one-sided p-value of "``y`` increases" (see the module docstring for the method);
    1.0 for fewer than two values or when all are equal."""
    n = len(y)
    pairs = n * (n - 1) // 2
    groups = [t for t in Counter(y).values() if t > 1]
    tied = sum(t * (t - 1) // 2 for t in groups)
    if n < 2 or tied == pairs:
        return 1.0
    s = mann_kendall_s(y)
    rising = (pairs + s) // 2 if not groups else None  # without ties: S = rising - falling
    if rising is not None and (n <= EXACT_MAX or min(rising, pairs - rising) <= 1):
        return _exact_at_least(n, rising)
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in groups)) / 18
    return 0.5 * math.erfc(s / math.sqrt(var) / math.sqrt(2))


def _exact_at_least(n: int, rising: int) -> float:
    """P(at least ``rising`` of the pairs of a random ordering of ``n`` distinct values rise)."""
    pairs = n * (n - 1) // 2
    total = math.factorial(n)
    if rising >= pairs - 1 and n > EXACT_MAX:  # one ordering has all, n - 1 miss one pair
        return (1 if rising == pairs else n) / total
    if rising <= 1 and n > EXACT_MAX:
        return 1.0 if rising == 0 else 1 - 1 / total
    counts = _mahonian(n)  # orderings by rising pairs (symmetric: by falling ones too)
    return sum(counts[rising:]) / total


def _mahonian(n: int) -> list[int]:
    """How many orderings of ``n`` distinct values have k inversions, for k = 0 .. n(n-1)/2."""
    counts = [1]
    for m in range(2, n + 1):  # inserting the m-th value adds 0 .. m-1 inversions
        grown = [0] * (len(counts) + m - 1)
        running = 0
        for k in range(len(grown)):
            running += counts[k] if k < len(counts) else 0
            if k - m >= 0:
                running -= counts[k - m]
            grown[k] = running
        counts = grown
    return counts
