"""The statistics behind dbperf's verdicts: pure functions on log ratios, no I/O.

Every metric dbperf judges (QPS, latency percentiles, CPU seconds and instructions per transaction) is
positive, and changes multiply: so all effects here are *log ratios*. ``log(1.10)`` is a 10 % rise,
``percent(x)`` turns a log ratio back into a percentage, and a minimum effect ``m`` (a fraction such as
0.03) becomes the symmetric log-space threshold ``log(1 + m)``.

Methods (rank methods, because benchmark noise has heavy tails and a few bad runs must not decide):

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
* **Multiplicity**: Holm (1979) step-down adjusted p-values across every scenario x metric of a run.
* **Sequential extension**: Lan & DeMets (1983) alpha spending (:func:`alpha_spending`).

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
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.floating[Any]]
Values = Sequence[float] | FloatArray
"""Measurements or log ratios: a sequence of floats or a one-dimensional numpy array."""
Outcome = Literal["pass", "regression", "improvement", "inconclusive"]
Method = Literal["exact", "exact-conditional", "normal"]

EXACT_MAX_N = 200
"""Largest number of pairs for which the signed-rank distribution is computed exactly."""
EXACT_MAX_MN = 5000
"""Largest ``len(baseline) * len(candidate)`` for which the rank-sum distribution is computed exactly."""
WILCOXON_ARE = 3.0 / math.pi
"""Asymptotic relative efficiency of the Wilcoxon tests against the t-test under normal noise."""

_NORMAL = NormalDist()


@dataclass(frozen=True)
class PairedEstimate:
    """An A/B comparison of ``n`` interleaved pairs, on log ratios ``log(head / base)``.

    ``confidence`` is the coverage the exact interval really has (at least ``confidence_requested``
    when ``n`` allows it); ``noise_sd`` is the standard deviation of the per-pair log ratios.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    confidence_requested: float
    p_value: float
    n: int
    noise_sd: float
    cv_base: float
    cv_head: float
    method: Method


@dataclass(frozen=True)
class TwoSampleEstimate:
    """A candidate compared with stored baseline samples, on ``log(candidate) - log(baseline)``.

    ``noise_sd`` is the pooled standard deviation of the logs of both samples.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    confidence_requested: float
    p_value: float
    n_baseline: int
    n_candidate: int
    noise_sd: float
    cv_baseline: float
    cv_candidate: float
    method: Method


@dataclass(frozen=True)
class Classification:
    """The outcome for one metric and one human sentence explaining it, with the numbers in %."""

    outcome: Outcome
    reason: str


# --------------------------------------------------------------------------------------------------
# small helpers


def percent(log_ratio: float) -> float:
    """The change a log ratio stands for, in percent: ``exp(x) - 1`` times 100."""
    return math.expm1(log_ratio) * 100.0


def coefficient_of_variation(values: Values) -> float:
    """Sample standard deviation (``ddof=1``) over the mean; NaN for fewer than two values."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size < 2:
        return math.nan
    mean = float(arr.mean())
    return float(arr.std(ddof=1)) / mean if mean != 0.0 else math.nan


def _logs(values: Values, what: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} must be a non-empty sequence of numbers")
    if not bool(np.all(np.isfinite(arr))) or bool(np.any(arr <= 0.0)):
        raise ValueError(f"{what} must be finite and positive (metrics are judged as ratios)")
    return np.log(arr)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")


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
def _signed_rank_null(n: int) -> FloatArray:
    """CDF of the signed-rank statistic T+ for ``n`` untied, non-zero differences."""
    return _signed_sum_cdf(range(1, n + 1))


