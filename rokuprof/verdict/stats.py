"""The statistics of the regression gate (pure core: standard library only).

Each function answers one question about two samples of runs ``a`` (the baseline) and ``b``
(the candidate), and equals the SciPy / NumPy call named beside it; ``tests/test_verdict_stats.py``
checks that against SciPy, which is a test dependency only and never imported here.

``median(values)``
    The middle value: ``numpy.median``. ValueError on an empty sample.
``quantile(values, q)``
    The ``q`` quantile, interpolated linearly between order statistics: ``numpy.quantile(values,
    q)`` (method ``"linear"``). ValueError on an empty sample or ``q`` outside [0, 1].
``iqr(values)``
    The spread of the middle half, ``quantile(.75) - quantile(.25)``; 0.0 for one value.
``mann_whitney_p(a, b)``
    Does one sample tend to take larger values than the other?
    ``scipy.stats.mannwhitneyu(a, b, alternative="two-sided").pvalue`` (``method="auto"``,
    continuity correction on). Like SciPy's ``auto``: the exact null distribution of U when the
    smaller sample has at most 8 values and no value occurs twice in the pooled sample, else the
    normal approximation with the tie correction of the variance and the 1/2 continuity
    correction. Where every pooled value is equal the variance is 0: SciPy then divides -1/2 by 0
    and clips the resulting 2 to 1.0 (it never gives nan); this returns 1.0 directly.
``ks_p(a, b)``
    Do the two samples come from different distributions (any difference: location, spread,
    shape)? ``scipy.stats.ks_2samp(a, b).pvalue`` (two-sided, ``method="auto"``). The exact
    probability that a random interleaving of the samples reaches the observed largest distance
    between their empirical CDFs, which SciPy's ``auto`` uses when neither sample exceeds 10,000
    values; see "Deviations" for where this module approximates instead.
``difference_p(a, b)``
    Did anything change? ``min(mann_whitney_p, ks_p)``, Chromium Pinpoint's rule: the
    Mann-Whitney test is bad at detecting changes in variance, the Kolmogorov-Smirnov test is bad
    with discrete distributions. 1.0 when either sample is empty.
``separation(a, b)``
    ``(how many of b are above every a, how many of b are below every a)``, for explanations such
    as "all 5 runs above every baseline run"; ``(0, 0)`` when either sample is empty.

Values must not be NaN (SciPy rejects them or returns nan); ties are welcome everywhere.

Deviations from SciPy (documented, tested as such):

* ``ks_p`` with samples of different sizes: the exact probability counts lattice paths through a
  band of about ``2 * D * len(a) * len(b)`` cells, which pure Python walks at roughly 25 million
  cells a second. Above :data:`KS_EXACT_CELLS` cells, and wherever SciPy itself leaves the exact
  path (a sample over 10,000 values, where SciPy evaluates the one-sample distribution ``kstwo``
  at the effective size ``N = n1 n2 / (n1 + n2)``), this module uses Kolmogorov's limiting
  distribution with Stephens' finite-sample correction ``(sqrt(N) + 0.12 + 0.11 / sqrt(N)) D``.
  Within SciPy's exact region the budget is only exceeded by a gap so large that
  ``sqrt(N) D >= 3.5``: the p-value is below 5e-11 and ours is within 10% of it (so within
  1e-11 absolute); over 10,000 values the two agree to a few percent. Samples of equal size take
  the exact path at any size: it costs O(n).
* ``ks_p`` where the exact answer is (nearly) 1: SciPy's float sum for equal sizes can round
  just above 1 (e.g. 7 vs 7 values, largest CDF gap 1/7); SciPy then warns "Exact calculation
  unsuccessful" and answers from ``kstwo`` instead (0.99996 there). This returns the exact
  answer (1.0 there); the two differ by less than 1e-4, only for p-values above 0.9999.

Cost: sorting dominates, O(n log n), except the exact paths, which run only where SciPy's own
cut-offs put them (Mann-Whitney: O(min(n1, n2) * U) integer additions with the smaller sample
at most 8; Kolmogorov-Smirnov: O(n) for equal sizes, the cell budget above otherwise). Nothing
recurses.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

#: The largest band, in lattice cells, ``ks_p`` walks exactly for samples of different sizes
#: (about 0.4 s of pure Python); above it, the asymptotic formula.
KS_EXACT_CELLS = 10_000_000

#: SciPy's ``ks_2samp`` ``auto``: exact while neither sample has more values than this.
_KS_SCIPY_EXACT_MAX = 10_000

#: SciPy's ``mannwhitneyu`` ``auto``: exact only if the smaller sample has at most this many
#: values (and there are no ties).
_MWU_EXACT_MAX = 8


# ---- location and spread ------------------------------------------------------------------


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values``: with the values sorted, position ``q * (n - 1)``,
    interpolated linearly between its two neighbours (``numpy.quantile``, method "linear")."""
    if not values:
        raise ValueError("quantile of an empty sample")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q!r} outside [0, 1]")
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    if low >= len(ordered) - 1:
        return float(ordered[-1])
    fraction = position - low
    below, above = ordered[low], ordered[low + 1]
    # Interpolate from the nearer end, so that q = 0 and q = 1 give the order statistics exactly.
    if fraction >= 0.5:
        return above - (above - below) * (1.0 - fraction)
    return below + (above - below) * fraction


