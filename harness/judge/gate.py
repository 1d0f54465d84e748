"""The judge stage: turn repetitions into verdicts, against a baseline or in an A/B comparison.

This module decides what is compared with what, runs the right test for each metric, applies Holm's
correction across every gating test of one invocation (timing and cost metrics alike; non-gating
metrics are adjusted within their own family and reported, never failing the build), and builds
:class:`~harness.model.Verdict` records. The outcome and its wording come from
:mod:`harness.judge.classify`.

===========  =========================================  =============================================
kind         baseline mode                              A/B mode
===========  =========================================  =============================================
time         Hodges-Lehmann shift, exact Mann-Whitney   Hodges-Lehmann of per-pair log ratios, exact
             interval and p (two samples)               Wilcoxon signed-rank interval and p
cost         Student t on logs with a noise floor and   the same, base runs against head runs
             a ceiling (:func:`stats.cost_test`)
===========  =========================================  =============================================
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from harness.judge import capacity, stats, steady
from harness.judge.baselines import Baseline, incomparable_reason, record_command
from harness.judge.classify import Classification, Evidence, classify
from harness.judge.explain import explain, per_transaction
from harness.judge.ranktests import paired_test, two_sample_test
from harness.model import Kind, MetricVerdict, RunResult, Scenario, Verdict, metrics
from harness.model.operation_stats import is_operation_metric
from harness.model.verdict import CAPACITY_METRICS, count_offset
from harness.model.work import WORK

DEFAULT_ALPHA = 0.02  # family-wise; the simulation (benchmarks/gate_simulation.py) keeps A/A false alarms <= 1 %
UNSTABLE_CV = 0.10
#: The metrics each kind of run measures, in report order (the catalogue's ``kinds``). Cost runs never
#: report QPS or latency.
KIND_METRICS: dict[Kind, tuple[str, ...]] = {kind: metrics.kind_metrics(kind) for kind in ("time", "cost")}
DEFAULT_MIN_EFFECT: dict[Kind, float] = {"time": 0.05, "cost": 0.005}


@dataclass(frozen=True)
class BaselineCase:
    """Candidate runs of one scenario x threads x kind on one server, and the baseline to judge them by."""

    scenario: Scenario
    threads: int
    server: str
    baseline: Baseline | None
    runs: Sequence[RunResult]
    kind: Kind = "time"
    #: The exact recording to suggest when no baseline judges these runs (the caller knows the settings
    #: and the repetitions the design check needs, :mod:`harness.pipeline.advice`); "" for the bare one.
    record_hint: str = ""


@dataclass(frozen=True)
class PairedCase:
    """Interleaved base/head runs of one scenario x threads x kind."""

    scenario: Scenario
    threads: int
    base: str
    head: str
    pairs: Sequence[tuple[RunResult, RunResult]]
    kind: Kind = "time"


@dataclass(frozen=True)
class _Pending:
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


# --- per-operation metrics (issue 22) -------------------------------------------------------------------
def judged_metrics(scenario: Scenario, kind: Kind) -> tuple[str, ...]:
    """The metrics judged for this kind of run: the kind's own, then the per-operation metrics the scenario
    gates on (``ops_per_s``, ``READ.p99_ms``; timing runs only: a cost run's rates mean nothing)."""
    extra = tuple(m for m in scenario.gate_metrics if is_operation_metric(m)) if kind == "time" else ()
    return (*KIND_METRICS[kind], *extra)


# --- end per-operation metrics ---------------------------------------------------------------------------


def _values(runs: Sequence[RunResult], metric: str) -> list[float] | None:
    """Every run's value, or None when a run lacks it; counts of the work vector may be 0, others not."""
    values = [r.metric(metric) for r in runs]
    low = 0.0 if metric in WORK else math.ulp(0.0)
    if not values or any(v is None or v < low or not math.isfinite(v) for v in values):
        return None
    return [float(v) for v in values if v is not None]


def _gates(metric: str, scenario: Scenario) -> bool:
    """Whether a metric gates: named in the scenario's gate, or a repeating work-vector component of a
    scenario whose instructions gate (the work vector is judged in the same cost runs)."""
    work = WORK.get(metric)
    return metric in scenario.gate_metrics or (
        work is not None and work.gating and "instr_per_txn" in scenario.gate_metrics
    )


def _shell(
    mode: Literal["ab", "baseline"],
    scenario: Scenario,
    threads: int,
    base: str,
    head: str,
    kind: Kind = "time",
    *,
    base_version: str = "",
    head_version: str = "",
    warnings: Sequence[str] = (),
) -> Verdict:
    return Verdict(
        mode=mode,
        scenario=scenario.name,
        threads=threads,
        base=base,
        head=head,
        metrics=(),
        base_version=base_version,
        head_version=head_version,
        warnings=tuple(warnings),
        kind=kind,
    )


def failed_verdict(
    mode: Literal["ab", "baseline"],
    scenario: Scenario,
    threads: int,
    base: str,
    head: str,
    reason: str,
    kind: Kind = "time",
) -> Verdict:
    """The verdict of a comparison whose runs failed: it is reported in the mode it was asked in."""
    metric = MetricVerdict(metric="run", higher_is_worse=False, outcome="failed", reason=reason, summary=reason)
    return replace(_shell(mode, scenario, threads, base, head, kind), metrics=(metric,))


def no_baseline_verdict(
    scenario: Scenario, threads: int, server: str, reason: str, kind: Kind = "time", command: str = ""
) -> Verdict:
    """No comparable baseline: the runs are stored, and the sentence says how to record one (``command``,
    else the bare recording of this scenario, server and profile)."""
    command = command or record_command(scenario.name, server, scenario.profile, cost=kind == "cost")
    advice = f"{reason}; record one with: {command}"
    metric = MetricVerdict(
        metric="baseline", higher_is_worse=False, outcome="no_baseline", reason=advice, summary=advice, gating=False
    )
    return replace(_shell("baseline", scenario, threads, "baseline", server, kind), metrics=(metric,))


def _instability(runs: Sequence[RunResult], side: str) -> list[str]:
    warnings = []
    for metric in ("qps", "cpu_per_txn"):
        values = _values(runs, metric)
        if values and len(values) >= 3:
            cv = stats.coefficient_of_variation(values)
            if cv > UNSTABLE_CV:
                warnings.append(f"{side} {metric} varied {cv * 100:.0f} % (CV) between repetitions: unstable")
    return warnings


def _seconds(runs: Sequence[RunResult]) -> float | None:
    durations = [(r.finished_at - r.started_at).total_seconds() for r in runs]
    return statistics.median(durations) if durations else None


def _backend(runs: Sequence[RunResult]) -> str:
    return runs[0].backend if runs else ""


def _evidence(
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


def _pending(
    index: int,
    scenario: Scenario,
    kind: Kind,
    mode: Literal["ab", "baseline"],
    base_values: dict[str, list[float] | None],
    head_runs: Sequence[RunResult],
    seconds: float | None,
) -> list[_Pending]:
    """One pending test per metric both sides measured (a metric absent on either side is skipped)."""
    pending = []
    for metric in judged_metrics(scenario, kind):
        base, head = base_values.get(metric), _values(head_runs, metric)
        if not base or not head:
            continue
        gating = _gates(metric, scenario)
        if metric in WORK and not gating and not any(base) and not any(head):
            continue  # information only, and nothing happened on either side
        work = WORK.get(metric)
        min_effect = scenario.min_effects.get(metric, work.min_effect if work else DEFAULT_MIN_EFFECT[kind])
        offset = count_offset(metric, min_effect)  # the absolute floor stays whatever the minimum effect
        tested_base, tested_head = [v + offset for v in base], [v + offset for v in head]
        pending.append(
            _Pending(
                index=index,
                metric=metric,
                gating=gating,
                evidence=_evidence(kind, mode, tested_base, tested_head, min_effect=min_effect),
                base_median=statistics.median(base),
                head_median=statistics.median(head),
                min_effect=min_effect,
                seconds_per_repetition=seconds,
                backend=_backend(head_runs) if metric == "instr_per_txn" or metric.startswith("sys_") else "",
                kind=kind,
                mode=mode,
                base_values=tuple(tested_base),
                head_values=tuple(tested_head),
            )
        )
    work_gated = [p for p in pending if p.gating and p.metric in WORK]
    return [replace(p, weight=1.0 / len(work_gated)) if p in work_gated else p for p in pending]


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


def conclude(shells: Sequence[Verdict], pending: Sequence[_Pending], *, alpha: float = DEFAULT_ALPHA) -> list[Verdict]:
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
        ev = _evidence(kind, mode, base, head, min_effect=min_effect, confidence=required)
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
    if p_adjusted >= alpha and _beyond(ev, min_effect):
        return 1.0 - alpha / max(1, family_size)
    return 0.95


def _with_note(reason: str, note: str) -> str:
    """The reason, with a note before its final full stop."""
    if not note:
        return reason
    return f"{reason[:-1]}{note}." if reason.endswith(".") else f"{reason}{note}"


def _beyond(ev: Evidence, min_effect: float) -> bool:
    """Whether the interval lies wholly beyond the minimum effect, on either side."""
    threshold = math.log1p(min_effect)
    return ev.refusal is None and (ev.low > threshold or ev.high < -threshold)


_MISSING_HINTS: dict[Kind, str] = {
    "time": " (instructions need perf counters, missing on most VMs; cost runs count them anywhere: --cost)",
    "cost": "",
}


def _counted_alike(base: RunResult, head: RunResult) -> list[str]:
    """A cost comparison across valgrind versions also compares how each one lets glibc pick its code."""
    if base.tool == head.tool:
        return []
    return [
        f"instructions counted by {base.tool} (base) and {head.tool} (head): under another valgrind glibc may pick "
        "other string and memory functions, and that difference is part of the change"
    ]


def _missing(scenario: Scenario, kind: Kind, tests: Sequence[_Pending]) -> list[str]:
    """A warning naming the gating metrics this kind of run should have measured but did not."""
    measured = {p.metric for p in tests}
    missing = [m for m in judged_metrics(scenario, kind) if m in scenario.gate_metrics and m not in measured]
    return [f"not measured here: {', '.join(missing)}{_MISSING_HINTS[kind]}"] if missing else []


def judge_against_baselines(cases: Sequence[BaselineCase], *, alpha: float = DEFAULT_ALPHA) -> list[Verdict]:
    """Baseline mode for several cases at once (Holm across all of them)."""
    shells: list[Verdict] = []
    pending: list[_Pending] = []
    unsteady: dict[int, str] = {}  # a window too short for its p95: latency is not decided on it
    for index, case in enumerate(cases):
        scenario, threads, server, runs = case.scenario, case.threads, case.server, case.runs
        failed = [r for r in runs if not r.ok]
        if not runs or failed:
            reason = failed[0].failure if failed else "no runs"
            shells.append(
                failed_verdict("baseline", scenario, threads, "baseline", server, f"run failed: {reason}", case.kind)
            )
            continue
        baseline = case.baseline
        if baseline is None:
            where = "for this server build and configuration" if case.kind == "cost" else "for this testbed"
            reason = f"no baseline {where}"
            shells.append(no_baseline_verdict(scenario, threads, server, reason, case.kind, case.record_hint))
            continue
        why = incomparable_reason(baseline, runs)
        if why is not None:
            reason = f"baseline not comparable: {why}"
            shells.append(no_baseline_verdict(scenario, threads, server, reason, case.kind, case.record_hint))
            continue
        base_values = {m: list(baseline.values(m)) or None for m in judged_metrics(scenario, case.kind)}
        tests = _pending(index, scenario, case.kind, "baseline", base_values, runs, _seconds(runs))
        pending += tests
        warnings = [
            *_instability(runs, "candidate"),
            *baseline.warnings_for(runs),
            *_missing(scenario, case.kind, tests),
        ]
        if case.kind == "time" and (short := steady.note(runs, "candidate")):
            unsteady[index] = short
            warnings.append(short)
        shell = _shell(
            "baseline",
            scenario,
            threads,
            f"baseline {baseline.recorded_at[:10]}",
            server,
            case.kind,
            base_version=baseline.server_version,
            head_version=runs[0].server_version,
            warnings=warnings,
        )
        if case.kind == "cost":  # a cost baseline keeps its functions: the culprits of a change, on any machine
            shell = replace(shell, explanation=explain(baseline.functions, per_transaction(runs)))
        shells.append(shell)
    return steady.hold(conclude(shells, pending, alpha=alpha), unsteady)


def judge_pairs(cases: Sequence[PairedCase], *, alpha: float = DEFAULT_ALPHA) -> list[Verdict]:
    """A/B mode for several cases at once (Holm across all of them)."""
    shells: list[Verdict] = []
    pending: list[_Pending] = []
    unsteady: dict[int, str] = {}  # a window too short for its p95: latency is not decided on it
    for index, case in enumerate(cases):
        scenario, threads = case.scenario, case.threads
        good = [(b, h) for b, h in case.pairs if b.ok and h.ok]
        bad = [r for pair in case.pairs for r in pair if not r.ok]
        if len(good) < 2:
            reason = f"run failed: {bad[0].failure}" if bad else "fewer than 2 complete pairs"
            shells.append(failed_verdict("ab", scenario, threads, case.base, case.head, reason, case.kind))
            continue
        base_runs, head_runs = [b for b, _ in good], [h for _, h in good]
        base_values = {m: _values(base_runs, m) for m in judged_metrics(scenario, case.kind)}
        per_pair = _seconds([*base_runs, *head_runs])
        seconds = 2 * per_pair if per_pair is not None else None
        tests = _pending(index, scenario, case.kind, "ab", base_values, head_runs, seconds)
        pending += tests
        warnings = [
            *_instability(base_runs, "base"),
            *_instability(head_runs, "head"),
            *_missing(scenario, case.kind, tests),
        ]
        if bad:
            warnings.append(f"{len(bad)} failed run(s) left out of the pairs (first: {bad[0].failure})")
        short = [n for side, rs in (("base", base_runs), ("head", head_runs)) if (n := steady.note(rs, side))]
        if case.kind == "time" and short:
            unsteady[index] = "; ".join(short)
            warnings += short
        shell = _shell(
            "ab",
            scenario,
            threads,
            case.base,
            case.head,
            case.kind,
            base_version=good[0][0].server_version,
            head_version=good[0][1].server_version,
            warnings=warnings,
        )
        if case.kind == "cost":
            shell = replace(
                shell,
                explanation=explain(per_transaction(base_runs), per_transaction(head_runs)),
                warnings=(*shell.warnings, *_counted_alike(base_runs[0], head_runs[0])),
            )
        shells.append(shell)
    for sweep in _sweeps(cases):
        shells.append(_capacity_shell(sweep))
        pending += _capacity_pending(len(shells) - 1, sweep)
        if reason := sweep.unsteady_reason():  # its figures rest on a window too short for its p95
            unsteady[len(shells) - 1] = reason
    return steady.hold(conclude(shells, pending, alpha=alpha), unsteady)


def _sweeps(cases: Sequence[PairedCase]) -> list[capacity.SweepComparison]:
    """Timing cases of one scenario at 2+ client counts with an SLO, as thread sweeps to judge capacity."""
    grouped: dict[tuple[str, str, str], dict[int, Sequence[tuple[RunResult, RunResult]]]] = {}
    scenarios: dict[tuple[str, str, str], Scenario] = {}
    for case in cases:
        if case.kind == "time" and capacity.judged(case.scenario):
            key = (case.scenario.name, case.base, case.head)
            grouped.setdefault(key, {})[case.threads] = case.pairs
            scenarios[key] = case.scenario
    found = [capacity.sweep_comparisons(scenarios[k], k[1], k[2], by_threads) for k, by_threads in grouped.items()]
    return [s for s in found if s is not None]


def _capacity_shell(sweep: capacity.SweepComparison) -> Verdict:
    shell = _shell(
        "ab",
        sweep.scenario,
        sweep.top_threads,
        sweep.base,
        sweep.head,
        base_version=sweep.base_version,
        head_version=sweep.head_version,
        warnings=sweep.notes(),
    )
    return replace(shell, curves=sweep.curves, slo_p95_ms=sweep.scenario.slo_p95_ms)


def _capacity_pending(index: int, sweep: capacity.SweepComparison) -> list[_Pending]:
    """The capacity tests of one sweep: per-pair log ratios of clients and QPS at the SLO (signed-rank)."""
    pending = []
    for metric in CAPACITY_METRICS:
        base, head = sweep.values(metric, "base"), sweep.values(metric, "head")
        min_effect = sweep.scenario.min_effects.get(metric, DEFAULT_MIN_EFFECT["time"])
        pending.append(
            _Pending(
                index=index,
                metric=metric,
                gating=metric in sweep.scenario.gate_metrics,
                evidence=_evidence("time", "ab", base, head, min_effect=min_effect),
                base_median=statistics.median(base),
                head_median=statistics.median(head),
                min_effect=min_effect,
                seconds_per_repetition=None,
                backend="",
                mode="ab",
                base_values=tuple(base),
                head_values=tuple(head),
            )
        )
    return pending
