"""Power: how likely a test is to flag a change of the minimum effect at the measured noise.

Rank tests use the exact rejection region of :mod:`harness.judge.ranktests` (the same p-value code as
the verdicts); its probability is simulated with fixed-seed draws for small samples and taken from the
normal approximation to the statistic under the shift above that (moments from Lehmann 1975, via
Owen's T for the bivariate normal orthants). Cost tests use the non-central t. A REGRESSION verdict
also needs the estimate beyond the minimum effect, which a change of exactly the minimum effect meets
about half the time: a change of about twice the minimum effect is the "likely caught" size.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np
from scipy import special as sp_special  # owens_t, for the bivariate normal orthant probabilities
from scipy import stats as sp_stats  # Student and non-central t

from harness.judge import ranktests, stats
from harness.judge.design import Kind
from harness.model.time_estimate import duration

FloatArray = stats.FloatArray

_NORMAL = NormalDist()
SIM_DRAWS = 8_000
"""Monte Carlo draws per power evaluation (standard error at most 0.0056)."""
SIM_SEED = 20_260_101
"""Fixed seed: power is a deterministic function of its arguments (common random numbers per ``n``)."""
SIM_MAX_N = 30
"""Signed-rank power is simulated up to this many pairs, above it the normal approximation is used."""
SIM_MAX_MN = 30
"""Rank-sum power is simulated up to ``m + n`` this large, above it the normal approximation is used."""


def _owen_bvn(h: float, k: float, rho: float) -> float:
    """P(X <= h, Y <= k) for a standard bivariate normal with correlation ``rho``, for h, k > 0 (Owen 1956).

    ``Phi(h)/2 + Phi(k)/2 - T(h, a_h) - T(k, a_k)`` with ``a_h = (k - rho h) / (h sqrt(1 - rho^2))``.
    """
    if h <= 0.0 or k <= 0.0:
        raise ValueError("h and k must be positive")
    s = math.sqrt(1.0 - rho * rho)
    t_h = float(sp_special.owens_t(h, (k - rho * h) / (h * s)))
    t_k = float(sp_special.owens_t(k, (h - rho * k) / (k * s)))
    return 0.5 * (_NORMAL.cdf(h) + _NORMAL.cdf(k)) - t_h - t_k


def _upper_critical(cdf: FloatArray, alpha_per_test: float) -> int | None:
    """Smallest statistic value whose exact two-sided p-value (``ranktests.two_sided``) is below alpha."""
    top = cdf.size - 1
    for t in range(top, -1, -1):
        if ranktests.two_sided(cdf, t) >= alpha_per_test:
            return t + 1 if t < top else None
    return 0


@lru_cache(maxsize=32)
def _normals(shape: tuple[int, ...]) -> FloatArray:
    rng = np.random.default_rng([SIM_SEED, *shape])
    arr: FloatArray = rng.standard_normal((SIM_DRAWS, *shape)).astype(np.float64)
    arr.setflags(write=False)
    return arr


def _signed_rank_moments(n: int, theta: float) -> tuple[float, float]:
    """Mean and variance of T+ for n pairs of N(theta, 1) (Lehmann 1975, section 4.2)."""
    p1 = _NORMAL.cdf(theta)
    p2 = _NORMAL.cdf(math.sqrt(2.0) * theta)
    p3 = _owen_bvn(math.sqrt(2.0) * theta, math.sqrt(2.0) * theta, 0.5)  # P(d1+d2>0, d1+d3>0)
    p4 = _owen_bvn(theta, math.sqrt(2.0) * theta, math.sqrt(0.5))  # P(d1>0, d1+d2>0)
    pairs = n * (n - 1) / 2.0
    mean = n * p1 + pairs * p2
    var = (
        n * p1 * (1 - p1)
        + pairs * p2 * (1 - p2)
        + 2.0 * n * (n - 1) * (p4 - p1 * p2)
        + n * (n - 1) * (n - 2) * (p3 - p2 * p2)
    )
    return mean, max(var, 1e-12)


def _rank_sum_moments(m: int, n: int, theta: float) -> tuple[float, float]:
    """Mean and variance of U = #{candidate > baseline} when candidate - baseline ~ N(theta, 1)."""
    p1 = _NORMAL.cdf(theta)
    p2 = _owen_bvn(theta, theta, 0.5)  # P(Y1 > X, Y2 > X) = P(Y > X1, Y > X2)
    mean = m * n * p1
    var = m * n * (p1 * (1 - p1) + (n - 1) * (p2 - p1 * p1) + (m - 1) * (p2 - p1 * p1))
    return mean, max(var, 1e-12)


def _sizes(n: int | tuple[int, int]) -> tuple[int, int]:
    return (n, n) if isinstance(n, int) else n


