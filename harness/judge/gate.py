"""The judge stage: turn repetitions into verdicts, against a baseline or in an A/B comparison.

This module decides what is compared with what (baselines or pairs, and thread sweeps judged for
capacity) and builds the :class:`~harness.model.Verdict` records. What each case tests lives in
:mod:`harness.judge.case_tests`; the right test for each metric, Holm's correction across every test
of one invocation and the decision in :mod:`harness.judge.family`; the outcome and its wording in
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

import statistics
from collections.abc import Sequence
from dataclasses import replace

from harness.judge import capacity, steady
from harness.judge.baseline_match import cost_warnings, incomparable_reason
from harness.judge.case_tests import (
    DEFAULT_MIN_EFFECT,
    KIND_METRICS,
    BaselineCase,
    PairedCase,
    counted_alike,
    failed_verdict,
    instability,
    judged_metrics,
    median_seconds,
    metric_values,
    missing_warning,
    no_baseline_verdict,
    pending_tests,
    verdict_shell,
)
from harness.judge.explain import explain, per_transaction
from harness.judge.family import DEFAULT_ALPHA, Pending, beyond, conclude, decide, evidence
from harness.model import RunResult, Scenario, Verdict
from harness.model.verdict import CAPACITY_METRICS

# the names the judge's unit tests reach for, kept where they were before the split
_Pending, _evidence, _beyond = Pending, evidence, beyond

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MIN_EFFECT",
    "KIND_METRICS",
    "BaselineCase",
    "PairedCase",
    "conclude",
    "decide",
    "failed_verdict",
    "judge_against_baselines",
    "judge_pairs",
    "judged_metrics",
    "no_baseline_verdict",
]


def judge_against_baselines(cases: Sequence[BaselineCase], *, alpha: float = DEFAULT_ALPHA) -> list[Verdict]:
    """Baseline mode for several cases at once (Holm across all of them)."""
    shells: list[Verdict] = []
    pending: list[Pending] = []
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
        tests = pending_tests(index, scenario, case.kind, "baseline", base_values, runs, median_seconds(runs))
        pending += tests
        warnings = [
            *instability(runs, "candidate"),
            *cost_warnings(baseline, runs),
            *missing_warning(scenario, case.kind, tests),
        ]
        if case.kind == "time" and (short := steady.note(runs, "candidate")):
            unsteady[index] = short
            warnings.append(short)
        shell = verdict_shell(
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
    pending: list[Pending] = []
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
        base_values = {m: metric_values(base_runs, m) for m in judged_metrics(scenario, case.kind)}
        per_pair = median_seconds([*base_runs, *head_runs])
        seconds = 2 * per_pair if per_pair is not None else None
        tests = pending_tests(index, scenario, case.kind, "ab", base_values, head_runs, seconds)
        pending += tests
        warnings = [
            *instability(base_runs, "base"),
            *instability(head_runs, "head"),
            *missing_warning(scenario, case.kind, tests),
        ]
        if bad:
            warnings.append(f"{len(bad)} failed run(s) left out of the pairs (first: {bad[0].failure})")
        short = [n for side, rs in (("base", base_runs), ("head", head_runs)) if (n := steady.note(rs, side))]
        if case.kind == "time" and short:
            unsteady[index] = "; ".join(short)
            warnings += short
        shell = verdict_shell(
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
                warnings=(*shell.warnings, *counted_alike(base_runs[0], head_runs[0])),
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
    shell = verdict_shell(
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


def _capacity_pending(index: int, sweep: capacity.SweepComparison) -> list[Pending]:
    """The capacity tests of one sweep: per-pair log ratios of clients and QPS at the SLO (signed-rank)."""
    pending = []
    for metric in CAPACITY_METRICS:
        base, head = sweep.values(metric, "base"), sweep.values(metric, "head")
        min_effect = sweep.scenario.min_effects.get(metric, DEFAULT_MIN_EFFECT["time"])
        pending.append(
            Pending(
                index=index,
                metric=metric,
                gating=metric in sweep.scenario.gate_metrics,
                evidence=evidence("time", "ab", base, head, min_effect=min_effect),
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
