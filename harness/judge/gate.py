"""The judge stage: turn repetitions into verdicts, against a baseline or in an A/B comparison.

All statistics are in :mod:`harness.judge.stats` (pure functions). This module decides what is compared
with what, applies Holm's correction across every gating scenario x threads x metric test of one
invocation (non-gating metrics are adjusted within their own family and reported, never failing the
build), and builds :class:`~harness.model.Verdict` records.

* Baseline mode: the candidate's repetitions against the baseline's samples (two-sample
  Hodges-Lehmann shift of the logs with the exact Mann-Whitney interval).
* A/B mode: per-pair log ratios of interleaved base/head runs (one-sample Hodges-Lehmann with the
  exact Wilcoxon signed-rank interval).

A metric is a REGRESSION only when the change is significant after correction *and* beyond the
scenario's minimum effect; PASS when the interval rules out a harmful change of that size; otherwise
INCONCLUSIVE, with the measured noise and how many repetitions would likely decide.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from harness.judge import stats
from harness.judge.baselines import Baseline, incomparable_reason, record_command
from harness.model import METRICS, MetricVerdict, RunResult, Scenario, Verdict

DEFAULT_ALPHA = 0.02  # family-wise; the simulation (benchmarks/gate_simulation.py) keeps A/A false alarms <= 1 %
UNSTABLE_CV = 0.10


@dataclass(frozen=True)
class Pending:
    """One metric test before the multiplicity correction."""

    index: int  # which verdict it belongs to
    metric: str
    gating: bool
    estimate: float
    low: float
    high: float
    confidence: float
    p_value: float
    noise_sd: float
    base_median: float
    head_median: float
    n_base: int
    n_head: int
    min_effect: float


def _values(runs: Sequence[RunResult], metric: str) -> list[float] | None:
    values = [r.metrics.get(metric) for r in runs]
    if not values or any(v is None or v <= 0 or not math.isfinite(v) for v in values):
        return None
    return [float(v) for v in values if v is not None]


def _shell(
    mode: Literal["ab", "baseline"], scenario: Scenario, threads: int, base: str, head: str, **extra: object
) -> Verdict:
    return Verdict(
        mode=mode,
        scenario=scenario.name,
        threads=threads,
        base=base,
        head=head,
        metrics=(),
        base_version=str(extra.get("base_version", "")),
        head_version=str(extra.get("head_version", "")),
        warnings=tuple(str(w) for w in extra.get("warnings", ())),  # type: ignore[attr-defined]
    )


def failed_verdict(
    mode: Literal["ab", "baseline"], scenario: Scenario, threads: int, base: str, head: str, reason: str
) -> Verdict:
    """The verdict of a comparison whose runs failed: it is reported in the mode it was asked in."""
    metric = MetricVerdict(metric="run", higher_is_worse=False, outcome="failed", reason=reason)
    return replace(_shell(mode, scenario, threads, base, head), metrics=(metric,))


def no_baseline_verdict(scenario: Scenario, threads: int, server: str, reason: str) -> Verdict:
    advice = f"{reason}; record one with: {record_command(scenario.name, server, scenario.profile)}"
    metric = MetricVerdict(metric="baseline", higher_is_worse=False, outcome="no_baseline", reason=advice, gating=False)
    return replace(_shell("baseline", scenario, threads, "baseline", server), metrics=(metric,))


def _metrics_of(scenario: Scenario) -> list[tuple[str, bool]]:
    return [(m, m in scenario.gate_metrics) for m in METRICS]


def _instability(runs: Sequence[RunResult], side: str) -> list[str]:
    warnings = []
    for metric in ("qps", "cpu_per_txn"):
        values = _values(runs, metric)
        if values and len(values) >= 3:
            cv = stats.coefficient_of_variation(values)
            if cv > UNSTABLE_CV:
                warnings.append(f"{side} {metric} varied {cv * 100:.0f} % (CV) between repetitions: unstable")
    return warnings


class _Estimate(Protocol):
    """What paired and two-sample estimates have in common."""

    @property
    def estimate(self) -> float: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def confidence(self) -> float: ...
    @property
    def p_value(self) -> float: ...
    @property
    def noise_sd(self) -> float: ...


def _pending(
    index: int,
    scenario: Scenario,
    samples: Callable[[str], tuple[list[float] | None, list[float] | None]],
    test: Callable[[list[float], list[float]], _Estimate],
) -> list[Pending]:
    """One pending test per metric both sides measured (a metric absent on either side is skipped)."""
    pending = []
    for metric, gating in _metrics_of(scenario):
        base, head = samples(metric)
        if not base or not head:
            continue
        est = test(base, head)
        pending.append(
            Pending(
                index=index,
                metric=metric,
                gating=gating,
                estimate=est.estimate,
                low=est.low,
                high=est.high,
                confidence=est.confidence,
                p_value=est.p_value,
                noise_sd=est.noise_sd,
                base_median=statistics.median(base),
                head_median=statistics.median(head),
                n_base=len(base),
                n_head=len(head),
                min_effect=scenario.min_effects.get(metric, 0.05),
            )
        )
    return pending


def baseline_pending(
    index: int, baseline: Baseline, runs: Sequence[RunResult], scenario: Scenario, *, confidence: float
) -> list[Pending]:
    """Candidate repetitions against the baseline's samples (two-sample test)."""
    return _pending(
        index,
        scenario,
        lambda metric: (list(baseline.values(metric)), _values(runs, metric)),
        lambda base, cand: stats.two_sample_test(base, cand, confidence=confidence),
    )