def median(values: Sequence[float]) -> float:
    """The middle value of ``values`` (the mean of the two middle ones for an even count)."""
    return quantile(values, 0.5)


def iqr(values: Sequence[float]) -> float:
    """The interquartile range: ``quantile(.75) - quantile(.25)``; 0.0 for one value."""
    return quantile(values, 0.75) - quantile(values, 0.25)


def separation(a: Sequence[float], b: Sequence[float]) -> tuple[int, int]:
    """``(how many of b are above every a, how many of b are below every a)``; ``(0, 0)`` when
    either sample is empty (there is no baseline to be above or below)."""
    if not a or not b:
        return 0, 0
    top, bottom = max(a), min(a)
    return sum(1 for v in b if v > top), sum(1 for v in b if v < bottom)


def difference_p(a: Sequence[float], b: Sequence[float]) -> float:
    """The smaller of the Mann-Whitney and Kolmogorov-Smirnov p-values (Chromium Pinpoint's
    rule: each test covers the other's blind spot); 1.0 when either sample is empty."""
    if not a or not b:
        return 1.0
    return min(mann_whitney_p(a, b), ks_p(a, b))


# ---- Mann-Whitney U -------------------------------------------------------------------------


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p-value, as ``scipy.stats.mannwhitneyu`` (``method="auto"``,
    continuity correction): exact when ``min(len(a), len(b)) <= 8`` and no pooled value repeats,
    the tie-corrected normal approximation otherwise. ValueError on an empty sample."""
    if not a or not b:
        raise ValueError("mann_whitney_p needs two non-empty samples")
    n1, n2 = len(a), len(b)
    ordered_b = sorted(b)
    # U of a: the pairs where a wins, a tie counting half. Doubled, it stays an integer.
    twice_u1 = sum(bisect.bisect_left(ordered_b, v) + bisect.bisect_right(ordered_b, v) for v in a)
    group_sizes = [len(list(group)) for _, group in itertools.groupby(sorted([*a, *b]))]
    ties = any(size > 1 for size in group_sizes)
    if min(n1, n2) <= _MWU_EXACT_MAX and not ties:
        u_low = min(twice_u1, 2 * n1 * n2 - twice_u1) // 2
        return min(1.0, 2.0 * _u_cdf(u_low, n1, n2))
    return _mann_whitney_normal(twice_u1 / 2, n1, n2, group_sizes)


def _u_cdf(u: int, n1: int, n2: int) -> float:
    """P(U <= u) under the null hypothesis, exactly, for samples of ``n1`` and ``n2`` values
    without ties.

    U counts the pairs (x from the first sample, y from the second) with x > y; an interleaving
    of the samples is a lattice path, and U the area under it. The number of paths with area k
    is the coefficient of q**k in the Gaussian binomial ``[n1 + n2 choose s]_q = prod_{i=1..s}
    (1 - q**(L + i)) / (1 - q**i)`` (s the smaller, L the larger size), every path equally
    likely. The coefficients are built up to degree ``u`` in integers: dividing by ``1 - q**i``
    is a running sum with stride i, multiplying by ``1 - q**(L + i)`` a shifted subtraction.
    """
    small, large = min(n1, n2), max(n1, n2)
    counts = [1] + [0] * u
    for i in range(1, small + 1):
        for k in range(i, u + 1):
            counts[k] += counts[k - i]
        shift = large + i
        for k in range(u, shift - 1, -1):
            counts[k] -= counts[k - shift]
    return float(Fraction(sum(counts), math.comb(n1 + n2, small)))


def _mann_whitney_normal(u1: float, n1: int, n2: int, group_sizes: list[int]) -> float:
    """Two-sided p-value of U from the normal approximation: mean n1 n2 / 2, variance
    ``n1 n2 / 12 * ((n + 1) - sum(t**3 - t) / (n (n - 1)))`` over the tie groups t, and the
    larger U moved 1/2 towards the mean (continuity); 1.0 when every value ties (variance 0)."""
    n = n1 + n2
    tie_term = sum(t**3 - t for t in group_sizes)
    variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0.0:
        return 1.0
    mean = n1 * n2 / 2
    z = (max(u1, n1 * n2 - u1) - mean - 0.5) / math.sqrt(variance)
    # 2 * P(Z > z) for a standard normal Z
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


# ---- Kolmogorov-Smirnov ---------------------------------------------------------------------


def ks_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided two-sample Kolmogorov-Smirnov p-value, as ``scipy.stats.ks_2samp`` (``method=
    "auto"``); see the module docstring for where it approximates. ValueError on an empty
    sample."""
    if not a or not b:
        raise ValueError("ks_p needs two non-empty samples")
    m, n = len(a), len(b)
    distance = _ks_distance(a, b)  # max |F_a - F_b| * m * n, an integer
    if distance == 0:
        return 1.0
    if max(m, n) <= _KS_SCIPY_EXACT_MAX:
        if m == n:
            return _ks_equal_sizes(n, distance // n)
        if 2 * distance <= KS_EXACT_CELLS:
            return _ks_band(m, n, distance)
    return _ks_asymptotic(m, n, distance / (m * n))


def _ks_distance(a: Sequence[float], b: Sequence[float]) -> int:
    """The largest gap between the empirical CDFs of ``a`` and ``b``, times ``len(a) * len(b)``
    (so an integer), looked at only after every copy of a tied value (as SciPy does)."""
    m, n = len(a), len(b)
    ordered_a, ordered_b = sorted(a), sorted(b)
    largest = 0
    for v in sorted({*a, *b}):
        gap = abs(bisect.bisect_right(ordered_a, v) * n - bisect.bisect_right(ordered_b, v) * m)
        largest = max(largest, gap)
    return largest


def _ks_equal_sizes(n: int, h: int) -> float:
    """P(max |x - y| >= h) over the uniformly random lattice paths from (0, 0) to (n, n): by the
    reflection principle, ``2 * sum_{k>=1} (-1)**(k-1) C(2n, n - k h) / C(2n, n)``. Each ratio
    is the previous one times ``prod (n - j) / (n + j + 1)`` over the next h values of j, so
    the whole sum takes O(n) float operations; the terms shrink, so the sum stops early."""
    total = 0.0
    ratio = 1.0  # C(2n, n - j) / C(2n, n) for the j reached so far
    j = 0
    sign = 1.0
    while j + h <= n:
        for step in range(j, j + h):
            ratio *= (n - step) / (n + step + 1)
        j += h
        if ratio == 0.0:
            break
        total += sign * ratio
        sign = -sign
    return min(1.0, max(0.0, 2.0 * total))


def _ks_band(m: int, n: int, distance: int) -> float:
    """P(max |x n - y m| >= distance) over the uniformly random lattice paths from (0, 0) to
    (m, n): one minus the share of paths that stay strictly inside the band.

    Paths are counted column by column (x fixed, y rising): the count at (x, y) is the count at
    (x - 1, y) plus the count at (x, y - 1), and 0 outside the band, so each column is the
    running sum of the previous column over the band's rows (``itertools.accumulate``, which
    runs in C). Along a column the counts grow about (m + n) / n times a row, far beyond a
    float's range over a wide band; so row y is stored times 2**-(k * (y // BLOCK)), k chosen to
    cancel that growth block by block (the running sum crossing into a block is scaled by
    2**-k), and each column is rescaled by a power of two (kept in ``exponent``) to keep its
    largest count near 1. Counts that underflow then are negligible next to the largest.
    """
    if m > n:
        m, n = n, m  # fewer columns (Python steps), longer running sums (C steps); (m+n)/n <= 2
    block = 256
    k = round(block * math.log2((m + n) / n))

    def rows(x: int) -> tuple[int, int]:
        low = max(0, (x * n - distance) // m + 1)
        high = min(n, -((-(x * n + distance)) // m) - 1)
        return low, high

    def running_sums(values: list[float], first: int) -> list[float]:
        """The scaled running sums of ``values`` (rows ``first`` onwards), block by block."""
        out: list[float] = []
        carry = 0.0
        start = 0
        while start < len(values):
            row = first + start
            stop = start + block - row % block  # the end of this row's block
            piece = values[start:stop]
            if out:  # entering a new block: the sum so far, in this block's scale
                piece[0] += math.ldexp(carry, -k)
            out.extend(itertools.accumulate(piece))
            carry = out[-1]
            start = stop
        return out

    first, last = rows(0)
    column = running_sums([1.0] + [0.0] * (last - first), first)
    exponent = 0
    for x in range(1, m + 1):
        low, high = rows(x)
        if low > high or low > last:
            return 1.0
        column = running_sums(column[low - first :] + [0.0] * (high - last), low)
        first, last = low, high
        _, grow = math.frexp(max(column))
        if grow > 256 or grow < -256:
            column = [math.ldexp(v, -grow) for v in column]
            exponent += grow
    exponent += k * (n // block)  # undo the row scale of (m, n)
    inside = Fraction(column[-1]) * Fraction(2) ** exponent / math.comb(m + n, m)
    return min(1.0, max(0.0, float(1 - inside)))


def _ks_asymptotic(m: int, n: int, d: float) -> float:
    """P(K >= t) for Kolmogorov's limiting distribution, ``2 sum_{k>=1} (-1)**(k-1)
    exp(-2 k**2 t**2)``, at Stephens' corrected ``t = (sqrt(N) + 0.12 + 0.11 / sqrt(N)) d`` with
    N = m n / (m + n)."""
    root = math.sqrt(m * n / (m + n))
    t = (root + 0.12 + 0.11 / root) * d
    if t < 1.0:
        # the theta-function form of the same distribution, which converges fast for small t:
        # P(K <= t) = sqrt(2 pi) / t * sum_{k>=1} exp(-(2k - 1)**2 pi**2 / (8 t**2))
        below = sum(math.exp(-((2 * k - 1) ** 2) * math.pi**2 / (8.0 * t * t)) for k in range(1, 6))
        return min(1.0, max(0.0, 1.0 - math.sqrt(2.0 * math.pi) / t * below))
    total = 0.0
    for k in range(1, 101):
        term = math.exp(-2.0 * k * k * t * t)
        total += term if k % 2 else -term
        if term < 1e-18 * total:
            break
    return min(1.0, max(0.0, 2.0 * total))
