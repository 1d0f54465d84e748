"""Small pure statistics shared by every test: log-ratio helpers, Holm, alpha spending, the cost t-test.

All effects are *log ratios*: ``log(1.10)`` is a 10 % rise, :func:`percent` turns a log ratio back into
a percentage, and a minimum effect ``m`` (a fraction such as 0.03) becomes the threshold ``log(1 + m)``.

* **Multiplicity**: Holm (1979) step-down adjusted p-values across every gating test of an invocation.
* **Sequential extension**: Lan & DeMets (1983) alpha spending (:func:`alpha_spending`).
* **Deterministic costs** (:func:`cost_test`): instructions per transaction under callgrind repeat to
  a few hundredths of a percent (docs/cost-noise.md), so a parametric test on 2-3 runs a side decides where
  the rank tests of :mod:`harness.judge.ranktests` cannot reach significance at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special

FloatArray = NDArray[np.floating[Any]]
Values = Sequence[float] | FloatArray
"""Measurements or log ratios: a sequence of floats or a one-dimensional numpy array."""

_NORMAL = NormalDist()

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


def logs(values: Values, what: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what} must be a non-empty sequence of numbers")
    if not bool(np.all(np.isfinite(arr))) or bool(np.any(arr <= 0.0)):
        raise ValueError(f"{what} must be finite and positive (metrics are judged as ratios)")
    return np.log(arr)


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")


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


def weighted_holm(p_values: Values, weights: Values) -> list[float]:
    """Weighted Holm (Holm 1979, section 5) adjusted p-values, in input order; ``holm`` when all weights are 1.

    Tests are taken in the order of ``p / w``; the ``j``-th is adjusted to ``min(1, p_(j) / w_(j) * W_j)``
    with ``W_j`` the weight of the tests not yet taken (itself included), made monotone. The family-wise
    error rate stays at ``alpha`` under any dependence; a test of weight ``w`` is, at worst, tested at
    ``alpha * w / W`` (Bonferroni with weights). dbperf gives each comparison's gated work-vector
    components a weight of ``1 / k`` each, so the vector counts as one test in the family.
    """
    p = np.asarray(p_values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if p.size == 0:
        return []
    if p.shape != w.shape or not bool(np.all(w > 0.0)):
        raise ValueError("need one positive weight per p-value")
    if not bool(np.all((p >= 0.0) & (p <= 1.0))):
        raise ValueError("p-values must lie in [0, 1]")
    order = np.argsort(p / w, kind="stable")
    remaining = np.cumsum(w[order][::-1])[::-1]
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] / w[order] * remaining))
    out = np.empty(p.size)
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


# --------------------------------------------------------------------------------------------------
# deterministic cost metrics

DEFAULT_NOISE_FLOOR_CV = 1e-4
"""Cost metrics: the smallest run-to-run noise (0.01 %) believed real; identical counts are not infinite precision."""
DEFAULT_CEILING_RATIO = 0.25
"""Cost metrics: the largest within-side noise accepted, as a fraction of the minimum effect."""


@dataclass(frozen=True)
class CostEstimate:
    """A deterministic cost metric (instructions per transaction under callgrind) on ``log(head) - log(base)``.

    ``estimate`` is the difference of the mean logs (the log ratio of geometric means); ``low``/``high``
    the Student interval with the floored noise; ``p_value`` what goes into the multiplicity family
    (1 when the test refuses); ``noise_sd`` the pooled within-side SD of the logs (about the CV);
    ``refusal`` why the test declines to decide, if it does (one run on a side); ``noisy`` whether the
    runs disagree beyond ``ceiling_cv``, what a deterministic count may vary; ``set_aside`` the one run left out as a
    lone outlier (its side, its position on that side, and how far it lies from the others, as a log
    ratio), if one was.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    p_value: float
    n_base: int
    n_head: int
    noise_sd: float
    ceiling_cv: float
    refusal: Literal["repetitions"] | None
    set_aside: SetAside | None = None
    noisy: bool = False


@dataclass(frozen=True)
class SetAside:
    """A run a cost test left out: ``side`` (base or head), ``index`` on that side (0-based), ``offset``
    (its log ratio to the mean of the others on its side)."""

    side: Literal["base", "head"]
    index: int
    offset: float


LONE_OUTLIER_AGREEMENT = 0.25
"""How closely the other runs must agree (a fraction of the ceiling) for one run to be set aside."""


def _pooled_sd(lb: FloatArray, lh: FloatArray) -> float:
    df = lb.size + lh.size - 2
    return math.sqrt(float(((lb - lb.mean()) ** 2).sum() + ((lh - lh.mean()) ** 2).sum()) / df)