@lru_cache(maxsize=256)
def _rank_sum_null(m: int, n: int) -> FloatArray:
    """CDF of the Mann-Whitney count U (0..m*n) of the second of two untied samples of sizes m, n."""
    return _subset_sum_cdf(range(1, m + n + 1), n)[n * (n + 1) // 2 :]  # U = W - n(n+1)/2


def _two_sided(cdf: FloatArray, t: int) -> float:
    """Two-sided exact p-value ``2 * min(P(T <= t), P(T >= t))``, capped at 1."""
    lower = float(cdf[t])
    upper = 1.0 - (float(cdf[t - 1]) if t > 0 else 0.0)
    return min(1.0, 2.0 * min(lower, upper))


def _normal_two_sided(t: float, mean: float, var: float, correction: float) -> float:
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
    cdf = _signed_rank_null(n) if n <= EXACT_MAX_N else None
    k, achieved = _interval_rank(cdf, m_walsh / 2.0, n * (n + 1) * (2 * n + 1) / 24.0, confidence)
    estimate, low, high = _order_stats(walsh, k)
    # p-value: Pratt's signed-rank statistic (zeros ranked, never signed)
    ranks, ties = _midranks(np.abs(d))
    nonzero = d != 0.0
    if bool(nonzero.all()) and not ties:
        t_plus = int(ranks[d > 0.0].sum())
        if cdf is not None:
            return estimate, low, high, achieved, _two_sided(cdf, t_plus), "exact"
        p = _normal_two_sided(t_plus, m_walsh / 2.0, n * (n + 1) * (2 * n + 1) / 24.0, 0.5)
        return estimate, low, high, achieved, p, "normal"
    doubled = np.rint(2.0 * ranks[nonzero]).astype(np.int64)
    t2 = int(np.rint(2.0 * ranks[d > 0.0].sum()))
    if doubled.size == 0:
        return estimate, low, high, achieved, 1.0, "exact-conditional"
    if n <= EXACT_MAX_N:
        p = _two_sided(_signed_sum_cdf(doubled.tolist()), t2)
        return estimate, low, high, achieved, p, "exact-conditional"
    w = doubled.astype(np.float64)
    p = _normal_two_sided(t2, float(w.sum()) / 2.0, float((w * w).sum()) / 4.0, 1.0)
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
    _check_confidence(confidence)
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
    _check_confidence(confidence)
    lb, lh = _logs(base, "base"), _logs(head, "head")
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
    _check_confidence(confidence)
    lb, lc = _logs(baseline, "baseline"), _logs(candidate, "candidate")
    m, n = int(lb.size), int(lc.size)
    diffs = np.subtract.outer(lc, lb).ravel()
    exact = m * n <= EXACT_MAX_MN
    cdf = _rank_sum_null(m, n) if exact else None
    mean_u, var_u = m * n / 2.0, m * n * (m + n + 1) / 12.0
    k, achieved = _interval_rank(cdf, mean_u, var_u, confidence)
    estimate, low, high = _order_stats(diffs, k)

    ranks, ties = _midranks(np.concatenate([lb, lc]))
    u2 = int(np.rint(2.0 * ranks[m:].sum())) - n * (n + 1)  # twice Mann-Whitney U of the candidate
    method: Method
    if not ties and cdf is not None:
        p, method = _two_sided(cdf, u2 // 2), "exact"
    elif exact:
        doubled = np.rint(2.0 * ranks).astype(np.int64).tolist()
        p, method = _two_sided(_subset_sum_cdf(doubled, n), u2 + n * (n + 1)), "exact-conditional"
    else:
        _, counts = np.unique(np.concatenate([lb, lc]), return_counts=True)
        big_n = m + n
        tie_term = float((counts**3 - counts).sum()) / (big_n * (big_n - 1))
        var_t = m * n / 12.0 * ((big_n + 1) - tie_term)
        p, method = _normal_two_sided(u2 / 2.0, mean_u, var_t, 0.5), "normal"
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


# --------------------------------------------------------------------------------------------------
# multiplicity, sequential plans, planning


def holm(p_values: Values) -> list[float]:
    """Holm (1979) step-down adjusted p-values, in input order: monotone in the sorted order, capped at 1.

    ``p_adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`` for the sorted p-values; reject where
    ``p_adj < alpha`` to keep the family-wise error rate at ``alpha`` under any dependence.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.size == 0:
        return []
    if not bool(np.all((p >= 0.0) & (p <= 1.0))):
        raise ValueError("p-values must lie in [0, 1]")
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return [float(v) for v in out]


def alpha_spending(
    total_alpha: float, look: int, max_looks: int, *, kind: Literal["pocock", "obrien-fleming"] = "pocock"
) -> float:
    """The alpha to spend at ``look`` (1-based) of at most ``max_looks`` equally spaced looks.

    Lan & DeMets (1983) spending functions with information fraction ``t = look / max_looks``:
    ``pocock`` (default) ``alpha * ln(1 + (e - 1) t)``, which spends early so that an extension can
    stop soon; ``obrien-fleming`` ``2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``, which keeps nearly all of
    the budget for the last look. The value returned is the increment ``spent(t_k) - spent(t_{k-1})``
    and is used as the nominal level of that look (for Holm's ``alpha`` and as ``1 - confidence`` of
    the intervals). The increments sum to ``total_alpha``, so by the union bound the whole plan keeps
    its error rate at ``total_alpha`` whatever the correlation between looks: a little conservative,
    never anti-conservative.
    """
    if not 0.0 < total_alpha < 1.0:
        raise ValueError(f"total_alpha must be between 0 and 1, not {total_alpha}")
    if not 1 <= look <= max_looks:
        raise ValueError(f"look must be between 1 and max_looks={max_looks}, not {look}")

    def spent(t: float) -> float:
        if t <= 0.0:
            return 0.0
        if kind == "pocock":
            return total_alpha * math.log1p((math.e - 1.0) * t)
        return 2.0 - 2.0 * _NORMAL.cdf(_NORMAL.inv_cdf(1.0 - total_alpha / 2.0) / math.sqrt(t))

    return spent(look / max_looks) - spent((look - 1) / max_looks)


def pairs_needed(noise_sd_log: float, min_effect: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """How many pairs (in total) would likely decide a comparison with this much noise.

    Normal approximation ``n = ((z_{1-alpha/2} + z_power) sigma / delta)^2``, divided by the Wilcoxon
    asymptotic relative efficiency 3/pi (Lehmann, *Nonparametrics*, 1975), with ``delta =
    log(1 + min_effect)``: the pairs for which the interval's half-width shrinks below the minimum
    effect with probability ``power`` (so that a null change is shown to PASS, and a change of twice
    the minimum effect is detected). Never fewer than the pairs for which the exact signed-rank test
    can reach ``alpha`` at all (``2 ** (1 - n) < alpha``). For Holm across ``m`` comparisons pass
    ``alpha / m``; for two samples pass ``sqrt(2)`` times the pooled SD and read the answer per side.
    """
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0 or min_effect <= 0.0:
        raise ValueError("need 0 < alpha < 1, 0 < power < 1 and min_effect > 0")
    floor = math.floor(math.log2(2.0 / alpha)) + 1
    if not math.isfinite(noise_sd_log) or noise_sd_log <= 0.0:
        return floor
    z = _NORMAL.inv_cdf(1.0 - alpha / 2.0) + _NORMAL.inv_cdf(power)
    n = (z * noise_sd_log / math.log1p(min_effect)) ** 2 / WILCOXON_ARE
    return max(floor, math.ceil(n))


# --------------------------------------------------------------------------------------------------
# verdicts


def classify(
    estimate: float,
    low: float,
    high: float,
    p_adjusted: float,
    *,
    alpha: float,
    min_effect: float,
    higher_is_worse: bool,
    achieved_confidence: float | None = None,
    required_confidence: float | None = None,
    noise_sd: float | None = None,
    n: int | None = None,
) -> Classification:
    """Outcome of one metric from its estimate and interval (log ratios) and its Holm-adjusted p-value.

    With ``threshold = log(1 + min_effect)`` and "harmful" meaning up when ``higher_is_worse``, down
    otherwise:

    * REGRESSION: ``p_adjusted < alpha``, the interval lies wholly on the harmful side of 0, and the
      estimate is beyond the threshold on that side;
    * IMPROVEMENT: the same on the beneficial side;
    * PASS: the interval's harmful end is inside the threshold (a harmful change of ``min_effect``
      or more is ruled out), unless the interval is short of ``required_confidence``;
    * INCONCLUSIVE otherwise: the data cannot decide, which is never reported as a regression.
      With ``noise_sd`` (of the log ratios) and ``n`` the sentence says how many pairs would likely decide.
    """
    if min_effect <= 0.0 or not 0.0 < alpha < 1.0:
        raise ValueError("need min_effect > 0 and 0 < alpha < 1")
    sign = 1.0 if higher_is_worse else -1.0
    threshold = math.log1p(min_effect)
    e = sign * estimate
    h_lo, h_hi = sorted((sign * low, sign * high))
    worse, better = ("rise", "fall") if higher_is_worse else ("drop", "rise")
    conf = f"{achieved_confidence * 100:.1f} % " if achieved_confidence is not None else ""
    numbers = (
        f"{percent(estimate):+.1f} % (the {conf}interval {percent(low):+.1f} % to {percent(high):+.1f} %, "
        f"adjusted p = {p_adjusted:.3g})"
    )
    me = f"{min_effect * 100:g} %"
    if p_adjusted < alpha and h_lo > 0.0 and e > threshold:
        return Classification("regression", f"Regression: {numbers}, a {worse} beyond the minimum effect of {me}.")
    if p_adjusted < alpha and h_hi < 0.0 and e < -threshold:
        return Classification("improvement", f"Improvement: {numbers}, a {better} beyond the minimum effect of {me}.")
    short = (
        achieved_confidence is not None
        and required_confidence is not None
        and achieved_confidence < required_confidence - 1e-9
    )
    if h_hi < threshold and not short:
        return Classification("pass", f"Pass: {numbers} rules out a {worse} of {me} or more.")
    why = (
        f"only {n if n is not None else 'these'} pairs give a {conf}interval, short of the "
        f"{(required_confidence or 0.0) * 100:.0f} % asked for"
        if short and h_hi < threshold
        else f"the data cannot rule out a {worse} of {me}"
    )
    advice = ""
    if noise_sd is not None and math.isfinite(noise_sd):
        need = pairs_needed(noise_sd, min_effect, alpha=alpha)
        have = f" ({need - n} more)" if n is not None and need > n else ""
        advice = f"; the measured noise is {noise_sd * 100:.1f} % SD, and about {need} pairs{have} would likely decide"
    return Classification("inconclusive", f"Inconclusive: {numbers}; {why}{advice}.")
