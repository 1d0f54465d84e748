"""Exact rank tests: the Hodges-Lehmann estimates with their distribution-free intervals and p-values.

Every metric dbperf judges is positive and changes multiply, so all effects are *log ratios*
(:func:`harness.judge.stats.percent` turns one back into a percentage). Rank methods, because timing
noise has heavy tails and a few bad runs must not decide:

* **A/B mode** (:func:`paired_test`): per-pair log ratios ``log(head_i / base_i)``; the one-sample
  Hodges-Lehmann estimate (median of the Walsh averages, Hodges & Lehmann 1963) with the exact
  distribution-free confidence interval of the Wilcoxon signed-rank test, read off the sorted Walsh
  averages (Tukey 1949; Hollander, Wolfe & Chicken, *Nonparametric Statistical Methods*, 3rd ed.,
  section 3.3; the same interval as R's ``wilcox.test(..., conf.int = TRUE)``), and the exact two-sided
  signed-rank p-value (Wilcoxon 1945).
* **Baseline mode** (:func:`two_sample_test`): the two-sample Hodges-Lehmann shift of
  ``log(candidate) - log(baseline)`` (median of all pairwise differences) with the exact Mann-Whitney
  confidence interval from the sorted differences (Bauer 1972, "Constructing confidence sets using rank
  statistics", JASA 67) and the exact Mann-Whitney/Wilcoxon rank-sum p-value (Mann & Whitney 1947).

Exact null distributions are computed here by dynamic programming over the ranks (no tables, no
simulation) and cached per sample size; they agree with ``scipy.stats.wilcoxon(method="exact")`` and
``scipy.stats.mannwhitneyu(method="exact")`` (see tests/unit/test_stats.py). With tied or zero log
ratios the p-value is the exact *conditional* (permutation) distribution of the statistic over the
observed mid-ranks (Pratt 1959 for zeros: zeros are ranked, their signs are not permuted); above
:data:`EXACT_MAX_N` pairs (or :data:`EXACT_MAX_MN` for two samples) a normal approximation with tie and
continuity corrections is used. Ties are exact floating-point equality.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from harness.judge.stats import FloatArray, Values, check_confidence, coefficient_of_variation, logs

Method = Literal["exact", "exact-conditional", "normal"]

EXACT_MAX_N = 200
"""Largest number of pairs for which the signed-rank distribution is computed exactly."""
EXACT_MAX_MN = 5000
"""Largest ``len(baseline) * len(candidate)`` for which the rank-sum distribution is computed exactly."""

_NORMAL = NormalDist()


@dataclass(frozen=True)
class Estimate:
    """A shift on the log scale with its exact interval and p-value; ``confidence`` is the coverage the
    interval really has (at least ``confidence_requested`` when the samples allow it)."""

    estimate: float
    low: float
    high: float
    confidence: float
    confidence_requested: float
    p_value: float


@dataclass(frozen=True)
class PairedEstimate(Estimate):
    """An A/B comparison of ``n`` interleaved pairs, on log ratios ``log(head / base)``.

    ``noise_sd`` is the standard deviation of the per-pair log ratios.
    """

    n: int
    noise_sd: float
    cv_base: float
    cv_head: float
    method: Method


@dataclass(frozen=True)
class TwoSampleEstimate(Estimate):
    """A candidate compared with stored baseline samples, on ``log(candidate) - log(baseline)``.

    ``noise_sd`` is the pooled standard deviation of the logs of both samples.
    """

    n_baseline: int
    n_candidate: int
    noise_sd: float
    cv_baseline: float
    cv_candidate: float
    method: Method


# --------------------------------------------------------------------------------------------------
# rank helpers


def _sd(x: FloatArray) -> float:
    return float(x.std(ddof=1)) if x.size >= 2 else math.nan


def _midranks(a: FloatArray) -> tuple[FloatArray, bool]:
    """1-based mid-ranks of ``a`` and whether any values tie."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    ends = np.append(starts[1:], a.size)
    ranks = np.empty(a.size)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks, bool(starts.size < a.size)