def ab_pending(
    index: int, pairs: Sequence[tuple[RunResult, RunResult]], scenario: Scenario, *, confidence: float
) -> list[Pending]:
    """Interleaved base/head pairs (paired test on the per-pair log ratios)."""
    base_runs = [b for b, _ in pairs]
    head_runs = [h for _, h in pairs]
    return _pending(
        index,
        scenario,
        lambda metric: (_values(base_runs, metric), _values(head_runs, metric)),
        lambda base, head: stats.paired_test(base, head, confidence=confidence),
    )


def _adjust(pending: Sequence[Pending]) -> dict[tuple[int, str], float]:
    adjusted: dict[tuple[int, str], float] = {}
    for gating in (True, False):
        family = [p for p in pending if p.gating == gating]
        for p, adj in zip(family, stats.holm([p.p_value for p in family]), strict=True):
            adjusted[(p.index, p.metric)] = adj
    return adjusted


def conclude(
    shells: Sequence[Verdict], pending: Sequence[Pending], *, alpha: float = DEFAULT_ALPHA, confidence: float
) -> list[Verdict]:
    """Holm-adjust all tests of the invocation, classify each metric, and fill in the verdicts."""
    adjusted = _adjust(pending)
    by_index: dict[int, list[MetricVerdict]] = {i: [] for i in range(len(shells))}
    family_size = max(1, sum(1 for p in pending if p.gating))
    for p in pending:
        p_adj = adjusted[(p.index, p.metric)]
        higher_is_worse = METRICS[p.metric]
        n_pairs = min(p.n_base, p.n_head)
        result = stats.classify(
            p.estimate,
            p.low,
            p.high,
            p_adj,
            alpha=alpha,
            min_effect=p.min_effect,
            higher_is_worse=higher_is_worse,
            achieved_confidence=p.confidence,
            required_confidence=confidence,
            noise_sd=p.noise_sd,
            n=n_pairs,
        )
        needed = None
        if result.outcome == "inconclusive":
            needed = stats.pairs_needed(p.noise_sd, p.min_effect, alpha=alpha / family_size)
        by_index[p.index].append(
            MetricVerdict(
                metric=p.metric,
                higher_is_worse=higher_is_worse,
                outcome=result.outcome,
                reason=result.reason,
                base_median=p.base_median,
                head_median=p.head_median,
                estimate_pct=stats.percent(p.estimate),
                ci_low_pct=stats.percent(p.low),
                ci_high_pct=stats.percent(p.high),
                p_value=p.p_value,
                p_adjusted=p_adj,
                bound_pct=p.min_effect * 100.0,
                noise_pct=stats.percent(p.noise_sd),
                n_base=p.n_base,
                n_head=p.n_head,
                pairs_needed=needed,
                gating=p.gating,
                confidence=p.confidence,
            )
        )
    out = []
    for i, shell in enumerate(shells):
        if shell.metrics:  # failed or no-baseline verdicts are already complete
            out.append(shell)
            continue
        metrics = tuple(by_index[i])
        warnings = list(shell.warnings)
        missing = [m for m, _ in _metrics_of_names(shell) if m not in {x.metric for x in metrics}]
        if missing:
            warnings.append(f"not measured here: {', '.join(missing)}")
        out.append(replace(shell, metrics=metrics, warnings=tuple(warnings)))
    return out