def power(
    test: Kind,
    n: int | tuple[int, int],
    noise_sd_log: float,
    min_effect: float,
    alpha_per_test: float,
    *,
    method: Literal["auto", "simulation", "normal"] = "auto",
) -> float:
    """Probability that ``test`` is significant at ``alpha_per_test`` in the harmful direction when the
    true change is ``min_effect``, with normal noise on the log scale.

    ``n``: pairs (signed-rank) or ``(baseline, candidate)`` counts (rank-sum, cost; an int means the
    same on both sides). ``noise_sd_log``: the standard deviation of ``log(head run / base run)`` --
    for A/B the per-pair log ratios, for two samples sqrt(2) times one run's log SD (what
    :attr:`stats.TwoSampleEstimate.noise_sd` times sqrt(2) estimates).

    Rank tests: the rejection region is the exact one of :mod:`stats` (same p-value code);
    its probability is simulated with :data:`SIM_DRAWS` fixed-seed draws up to :data:`SIM_MAX_N` pairs /
    :data:`SIM_MAX_MN` runs in all, above that from the normal approximation to the statistic's
    distribution under the shift (moments from Lehmann 1975), validated against simulation in the
    tests. Cost: the non-central t probability of the Student test (floor and ceiling ignored: with
    noise well below the ceiling they do not bind). The REGRESSION verdict also needs the estimate
    beyond the minimum effect, which a change of exactly the minimum effect meets about half the time.
    """
    if noise_sd_log <= 0.0 or not math.isfinite(noise_sd_log) or min_effect <= 0.0 or not 0 < alpha_per_test < 1:
        raise ValueError("need noise_sd_log > 0, min_effect > 0 and 0 < alpha_per_test < 1")
    theta = math.log1p(min_effect) / noise_sd_log
    nb, nh = _sizes(n)
    if test == "cost":
        if min(nb, nh) < 2:
            return 0.0
        df = nb + nh - 2
        run_sd = noise_sd_log / math.sqrt(2.0)
        ncp = math.log1p(min_effect) / (run_sd * math.sqrt(1.0 / nb + 1.0 / nh))
        crit = float(sp_stats.t.isf(alpha_per_test / 2.0, df))
        return float(sp_stats.nct.sf(crit, df, ncp))
    if test == "signed-rank":
        if nb != nh:
            raise ValueError("signed-rank needs as many base as head runs")
        cdf = ranktests.signed_rank_null(nb) if nb <= ranktests.EXACT_MAX_N else None
        mean0, var0 = nb * (nb + 1) / 4.0, nb * (nb + 1) * (2 * nb + 1) / 24.0
        if cdf is None:
            crit_f = mean0 + _NORMAL.inv_cdf(1 - alpha_per_test / 2) * math.sqrt(var0) + 0.5
            crit = math.ceil(crit_f)
        else:
            c = _upper_critical(cdf, alpha_per_test)
            if c is None:
                return 0.0
            crit = c
        if method == "simulation" or (method == "auto" and nb <= SIM_MAX_N):
            d = _normals((nb,)) + theta
            order = np.argsort(np.abs(d), axis=1)
            ranks = np.empty_like(order)
            np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, nb + 1), order.shape), axis=1)
            t_plus = (ranks * (d > 0.0)).sum(axis=1)
            return float(np.mean(t_plus >= crit))
        mean, var = _signed_rank_moments(nb, theta)
        return 1.0 - _NORMAL.cdf((crit - 0.5 - mean) / math.sqrt(var))
    if test == "rank-sum":
        exact = nb * nh <= ranktests.EXACT_MAX_MN
        if exact:
            c = _upper_critical(ranktests.rank_sum_null(nb, nh), alpha_per_test)
            if c is None:
                return 0.0
            crit = c
        else:
            mean0, var0 = nb * nh / 2.0, nb * nh * (nb + nh + 1) / 12.0
            crit = math.ceil(mean0 + _NORMAL.inv_cdf(1 - alpha_per_test / 2) * math.sqrt(var0) + 0.5)
        if method == "simulation" or (method == "auto" and nb + nh <= SIM_MAX_MN):
            z = _normals((nb + nh,)) * math.sqrt(0.5)
            z = np.concatenate([z[:, :nb], z[:, nb:] + theta], axis=1)
            order = np.argsort(z, axis=1)
            ranks = np.empty_like(order)
            np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, nb + nh + 1), order.shape), axis=1)
            u = ranks[:, nb:].sum(axis=1) - nh * (nh + 1) // 2  # Mann-Whitney U of the candidate
            return float(np.mean(u >= crit))
        mean, var = _rank_sum_moments(nb, nh, theta)
        return 1.0 - _NORMAL.cdf((crit - 0.5 - mean) / math.sqrt(var))
    raise ValueError(f"unknown test {test!r}")


def pairs_for_power(
    test: Kind,
    noise_sd_log: float,
    min_effect: float,
    alpha_per_test: float,
    *,
    target: float = 0.8,
    n_base: int | None = None,
    limit: int = 100_000,
) -> int | None:
    """Smallest pairs (signed-rank), candidates for ``n_base`` baseline runs (rank-sum), or runs per
    side (cost) whose :func:`power` reaches ``target``; None beyond ``limit``.

    Scans with the normal approximation (bisection), then confirms small answers with :func:`power`
    itself, stepping up while the simulated power falls short.
    """

    def size(k: int) -> int | tuple[int, int]:
        if test == "signed-rank":
            return k
        return (n_base if n_base is not None else k, k)

    def pw(k: int, method: Literal["auto", "simulation", "normal"]) -> float:
        return power(test, size(k), noise_sd_log, min_effect, alpha_per_test, method=method)

    approx: Literal["auto", "normal"] = "normal" if test != "cost" else "auto"
    lo, hi = 2, 2
    while pw(hi, approx) < target:
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while lo < hi:
        mid = (lo + hi) // 2
        if pw(mid, approx) >= target:
            hi = mid
        else:
            lo = mid + 1
    small = hi <= SIM_MAX_N if test == "signed-rank" else (n_base or hi) + hi <= SIM_MAX_MN
    k = 2 if small else max(2, hi - 3)
    while k <= limit:
        if pw(k, "auto") >= target:
            return k
        k += 1
    return None


# --------------------------------------------------------------------------------------------------
# wording


def wall_time(pairs: int, seconds_per_pair: float) -> str:
    """``pairs`` pairs of runs as wall time, e.g. ``"~45 min"`` or ``"~12.6 h"``."""
    return duration(pairs * seconds_per_pair)
