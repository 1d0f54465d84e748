"""What one case (scenario x threads x kind) tests: the metrics its kind of run measures and the
scenario gates on, every run's values, one pending test per metric both sides measured, and the shell
of its verdict with the warnings its runs earn (unstable, unmeasured, counted by two valgrinds).
:mod:`harness.judge.gate` puts the cases of one invocation together; :mod:`harness.judge.family` decides.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from harness.judge import stats
from harness.judge.baselines import Baseline, record_command
from harness.judge.family import Pending, evidence
from harness.model import Kind, MetricVerdict, RunResult, Scenario, Verdict, metrics
from harness.model.operation_stats import is_operation_metric
from harness.model.verdict import count_offset
from harness.model.work import WORK

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


# --- per-operation metrics (issue 22) -------------------------------------------------------------------
def judged_metrics(scenario: Scenario, kind: Kind) -> tuple[str, ...]:
    """The metrics judged for this kind of run: the kind's own, then the per-operation metrics the scenario
    gates on (``ops_per_s``, ``READ.p99_ms``; timing runs only: a cost run's rates mean nothing)."""
    extra = tuple(m for m in scenario.gate_metrics if is_operation_metric(m)) if kind == "time" else ()
    return (*KIND_METRICS[kind], *extra)


# --- end per-operation metrics ---------------------------------------------------------------------------


def metric_values(runs: Sequence[RunResult], metric: str) -> list[float] | None:
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


def verdict_shell(
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
    return replace(verdict_shell(mode, scenario, threads, base, head, kind), metrics=(metric,))


def no_baseline_verdict(
    scenario: Scenario, threads: int, server: str, reason: str, kind: Kind = "time", command: str = ""
) -> Verdict:
    """No comparable baseline: the runs are stored, and the sentence says how to record one (``command``,
    else the bare recording of this scenario, server and profile)."""
    recorded: Kind | Literal["both"] = "cost" if kind == "cost" else "both"
    command = command or record_command(scenario.name, server, scenario.profile, kind=recorded)
    advice = f"{reason}; record one with: {command}"
    metric = MetricVerdict(
        metric="baseline", higher_is_worse=False, outcome="no_baseline", reason=advice, summary=advice, gating=False
    )
    return replace(verdict_shell("baseline", scenario, threads, "baseline", server, kind), metrics=(metric,))


def instability(runs: Sequence[RunResult], side: str) -> list[str]:
    warnings = []
    for metric in ("qps", "cpu_per_txn"):
        values = metric_values(runs, metric)
        if values and len(values) >= 3:
            cv = stats.coefficient_of_variation(values)
            if cv > UNSTABLE_CV:
                warnings.append(f"{side} {metric} varied {cv * 100:.0f} % (CV) between repetitions: unstable")
    return warnings


def median_seconds(runs: Sequence[RunResult]) -> float | None:
    durations = [(r.finished_at - r.started_at).total_seconds() for r in runs]
    return statistics.median(durations) if durations else None


def _backend(runs: Sequence[RunResult]) -> str:
    return runs[0].backend if runs else ""


def pending_tests(
    index: int,
    scenario: Scenario,
    kind: Kind,
    mode: Literal["ab", "baseline"],
    base_values: dict[str, list[float] | None],
    head_runs: Sequence[RunResult],
    seconds: float | None,
) -> list[Pending]:
    """One pending test per metric both sides measured (a metric absent on either side is skipped)."""
    pending = []
    for metric in judged_metrics(scenario, kind):
        base, head = base_values.get(metric), metric_values(head_runs, metric)
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
            Pending(
                index=index,
                metric=metric,
                gating=gating,
                evidence=evidence(kind, mode, tested_base, tested_head, min_effect=min_effect),
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


_MISSING_HINTS: dict[Kind, str] = {
    "time": " (instructions need perf counters, missing on most VMs; cost runs count them anywhere: --cost)",
    "cost": "",
}


def counted_alike(base: RunResult, head: RunResult) -> list[str]:
    """A cost comparison across valgrind versions also compares how each one lets glibc pick its code."""
    if base.tool == head.tool:
        return []
    return [
        f"instructions counted by {base.tool} (base) and {head.tool} (head): under another valgrind glibc may pick "
        "other string and memory functions, and that difference is part of the change"
    ]


def missing_warning(scenario: Scenario, kind: Kind, tests: Sequence[Pending]) -> list[str]:
    """A warning naming the gating metrics this kind of run should have measured but did not."""
    measured = {p.metric for p in tests}
    missing = [m for m in judged_metrics(scenario, kind) if m in scenario.gate_metrics and m not in measured]
    return [f"not measured here: {', '.join(missing)}{_MISSING_HINTS[kind]}"] if missing else []