@lru_cache(maxsize=64)
def _triu(n: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    return np.triu_indices(n)


# --------------------------------------------------------------------------------------------------
# exact null distributions (dynamic programming over integer rank weights)


def _signed_sum_cdf(weights: Sequence[int]) -> FloatArray:
    """CDF of ``sum(w_i * B_i)`` with independent fair coins ``B_i``: the signed-rank null."""
    total = int(sum(weights))
    pmf = np.zeros(total + 1)
    pmf[0] = 1.0
    top = 0
    for w in weights:
        pmf[w : top + w + 1] += pmf[: top + 1]  # numpy buffers overlapping operands
        top += w
        pmf[: top + 1] *= 0.5
    return np.cumsum(pmf)


def _subset_sum_cdf(weights: Sequence[int], k: int) -> FloatArray:
    """CDF of the sum of a uniformly random ``k``-subset of ``weights``: the rank-sum null."""
    total = int(sum(sorted(weights)[len(weights) - k :]))
    counts = np.zeros((k + 1, total + 1))
    counts[0, 0] = 1.0
    for w in weights:
        counts[1:, w:] += counts[:-1, : total + 1 - w]
    row = counts[k]
    return np.cumsum(row / row.sum())


@lru_cache(maxsize=256)
def signed_rank_null(n: int) -> FloatArray:
    """CDF of the signed-rank statistic T+ for ``n`` untied, non-zero differences."""
    return _signed_sum_cdf(range(1, n + 1))


@lru_cache(maxsize=256)
def rank_sum_null(m: int, n: int) -> FloatArray:
    """CDF of the Mann-Whitney count U (0..m*n) of the second of two untied samples of sizes m, n."""
    return _subset_sum_cdf(range(1, m + n + 1), n)[n * (n + 1) // 2 :]  # U = W - n(n+1)/2


def two_sided(cdf: FloatArray, t: int) -> float:
    """Two-sided exact p-value ``2 * min(P(T <= t), P(T >= t))``, capped at 1."""
    lower = float(cdf[t])
    upper = 1.0 - (float(cdf[t - 1]) if t > 0 else 0.0)
    return min(1.0, 2.0 * min(lower, upper))


def normal_two_sided(t: float, mean: float, var: float, correction: float) -> float:
    if var <= 0.0:
        return 1.0
    z = (abs(t - mean) - correction) / math.sqrt(var)
    return min(1.0, 2.0 * (1.0 - _NORMAL.cdf(max(z, 0.0))))


def _interval_rank(cdf: FloatArray | None, mean: float, var: float, confidence: float) -> tuple[int, float]:
    """The 1-based order statistic ``k`` for the interval ``(D_(k), D_(M+1-k))``, and its coverage.

    ``k`` is the largest with ``P(T <= k - 1) <= (1 - confidence) / 2``, coverage
    ``1 - 2 P(T <= k - 1)``; when even ``k = 1`` misses, ``k = 1`` (the full range) with its honest,
    lower coverage. ``cdf`` None means the normal approximation with ``mean`` and ``var``.
    """
    half = (1.0 - confidence) / 2.0
    if cdf is not None:
        k = int(np.searchsorted(cdf, half * (1.0 + 1e-12), side="right"))  # count of cdf[d] <= half
        k = max(k, 1)
        return k, 1.0 - 2.0 * float(cdf[k - 1])
    sd = math.sqrt(var)
    d = math.floor(mean + _NORMAL.inv_cdf(half) * sd - 0.5)
    k = max(d + 1, 1)
    return k, 1.0 - 2.0 * _NORMAL.cdf((k - 1 + 0.5 - mean) / sd)


def _order_stats(values: FloatArray, k: int) -> tuple[float, float, float]:
    """(median, k-th smallest, k-th largest) of ``values`` without a full sort."""
    size = values.size
    lo_i, hi_i = k - 1, size - k
    mid = (size - 1) // 2, size // 2
    part = np.partition(values, sorted({lo_i, hi_i, *mid}))
    return float(part[mid[0]] + part[mid[1]]) / 2.0, float(part[lo_i]), float(part[hi_i])


# --------------------------------------------------------------------------------------------------
# one sample / paired


def hodges_lehmann_one_sample(x: Values) -> float:
    """Hodges-Lehmann (1963) estimate of location: the median of the Walsh averages ``(x_i+x_j)/2``, i<=j."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("need at least one value")
    i, j = _triu(arr.size)
    return float(np.median((arr[i] + arr[j]) / 2.0))


def _signed_rank_parts(d: FloatArray, confidence: float) -> tuple[float, float, float, float, float, Method]:
    n = d.size
    i, j = _triu(n)
    walsh = (d[i] + d[j]) / 2.0
    m_walsh = n * (n + 1) // 2
    cdf = signed_rank_null(n) if n <= EXACT_MAX_N else None
    k, achieved = _interval_rank(cdf, m_walsh / 2.0, n * (n + 1) * (2 * n + 1) / 24.0, confidence)
    estimate, low, high = _order_stats(walsh, k)
    # p-value: Pratt's signed-rank statistic (zeros ranked, never signed)
    ranks, ties = _midranks(np.abs(d))
    nonzero = d != 0.0
    if bool(nonzero.all()) and not ties:
        t_plus = int(ranks[d > 0.0].sum())
        if cdf is not None:
            return estimate, low, high, achieved, two_sided(cdf, t_plus), "exact"
        p = normal_two_sided(t_plus, m_walsh / 2.0, n * (n + 1) * (2 * n + 1) / 24.0, 0.5)
        return estimate, low, high, achieved, p, "normal"
    doubled = np.rint(2.0 * ranks[nonzero]).astype(np.int64)
    t2 = int(np.rint(2.0 * ranks[d > 0.0].sum()))
    if doubled.size == 0:
        return estimate, low, high, achieved, 1.0, "exact-conditional"
    if n <= EXACT_MAX_N:
        p = two_sided(_signed_sum_cdf(doubled.tolist()), t2)
        return estimate, low, high, achieved, p, "exact-conditional"
    w = doubled.astype(np.float64)
    p = normal_two_sided(t2, float(w.sum()) / 2.0, float((w * w).sum()) / 4.0, 1.0)
    return estimate, low, high, achieved, p, "normal"


def signed_rank_ci(x: Values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Exact Wilcoxon signed-rank confidence interval for the centre of a symmetric distribution.

    Returns ``(low, high, achieved_confidence)``: the ``k``-th smallest and largest of the
    ``M = n(n+1)/2`` sorted Walsh averages, with ``k`` from the exact null distribution of the
    signed-rank statistic (Hollander, Wolfe & Chicken, section 3.3; R's ``wilcox.test``). The coverage
    is exactly ``1 - 2 P(T+ <= k - 1)`` (at least ``confidence``); if ``n`` is too small for that,
    the widest interval ``(min, max)`` comes back with the lower confidence it really has,
    ``1 - 2 ** (1 - n)``. Above :data:`EXACT_MAX_N` values ``k`` comes from the normal approximation.
    """
    check_confidence(confidence)
    arr = np.asarray(x, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("need at least one value")
    _, low, high, achieved, _, _ = _signed_rank_parts(arr, confidence)
    return low, high, achieved


def paired_test(base: Values, head: Values, *, confidence: float = 0.95) -> PairedEstimate:
    """A/B comparison of interleaved pairs ``(base_i, head_i)`` on log ratios ``log(head_i / base_i)``.

    Hodges-Lehmann estimate, exact signed-rank interval (:func:`signed_rank_ci`) and exact two-sided
    signed-rank p-value (conditional on the mid-ranks when log ratios tie or are zero).
    """
    check_confidence(confidence)
    lb, lh = logs(base, "base"), logs(head, "head")
    if lb.size != lh.size:
        raise ValueError(f"paired samples differ in length: {lb.size} base, {lh.size} head")
    d = lh - lb
    estimate, low, high, achieved, p, method = _signed_rank_parts(d, confidence)
    return PairedEstimate(
        estimate=estimate,
        low=low,
        high=high,
        confidence=achieved,
        confidence_requested=confidence,
        p_value=p,
        n=int(d.size),
        noise_sd=_sd(d),
        cv_base=coefficient_of_variation(base),
        cv_head=coefficient_of_variation(head),
        method=method,
    )


# --------------------------------------------------------------------------------------------------
# two samples


def two_sample_test(baseline: Values, candidate: Values, *, confidence: float = 0.95) -> TwoSampleEstimate:
    """Candidate against stored baseline samples: shift of ``log(candidate) - log(baseline)``.

    Two-sample Hodges-Lehmann estimate (median of the ``m * n`` pairwise differences), the exact
    Mann-Whitney interval (Bauer 1972: the ``k``-th smallest and largest sorted differences, ``k``
    from the exact null distribution of U; honest lower coverage when the samples are too small) and
    the exact two-sided Mann-Whitney p-value (conditional on the mid-ranks when values tie).
    """
    check_confidence(confidence)
    lb, lc = logs(baseline, "baseline"), logs(candidate, "candidate")
    m, n = int(lb.size), int(lc.size)
    diffs = np.subtract.outer(lc, lb).ravel()
    exact = m * n <= EXACT_MAX_MN
    cdf = rank_sum_null(m, n) if exact else None
    mean_u, var_u = m * n / 2.0, m * n * (m + n + 1) / 12.0
    k, achieved = _interval_rank(cdf, mean_u, var_u, confidence)
    estimate, low, high = _order_stats(diffs, k)

    ranks, ties = _midranks(np.concatenate([lb, lc]))
    u2 = int(np.rint(2.0 * ranks[m:].sum())) - n * (n + 1)  # twice Mann-Whitney U of the candidate
    method: Method
    if not ties and cdf is not None:
        p, method = two_sided(cdf, u2 // 2), "exact"
    elif exact:
        doubled = np.rint(2.0 * ranks).astype(np.int64).tolist()
        p, method = two_sided(_subset_sum_cdf(doubled, n), u2 + n * (n + 1)), "exact-conditional"
    else:
        _, counts = np.unique(np.concatenate([lb, lc]), return_counts=True)
        big_n = m + n
        tie_term = float((counts**3 - counts).sum()) / (big_n * (big_n - 1))
        var_t = m * n / 12.0 * ((big_n + 1) - tie_term)
        p, method = normal_two_sided(u2 / 2.0, mean_u, var_t, 0.5), "normal"
    squares = float(((lb - lb.mean()) ** 2).sum() + ((lc - lc.mean()) ** 2).sum())
    pooled = math.sqrt(squares / (m + n - 2)) if m + n > 2 else math.nan
    return TwoSampleEstimate(
        estimate=estimate,
        low=low,
        high=high,
        confidence=achieved,
        confidence_requested=confidence,
        p_value=p,
        n_baseline=m,
        n_candidate=n,
        noise_sd=pooled,
        cv_baseline=coefficient_of_variation(baseline),
        cv_candidate=coefficient_of_variation(candidate),
        method=method,
    )
