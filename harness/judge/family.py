"""One invocation's family of tests: each metric's evidence, Holm's correction across the family, and
the metric verdicts it decides (:mod:`harness.judge.gate` builds the family; :mod:`harness.judge.classify`
gives each outcome and its wording).

Gating tests (timing and cost metrics alike) form one weighted Holm family; non-gating metrics are
adjusted within their own family and reported, never failing the build. A 95 % interval wholly beyond
the minimum effect whose adjusted test is not significant is computed again at the confidence the
family needs (:func:`decide`), so a reason never contradicts the interval it shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from harness.judge import stats
from harness.judge.classify import Classification, Evidence, classify
from harness.judge.ranktests import paired_test, two_sample_test
from harness.model import Kind, MetricVerdict, Verdict, metrics
from harness.model.verdict import count_offset
from harness.model.work import WORK

DEFAULT_ALPHA = 0.02  # family-wise; the simulation (benchmarks/gate_simulation.py) keeps A/A false alarms <= 1 %


@dataclass(frozen=True)
class Pending:
    """One metric test before the multiplicity correction."""

    index: int  # which verdict it belongs to
    metric: str
    gating: bool
    evidence: Evidence
    base_median: float
    head_median: float
    min_effect: float
    seconds_per_repetition: float | None
    backend: str
    kind: Kind = "time"
    mode: Literal["ab", "baseline"] = "baseline"
    base_values: tuple[float, ...] = ()  # as tested: work-vector counts shifted by their floor
    head_values: tuple[float, ...] = ()
    weight: float = 1.0  # in the weighted Holm family: a comparison's gated work components share 1


def evidence(
    kind: Kind, mode: str, base: Sequence[float], head: Sequence[float], *, min_effect: float, confidence: float = 0.95
) -> Evidence:
    if kind == "cost":
        c = stats.cost_test(base, head, min_effect=min_effect, confidence=confidence)
        return Evidence(
            "cost", c.estimate, c.low, c.high, c.confidence, c.p_value, c.noise_sd, c.n_base, c.n_head,
            refusal=c.refusal, ceiling_cv=c.ceiling_cv, set_aside=c.set_aside, noisy=c.noisy,
        )  # fmt: skip
    if mode == "ab":
        p = paired_test(base, head, confidence=confidence)
        return Evidence("signed-rank", p.estimate, p.low, p.high, p.confidence, p.p_value, p.noise_sd, p.n, p.n)
    t = two_sample_test(base, head, confidence=confidence)
    return Evidence(
        "rank-sum", t.estimate, t.low, t.high, t.confidence, t.p_value, t.noise_sd, t.n_baseline, t.n_candidate
    )


def _floor_note(metric: str, min_effect: float, base: float, head: float) -> str:
    """How a work-vector count was tested: its change beyond a relative minimum effect plus a floor; the
    count's own change comes first (relative where the base is not 0, per transaction where it is)."""
    work = WORK.get(metric)
    if work is None:
        return ""
    floor = work.floor
    real = f"{(head / base - 1.0) * 100.0:+.1f} %" if base > 0 else f"{head - base:+.3g} per transaction"
    return (
        f" (a count, {base:.4g} -> {head:.4g} per transaction, {real}: the test's change and interval are of "
        f"the count plus {count_offset(metric, min_effect):g}, so a change must exceed {min_effect * 100:g} % "
        f"of the base plus {floor:g} per transaction)"
    )


