"""One outcome per metric, and the sentence that explains it: the only place verdict wording is decided.

Every reason names its real cause, with the numbers that decided it (all changes in %, intervals at
the confidence they really have):

========================  ==========================================================================
cause                     when
========================  ==========================================================================
``regression``            the whole interval lies beyond the minimum effect on the harmful side; or
                          significant after the multiplicity adjustment, the interval wholly on the
                          harmful side, and the estimate beyond the minimum effect
``improvement``           the same on the beneficial side
``pass``                  the interval's harmful end is inside the minimum effect (a harmful change
                          of that size is ruled out), whether or not a smaller change is significant
``multiplicity``          the interval excludes no change and ``p < alpha``, but the adjustment for
                          the family of gating tests (Holm) lifts it to ``alpha`` or above
``significance``          the interval excludes no change but ``p >= alpha`` (alpha is stricter
                          than the 5 % of the interval)
``small``                 significant, but the estimate is inside the minimum effect and the interval
                          does not rule the minimum effect out
``repetitions``           too few repetitions for a 95 % interval at all (exact intervals come in steps)
``noise``                 the interval is too wide to decide: the noise, and what would decide it
``not-deterministic``     a cost metric whose runs disagree beyond what a deterministic count may,
                          and whose interval (from that observed spread) does not decide
``one-run``               a cost metric with a single run on a side
``unsteady``              a latency metric of timing runs whose window was shorter than 5 x their
                          p95: not decided on it (set by :mod:`harness.judge.steady` after classifying)
========================  ==========================================================================

A reason never contradicts its interval: an interval (at the confidence asked for or more) wholly
beyond the minimum effect is a regression or an improvement, and one wholly inside it is a pass. The
interval shown is normally the 95 % one; when it lies wholly beyond the minimum effect but the
multiplicity-adjusted test is not significant, the judge (:func:`harness.judge.gate.conclude`)
widens it to the confidence the family needs (``1 - alpha / family size``, Bonferroni, which Holm
never exceeds) and decides on that one, saying so. A cost metric whose runs disagree beyond what a
deterministic count may (``noisy``) is judged on its observed spread, and the reason says by how much
the count was noisier than it should be.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Concatenate, Literal, ParamSpec

from harness.judge import design
from harness.judge.stats import SetAside, percent
from harness.model.time_estimate import duration
from harness.model.verdict import Cause

P = ParamSpec("P")

Decided = Literal["pass", "regression", "improvement", "inconclusive"]
WILCOXON_ARE = 3.0 / math.pi
"""Asymptotic relative efficiency of the Wilcoxon tests against the t-test under normal noise."""
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Evidence:
    """What one test found for one metric, on log ratios, before the outcome is decided.

    ``kind`` is the test (``signed-rank`` for A/B pairs, ``rank-sum`` against baseline samples,
    ``cost`` for deterministic counts); ``noise_sd`` is the SD of one comparison unit (per-pair log
    ratios; one run's logs for two samples); ``refusal`` is set when a cost test declines to decide;
    ``noisy`` when a cost metric's runs disagree beyond ``ceiling_cv``, what a deterministic count may.
    """

    kind: design.Kind
    estimate: float
    low: float
    high: float
    confidence: float
    p_value: float
    noise_sd: float
    n_base: int
    n_head: int
    refusal: Literal["repetitions"] | None = None
    ceiling_cv: float | None = None
    set_aside: SetAside | None = None
    noisy: bool = False


@dataclass(frozen=True)
class Classification:
    """The outcome for one metric, why (a cause and one sentence), a short clause for tables, and what
    would decide it when it is inconclusive (repetitions and their wall time)."""

    outcome: Decided
    cause: Cause
    reason: str
    summary: str
    repetitions_needed: int | None = None
    seconds_needed: float | None = None


def repetitions_to_decide(ev: Evidence, min_effect: float, alpha_per_test: float, power: float = 0.8) -> int:
    """How many repetitions (pairs, or candidate runs against the baseline) would likely decide.

    Normal approximation ``n = ((z_{1-a/2} + z_power) sigma / delta)^2`` divided by the Wilcoxon
    asymptotic relative efficiency 3/pi (Lehmann 1975), with ``delta = log(1 + min_effect)``: the
    repetitions for which the interval's half-width shrinks below the minimum effect with probability
    ``power``. Never fewer than the test needs to reach ``alpha_per_test`` at all.
    """
    sigma = ev.noise_sd * (math.sqrt(2.0) if ev.kind == "rank-sum" else 1.0)
    floor = 2
    while floor < 10_000 and _min_p(ev, floor) >= alpha_per_test:
        floor += 1
    if not math.isfinite(sigma) or sigma <= 0.0:
        return floor
    z = _NORMAL.inv_cdf(1.0 - alpha_per_test / 2.0) + _NORMAL.inv_cdf(power)
    n = (z * sigma / math.log1p(min_effect)) ** 2 / WILCOXON_ARE
    return max(floor, math.ceil(n))


def _min_p(ev: Evidence, n: int) -> float:
    if ev.kind == "signed-rank":
        return design.min_p_signed_rank(n)
    if ev.kind == "rank-sum":
        return design.min_p_rank_sum(ev.n_base, n)
    return design.min_p_cost(n, n)


def _names_set_aside(
    decide: Callable[Concatenate[Evidence, P], Classification],
) -> Callable[Concatenate[Evidence, P], Classification]:
    """A run a cost test set aside is named in the sentence and the clause: none is left out silently."""

    @functools.wraps(decide)
    def named(ev: Evidence, /, *args: P.args, **kwargs: P.kwargs) -> Classification:
        decided = decide(ev, *args, **kwargs)
        if ev.set_aside is None:
            return decided
        aside = ev.set_aside
        ordinal = {0: "1st", 1: "2nd", 2: "3rd"}.get(aside.index, f"{aside.index + 1}th")
        offset = f"{percent(aside.offset):+.2f} %"
        note = (
            f"the {ordinal} {aside.side} run counted {offset} against the other {aside.side} runs, which agree, "
            "and was set aside as a lone event (a second one would make the result inconclusive)"
        )
        return dataclasses.replace(
            decided,
            reason=f"{decided.reason.rstrip('.')}; {note}.",
            summary=f"{decided.summary}; 1 {aside.side} run set aside ({offset})",
        )

    return named


@_names_set_aside
def classify(
    ev: Evidence,
    *,
    label: str,
    p_adjusted: float,
    family_size: int,
    alpha: float,
    min_effect: float,
    higher_is_worse: bool,
    required_confidence: float = 0.95,
    seconds_per_repetition: float | None = None,
    widened: bool = False,
    effect: str = "",
) -> Classification:
    """Decide one metric: outcome, cause, a full sentence and a short clause (see the module docstring).

    ``p_adjusted`` is the Holm-adjusted p-value within the family of ``family_size`` gating tests;
    ``seconds_per_repetition`` is what one more pair (or candidate run) costs, for the advice;
    ``widened`` says the interval is at the confidence the family needs (``required_confidence``)
    rather than the usual 95 %; ``effect`` names the minimum effect where a percentage alone would not
    (a count per transaction: ``10 % + 0.25 /txn``).
    """
    decided = _decide(
        ev,
        label=label,
        p_adjusted=p_adjusted,
        family_size=family_size,
        alpha=alpha,
        min_effect=min_effect,
        higher_is_worse=higher_is_worse,
        required_confidence=required_confidence,
        seconds_per_repetition=seconds_per_repetition,
        widened=widened,
        effect=effect,
    )
    if not ev.noisy or ev.refusal is not None:
        return decided
    ceiling = ev.ceiling_cv or 0.0
    times = f", {ev.noise_sd / math.log1p(ceiling):.1f}x" if ceiling > 0 else ""
    text = (
        f"the runs disagree by {ev.noise_sd * 100:.3g} % (SD){times} the {ceiling * 100:.3g} % a deterministic "
        f"count may vary for a {min_effect * 100:g} % minimum effect"
    )
    check = "check the event counts, the warm-up and the held read view"
    if decided.outcome == "inconclusive" and decided.cause != "repetitions":
        return dataclasses.replace(
            decided,
            cause="not-deterministic",
            reason=f"{decided.reason.rstrip('.')}; {text}: the count is not deterministic ({check}).",
            summary=f"{decided.summary}; not deterministic ({ev.noise_sd * 100:.2g} % SD)",
        )
    return dataclasses.replace(
        decided,
        reason=f"{decided.reason.rstrip('.')}; judged on that spread, since {text} ({check}).",
        summary=f"{decided.summary}; noisy count ({ev.noise_sd * 100:.2g} % SD)",
    )


def _decide(
    ev: Evidence,
    *,
    label: str,
    p_adjusted: float,
    family_size: int,
    alpha: float,
    min_effect: float,
    higher_is_worse: bool,
    required_confidence: float,
    seconds_per_repetition: float | None,
    widened: bool,
    effect: str = "",
) -> Classification:
    if min_effect <= 0.0 or not 0.0 < alpha < 1.0:
        raise ValueError("need min_effect > 0 and 0 < alpha < 1")
    sign = 1.0 if higher_is_worse else -1.0
    threshold = math.log1p(min_effect)
    e = sign * ev.estimate
    h_lo, h_hi = sorted((sign * ev.low, sign * ev.high))
    worse, better = ("rise", "fall") if higher_is_worse else ("drop", "rise")
    me = effect or f"{min_effect * 100:g} %"
    unit = "pairs" if ev.kind == "signed-rank" else "runs a side" if ev.kind == "cost" else "candidate runs"

    if ev.refusal == "repetitions":
        text = f"a cost metric needs at least 2 runs a side to show they agree ({ev.n_base} base, {ev.n_head} head)"
        return Classification("inconclusive", "one-run", f"Inconclusive: {label}: {text}; no verdict.", text, 2)

    conf = f"{ev.confidence * 100:.3g} %"
    why_wide = f", widened to the confidence alpha {alpha:g} over {family_size} gating tests needs" if widened else ""
    numbers = (
        f"{label} {percent(ev.estimate):+.1f} % ({conf} interval {percent(ev.low):+.1f} % to "
        f"{percent(ev.high):+.1f} %{why_wide}, adjusted p = {p_adjusted:.3g})"
    )
    significant = p_adjusted < alpha
    short_conf = ev.confidence < required_confidence - 1e-9
    if (significant and h_lo > 0.0 and e > threshold) or (not short_conf and h_lo > threshold):
        whole = "" if significant else "; the whole interval lies beyond it"
        return Classification(
            "regression",
            "regression",
            f"Regression: {numbers}, a {worse} beyond the minimum effect of {me}{whole}.",
            f"{worse} beyond the {me} minimum effect (adjusted p = {p_adjusted:.2g})",
        )
    if (significant and h_hi < 0.0 and e < -threshold) or (not short_conf and h_hi < -threshold):
        whole = "" if significant else "; the whole interval lies beyond it"
        return Classification(
            "improvement",
            "improvement",
            f"Improvement: {numbers}, a {better} beyond the minimum effect of {me}{whole}.",
            f"{better} beyond the {me} minimum effect (adjusted p = {p_adjusted:.2g})",
        )

    needed = _needed(ev, min_effect, alpha / max(1, family_size), seconds_per_repetition)
    advice = _advice(ev, needed, unit)
    if short_conf:
        full = next((n for n in range(max(ev.n_base, ev.n_head), 64) if _full_interval(ev, n, required_confidence)), 0)
        text = (
            f"{min(ev.n_base, ev.n_head)} {unit} give at most a {conf} interval, short of the "
            f"{required_confidence * 100:.3g} % asked for"
        )
        more = f"; {full} or more give a full {required_confidence * 100:.3g} % interval" if full else ""
        return Classification(
            "inconclusive", "repetitions", f"Inconclusive: {numbers}: {text}{more}.", text, *(needed or (None, None))
        )
    if h_hi < threshold:
        small = significant and h_lo > 0.0
        text = f"rules out a {worse} of {me} or more"
        sentence = (
            f"Pass: {numbers} is a real {worse} but smaller than the minimum effect of {me}; the interval {text}."
            if small
            else f"Pass: {numbers} {text}."
        )
        return Classification("pass", "pass", sentence, text)
    if h_lo > 0.0 and not significant and ev.p_value < alpha:
        text = (
            f"the interval excludes no change (p = {ev.p_value:.2g}), but adjusted for {family_size} gating "
            f"tests (Holm) p = {p_adjusted:.2g}, not below alpha {alpha:g}"
        )
        return Classification(
            "inconclusive", "multiplicity", f"Inconclusive: {numbers}; {text}{advice}.", text, *(needed or (None, None))
        )
    if h_lo > 0.0 and not significant:
        text = f"the {conf} interval excludes no change, but p = {ev.p_value:.2g} is not below alpha {alpha:g}"
        return Classification(
            "inconclusive", "significance", f"Inconclusive: {numbers}; {text}{advice}.", text, *(needed or (None, None))
        )
    if significant and h_lo > 0.0:
        text = f"a {worse} that is significant but inside the {me} minimum effect, and {me} is not ruled out"
        return Classification(
            "inconclusive", "small", f"Inconclusive: {numbers}: {text}{advice}.", text, *(needed or (None, None))
        )
    reach = percent(sign * h_hi)
    text = f"cannot rule out a {worse} of {me} (the interval reaches {reach:+.1f} %)"
    noise = f"; the noise is {ev.noise_sd * 100:.1f} % SD" if math.isfinite(ev.noise_sd) else ""
    return Classification(
        "inconclusive", "noise", f"Inconclusive: {numbers}; {text}{noise}{advice}.", text, *(needed or (None, None))
    )


def _full_interval(ev: Evidence, n: int, confidence: float) -> bool:
    """Whether ``n`` repetitions give an exact interval of at least ``confidence``."""
    return _min_p(ev, n) <= 1.0 - confidence


def _needed(
    ev: Evidence, min_effect: float, alpha_per_test: float, seconds_per_repetition: float | None
) -> tuple[int, float | None] | None:
    if ev.kind == "cost":
        return None
    n = repetitions_to_decide(ev, min_effect, alpha_per_test)
    return n, (n * seconds_per_repetition if seconds_per_repetition else None)


def _advice(ev: Evidence, needed: tuple[int, float | None] | None, unit: str) -> str:
    if needed is None:
        return ""
    n, seconds = needed
    have = max(ev.n_base, ev.n_head) if ev.kind == "signed-rank" else ev.n_head
    if n <= have:
        return ""
    when = f" ({duration(seconds)})" if seconds else ""
    return f"; about {n} {unit}{when} would likely decide"