def _metrics_of_names(shell: Verdict) -> list[tuple[str, bool]]:
    del shell
    return [(m, True) for m in METRICS]


def judge_against_baselines(
    cases: Sequence[tuple[Scenario, int, str, Baseline | None, Sequence[RunResult]]],
    *,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = 0.95,
) -> list[Verdict]:
    """Baseline mode for several (scenario, threads, server, baseline, candidate runs) at once."""
    shells: list[Verdict] = []
    pending: list[Pending] = []
    for index, (scenario, threads, server, baseline, runs) in enumerate(cases):
        failed = [r for r in runs if not r.ok]
        version = runs[0].server_version if runs else ""
        if not runs or failed:
            reason = failed[0].failure if failed else "no runs"
            shells.append(failed_verdict("baseline", scenario, threads, "baseline", server, f"run failed: {reason}"))
            continue
        if baseline is None:
            shells.append(no_baseline_verdict(scenario, threads, server, "no baseline for this testbed"))
            continue
        why = incomparable_reason(baseline, runs)
        if why is not None:
            shells.append(no_baseline_verdict(scenario, threads, server, f"baseline not comparable: {why}"))
            continue
        shells.append(
            _shell(
                "baseline",
                scenario,
                threads,
                f"baseline {baseline.recorded_at[:10]}",
                server,
                base_version=baseline.server_version,
                head_version=version,
                warnings=_instability(runs, "candidate"),
            )
        )
        pending += baseline_pending(index, baseline, runs, scenario, confidence=confidence)
    return conclude(shells, pending, alpha=alpha, confidence=confidence)


def judge_pairs(
    cases: Sequence[tuple[Scenario, int, str, str, Sequence[tuple[RunResult, RunResult]]]],
    *,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = 0.95,
) -> list[Verdict]:
    """A/B mode for several (scenario, threads, base name, head name, pairs) at once."""
    shells: list[Verdict] = []
    pending: list[Pending] = []
    for index, (scenario, threads, base, head, pairs) in enumerate(cases):
        good = [(b, h) for b, h in pairs if b.ok and h.ok]
        bad = [r for pair in pairs for r in pair if not r.ok]
        if len(good) < 2:
            reason = f"run failed: {bad[0].failure}" if bad else "fewer than 2 complete pairs"
            shells.append(failed_verdict("ab", scenario, threads, base, head, reason))
            continue
        warnings = _instability([b for b, _ in good], "base") + _instability([h for _, h in good], "head")
        if bad:
            warnings.append(f"{len(bad)} failed run(s) left out of the pairs (first: {bad[0].failure})")
        shells.append(
            _shell(
                "ab",
                scenario,
                threads,
                base,
                head,
                base_version=good[0][0].server_version,
                head_version=good[0][1].server_version,
                warnings=warnings,
            )
        )
        pending += ab_pending(index, good, scenario, confidence=confidence)
    return conclude(shells, pending, alpha=alpha, confidence=confidence)