def conclude(shells: Sequence[Verdict], pending: Sequence[Pending], *, alpha: float = DEFAULT_ALPHA) -> list[Verdict]:
    """Holm-adjust all tests of the invocation, classify each metric, and fill in the verdicts."""
    adjusted: dict[tuple[int, str], float] = {}
    sizes: dict[tuple[int, str], int] = {}
    for gating in (True, False):
        family = [p for p in pending if p.gating == gating]
        weights = [p.weight for p in family]
        total = sum(weights)
        p_values = [p.evidence.p_value for p in family]
        for p, adj in zip(family, stats.weighted_holm(p_values, weights), strict=True):
            adjusted[(p.index, p.metric)] = adj
            # the Bonferroni bound of a test of this weight: alpha * weight / total
            sizes[(p.index, p.metric)] = max(1, math.ceil(total / p.weight - 1e-9))
    by_index: dict[int, list[MetricVerdict]] = {i: [] for i in range(len(shells))}
    for p in pending:
        p_adj = adjusted[(p.index, p.metric)]
        size = sizes[(p.index, p.metric)]
        ev, result = decide(
            p.evidence,
            p.base_values,
            p.head_values,
            kind=p.kind,
            mode=p.mode,
            metric=p.metric,
            min_effect=p.min_effect,
            p_adjusted=p_adj,
            family_size=size,
            alpha=alpha,
            seconds_per_repetition=p.seconds_per_repetition,
        )
        finite = math.isfinite(ev.low) and math.isfinite(ev.high)
        widened = p.base_values and p.head_values
        level = _level(p.evidence, p_adj, alpha=alpha, min_effect=p.min_effect, family_size=size) if widened else 0.95
        note = _floor_note(p.metric, p.min_effect, p.base_median, p.head_median)
        by_index[p.index].append(
            MetricVerdict(
                metric=p.metric,
                higher_is_worse=metrics.higher_is_worse(p.metric),
                outcome=result.outcome,
                reason=_with_note(result.reason, note),
                summary=result.summary,
                cause=result.cause,
                method=ev.kind,
                base_median=p.base_median,
                head_median=p.head_median,
                estimate_pct=stats.percent(ev.estimate),
                ci_low_pct=stats.percent(ev.low) if finite else None,
                ci_high_pct=stats.percent(ev.high) if finite else None,
                p_value=ev.p_value,
                p_adjusted=p_adj,
                bound_pct=p.min_effect * 100.0,
                noise_pct=stats.percent(ev.noise_sd) if math.isfinite(ev.noise_sd) else None,
                n_base=ev.n_base,
                n_head=ev.n_head,
                repetitions_needed=result.repetitions_needed,
                seconds_needed=result.seconds_needed,
                gating=p.gating,
                confidence=ev.confidence,
                family_size=size,
                backend=p.backend,
                level=level,
            )
        )
    out = []
    for i, shell in enumerate(shells):
        if shell.metrics:  # failed or no-baseline verdicts are already complete
            out.append(shell)
            continue
        out.append(replace(shell, metrics=tuple(by_index[i])))
    return out


def decide(
    ev: Evidence,
    base: Sequence[float],
    head: Sequence[float],
    *,
    kind: Kind,
    mode: Literal["ab", "baseline"],
    metric: str,
    min_effect: float,
    p_adjusted: float,
    family_size: int,
    alpha: float,
    seconds_per_repetition: float | None = None,
) -> tuple[Evidence, Classification]:
    """Classify one metric's evidence after the multiplicity adjustment; the evidence the verdict shows.

    A 95 % interval wholly beyond the minimum effect whose test is not significant after the adjustment
    is computed again at the confidence the family needs (``1 - alpha / family_size``, Bonferroni, which
    Holm never exceeds), and the metric is decided on that interval, so the reason never contradicts
    the interval it shows (:mod:`harness.judge.classify`).
    """
    required = _level(ev, p_adjusted, alpha=alpha, min_effect=min_effect, family_size=family_size)
    widened = required != 0.95 and bool(base) and bool(head)
    if widened:
        ev = evidence(kind, mode, base, head, min_effect=min_effect, confidence=required)
    else:
        required = 0.95
    offset = count_offset(metric, min_effect)
    label = metrics.term(metric)
    result = classify(
        ev,
        label=f"({label} + {offset:g})" if offset else label,
        p_adjusted=p_adjusted,
        family_size=family_size,
        alpha=alpha,
        min_effect=min_effect,
        higher_is_worse=metrics.higher_is_worse(metric),
        required_confidence=required,
        seconds_per_repetition=seconds_per_repetition,
        widened=widened,
        effect=f"{min_effect * 100:g} % + {WORK[metric].floor:g} /txn" if offset else "",
    )
    return ev, result


def _level(ev: Evidence, p_adjusted: float, *, alpha: float, min_effect: float, family_size: int) -> float:
    """The confidence a metric's interval is asked for: 95 %, or the family's ``1 - alpha / family_size``
    when the 95 % interval lies wholly beyond the minimum effect but the adjusted test is not significant."""
    if p_adjusted >= alpha and beyond(ev, min_effect):
        return 1.0 - alpha / max(1, family_size)
    return 0.95


def _with_note(reason: str, note: str) -> str:
    """The reason, with a note before its final full stop."""
    if not note:
        return reason
    return f"{reason[:-1]}{note}." if reason.endswith(".") else f"{reason}{note}"


def beyond(ev: Evidence, min_effect: float) -> bool:
    """Whether the interval lies wholly beyond the minimum effect, on either side."""
    threshold = math.log1p(min_effect)
    return ev.refusal is None and (ev.low > threshold or ev.high < -threshold)