def lone_outlier(lb: FloatArray, lh: FloatArray, ceiling_log: float) -> SetAside | None:
    """The one run whose absence brings the pooled SD within the ceiling, if exactly one run does so.

    Only a side of three or more runs gives one up (two must remain to show they agree), the run is
    the one counting most above its side's median (a lone event adds work: a run that counts less than
    the others is never set aside, so a side whose majority counts more cannot be made to look like a
    change), and the others of both sides must then agree within a quarter of the ceiling
    (:data:`LONE_OUTLIER_AGREEMENT`: runs of a truly noisy measurement almost never agree that well
    once their largest is left out). Two such runs, or a side of two, set nothing aside: that is
    noise, not a lone event.
    """
    found: list[SetAside] = []
    sides: tuple[Literal["base", "head"], ...] = ("base", "head")
    for side in sides:
        values, other = (lb, lh) if side == "base" else (lh, lb)
        if values.size < 3:
            continue
        index = int(np.argmax(values - np.median(values)))
        rest = np.delete(values, index)
        pair = (rest, other) if side == "base" else (other, rest)
        if values[index] > np.median(values) and _pooled_sd(*pair) <= ceiling_log * LONE_OUTLIER_AGREEMENT:
            found.append(SetAside(side, index, float(values[index] - rest.mean())))
    return found[0] if len(found) == 1 else None


def cost_test(
    base: Values,
    head: Values,
    *,
    min_effect: float,
    confidence: float = 0.95,
    noise_floor_cv: float = DEFAULT_NOISE_FLOOR_CV,
    ceiling_cv: float | None = None,
) -> CostEstimate:
    """Student two-sample t-test on the logs of a deterministic cost metric, with a noise floor and ceiling.

    The pooled within-side SD ``s`` (``n_base + n_head - 2`` degrees of freedom) is floored at
    ``noise_floor_cv`` before use, so identical counts do not claim infinite precision (a floor only
    makes the test more conservative). With equal counts per side the statistic is Welch's, but the
    pooled degrees of freedom keep 2-3 runs a side usable (Welch's fall to 1; Scheffé 1959, ch. 10, on
    the robustness of the pooled test with equal counts). When ``s`` exceeds ``ceiling_cv`` (default
    ``min_effect / 4``) the runs disagree more than a deterministic count may, and ``noisy`` says so:
    the interval and p-value then use that observed spread as it is (no floor can make them narrower),
    so an effect far beyond the noise is still decided and one within it is not, while the verdict names
    the excess. The test refuses (p = 1, INCONCLUSIVE) only with a single run on a side, where that
    side's noise cannot be seen.

    For the rare lone event of a write workload (one run counting more while the others repeat;
    docs/cost-noise.md, "Also remaining"): when exactly one run of a side of three or more is what
    breaks the ceiling (:func:`lone_outlier`), it is set aside, named in the result, and the test runs
    on the others. With two such runs the test keeps them all and is ``noisy``.
    """
    check_confidence(confidence)
    if min_effect <= 0.0 or noise_floor_cv < 0.0:
        raise ValueError("need min_effect > 0 and noise_floor_cv >= 0")
    ceiling = min_effect * DEFAULT_CEILING_RATIO if ceiling_cv is None else ceiling_cv
    lb, lh = logs(base, "base"), logs(head, "head")
    nb, nh = int(lb.size), int(lh.size)
    estimate = float(lh.mean() - lb.mean())
    if min(nb, nh) < 2:
        return CostEstimate(estimate, -math.inf, math.inf, confidence, 1.0, nb, nh, math.nan, ceiling, "repetitions")
    s = _pooled_sd(lb, lh)
    set_aside = lone_outlier(lb, lh, math.log1p(ceiling)) if s > math.log1p(ceiling) else None
    if set_aside is not None:
        if set_aside.side == "base":
            lb = np.delete(lb, set_aside.index)
        else:
            lh = np.delete(lh, set_aside.index)
        nb, nh = int(lb.size), int(lh.size)
        estimate = float(lh.mean() - lb.mean())
        s = _pooled_sd(lb, lh)
    df = nb + nh - 2
    se = max(s, math.log1p(noise_floor_cv)) * math.sqrt(1.0 / nb + 1.0 / nh)
    p = min(1.0, 2.0 * float(special.stdtr(df, -abs(estimate / se))))
    half = float(special.stdtrit(df, 1.0 - (1.0 - confidence) / 2.0)) * se
    return CostEstimate(
        estimate=estimate,
        low=estimate - half,
        high=estimate + half,
        confidence=confidence,
        p_value=p,
        n_base=nb,
        n_head=nh,
        noise_sd=s,
        ceiling_cv=ceiling,
        refusal=None,
        set_aside=set_aside,
        noisy=s > math.log1p(ceiling),
    )
