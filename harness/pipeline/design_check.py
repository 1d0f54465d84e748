"""Before anything runs: can this invocation's design fail, and if not, which design can?

The gating tests an invocation will make are known before the first run: the scenarios, the
servers, the kinds of runs, the repetitions, the stored baselines and which metrics this machine can
measure. :func:`check` turns them into :class:`harness.judge.design.TestDesign` records and asks
:func:`harness.judge.design.attainable` whether every gating test could reach alpha under Holm.

* It can: run as planned.
* It cannot and the repetitions came from the profile: raise them to the smallest count that can,
  and say so with the new plan and its wall time (one line, also in the report) before it starts.
  When that wall time is above the invocation's limit (``--max-minutes``, 10 by default; ``--yes``
  lifts it), stop instead, in one line naming what it would take and the cheaper way (cost runs, a
  baseline of more runs with the exact command). It never asks: a CI job is never left waiting.
* It cannot and the user forced the repetitions (``--repetitions`` / ``DBPERF_REPETITIONS``): stop
  before spending any time, with one line naming the cause and the count that would work.

:func:`baseline_runs` is the other side of the same rule: the timing runs a baseline recording needs
so that the gate after it can fail without hundreds of candidate runs (every suggested
``dbperf baseline record`` carries it). docs/method.md, "Before the first run".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.judge import design
from harness.measure.probes import perf_support
from harness.model import Kind, Scenario, Server
from harness.model import metrics as catalogue
from harness.model.metrics import WORK_METRICS
from harness.model.operation_stats import is_operation_metric
from harness.model.time_estimate import duration
from harness.model.work import WORK
from harness.pipeline.cost_price import cost_run_seconds


class DesignError(ConfigError):
    """A forced design that can never return REGRESSION (raised before any run)."""


@dataclass(frozen=True)
class Planned:
    """One comparison an invocation will judge: a scenario x threads x kind, and its sample sizes.

    ``n_base`` is the stored baseline's run count (baseline mode) or the pairs (A/B); ``n_head`` the
    candidate runs (baseline) or the pairs (A/B).
    """

    label: str
    scenario: Scenario
    server: Server
    kind: Kind
    mode: str  # "ab" or "baseline"
    n_base: int
    n_head: int
    metrics: tuple[str, ...] = ()


def gating_metrics(scenario: Scenario, server: Server, kind: Kind) -> tuple[str, ...]:
    """The gating metrics this machine will measure for a run of ``kind`` on ``server``."""
    if kind == "cost":  # instructions, and with them the repeating components of the work vector
        return tuple(m for m in ("instr_per_txn",) if m in scenario.gate_metrics) + tuple(
            w.name for w in WORK_METRICS if w.gating and "instr_per_txn" in scenario.gate_metrics
        )
    measurable = ["qps", "p95_ms", "p99_ms"]
    if server.provider != "external":
        measurable.append("cpu_per_txn")
        if not perf_support():  # "" when perf counts instructions here
            measurable.append("instr_per_txn")
    measurable += [m for m in scenario.gate_metrics if is_operation_metric(m)]  # ops_per_s, READ.p99_ms
    return tuple(m for m in measurable if m in scenario.gate_metrics)


def tests_of(planned: Sequence[Planned]) -> list[design.TestDesign]:
    """One test design per gating metric of every planned comparison."""
    out = []
    for p in planned:
        test_kind: design.Kind = "cost" if p.kind == "cost" else "signed-rank" if p.mode == "ab" else "rank-sum"
        work = [m for m in p.metrics if m in WORK]  # they share the weight of one test
        out += [
            design.TestDesign(
                test_kind, p.n_base, p.n_head, p.label, metric, 1.0 / len(work) if metric in work else 1.0
            )
            for metric in p.metrics
        ]
    return out


@dataclass(frozen=True)
class Decision:
    """What the check decided: the repetitions to run (timing), and the line to tell the user."""

    repetitions: int | None
    note: str = ""
    check: design.DesignCheck | None = None


Price = Callable[[int], "tuple[float, str]"]
"""``price(repetitions)``: the wall time of the timing runs at that many repetitions, and its source."""


@dataclass(frozen=True)
class Limit:
    """How much raised work an invocation takes without asking: ``seconds`` (None: no limit), and the
    cheaper ways to name when it stops (``cheaper``: clauses such as ``cost runs only (--cost ...)``)."""

    seconds: float | None = None
    cheaper: tuple[str, ...] = ()


def check(
    planned: Sequence[Planned],
    *,
    alpha: float,
    forced: bool,
    price: Price | None = None,
    limit: Limit = Limit(),
    record_hint: str = "",
) -> Decision:
    """Whether the planned design can fail, and the repetitions that make it able to (see the module doc).

    ``price`` states the raised plan's wall time; above ``limit.seconds`` the check stops with one line.
    ``record_hint`` is the exact command that records a baseline of enough runs, for the refusals.
    """
    tests = tests_of(planned)
    if not tests:
        return Decision(None)
    result = design.attainable(tests, alpha)
    if result.ok:
        return Decision(None, check=result)
    problem = result.problem() or "the design cannot reach alpha"
    needed = design.repetitions_needed(tests, alpha)
    if needed is None:
        fix = _fix(tests, record_hint)
        raise DesignError(f"refusing to run: {problem}, so nothing could ever be called a regression; {fix}")
    timing = [t for t in tests if t.kind != "cost"]
    have = max((t.n_head for t in timing), default=0)
    priced = price(needed) if price is not None else None
    plan = ""
    if priced is not None:
        plan = f" (the whole plan: about {duration(priced[0])[1:]}, {priced[1]})"
    if forced:
        raise DesignError(
            f"refusing to run: {problem}, so nothing could ever be called a regression; use --repetitions "
            f"{needed} or more{plan}, or gate fewer scenarios or metrics"
        )
    if priced is not None and limit.seconds is not None and priced[0] > limit.seconds:
        cheaper = "; ".join(limit.cheaper)
        raise DesignError(
            f"not started: {problem}, so finding a regression needs {needed} repetitions instead of {have}, "
            f"about {duration(priced[0])[1:]} ({priced[1]}), over the {duration(limit.seconds)[1:]} limit "
            f"(--max-minutes / DBPERF_MAX_MINUTES); cheaper: {cheaper or 'gate fewer scenarios or metrics'}; "
            "or pass --yes to run it"
        )
    note = (
        f"{problem}: running {needed} repetitions instead of {have}{plan} so that a regression can be found "
        "(choose with --repetitions / DBPERF_REPETITIONS; cost runs, --cost, decide small changes in 2-3 runs)"
    )
    return Decision(needed, note, design.attainable(design.with_repetitions(tests, needed), alpha))


def _fix(tests: Sequence[design.TestDesign], record_hint: str) -> str:
    if any(t.kind == "cost" and min(t.n_base, t.n_head) < 2 for t in tests):
        return (
            "cost metrics need at least 2 runs a side: raise the scenario's [cost] repetitions "
            "or record the baseline again"
        )
    small = min((t.n_base for t in tests if t.kind == "rank-sum"), default=0)
    again = f": {record_hint}" if record_hint else " with more repetitions"
    return f"the stored baseline has only {small} run(s): record it again{again}"


#: The fewest timing runs a suggested baseline recording has: fewer say little about the noise.
MIN_BASELINE_RUNS = 6


def baseline_runs(
    planned: Sequence[Planned], alpha: float, recorded: Callable[[Planned], bool], *, limit: int = 100
) -> int:
    """The timing runs a baseline recording should have: the smallest count ``m``, at least
    :data:`MIN_BASELINE_RUNS`, at which a gate running ``max(its repetitions, m)`` candidate runs against
    ``m``-run baselines (for the planned comparisons ``recorded`` selects; the others keep their own)
    can fail on every gating test (every timing comparison runs as many: the gate raises them alike).
    A gate then never runs more candidate runs than the baseline has, unless its profile asks for more.
    ``limit`` when nothing below it can (a family too large)."""
    for m in range(MIN_BASELINE_RUNS, limit + 1):
        trial = [
            p
            if p.kind == "cost"
            else dataclasses.replace(p, n_base=m if recorded(p) else p.n_base, n_head=max(p.n_head, m))
            for p in planned
        ]
        tests = tests_of(trial)
        if not tests or design.attainable(tests, alpha).ok:
            return m
    return limit


def attainable_alone(result: design.DesignCheck | None, label: str, metric: str) -> float | None:
    """The smallest adjusted p-value one planned test can reach on its own (None if not planned)."""
    if result is None:
        return None
    for a in result.tests:
        if a.test.comparison == label and a.test.metric == metric:
            return a.alone
    return None


def seconds_per_run(scenario: Scenario, kind: Kind, start_s: float = 5.0, server: Server | None = None) -> float:
    """A rough wall time of one run on an idle machine: warm-up + measured + server start; a cost run on
    ``server`` (None: a local MariaDB) by its instructions under callgrind (:mod:`harness.pipeline.cost_price`)."""
    if kind == "cost":
        return math.ceil(cost_run_seconds(scenario, server))
    return scenario.warmup_s + scenario.time_s + start_s


def assumed_noise(metric: str) -> float:
    """The noise (SD of per-pair log ratios) assumed when no history exists: the catalogue's
    ``prior_noise``, the noise measured on shared 2-core VMs (docs/architecture.md, "Two kinds of run")."""
    found = catalogue.find(metric)
    return found.prior_noise if found is not None and found.prior_noise is not None else 0.1


NoiseSource = Callable[["Planned", str], "tuple[float, str] | None"]
"""``noise(planned, metric)``: the measured SD of per-pair log ratios and where it comes from, or None."""


@dataclass(frozen=True)
class Assessment:
    """What one planned gating test can do: attainable adjusted p-value, and power at its minimum effect."""

    label: str
    metric: str
    test: str
    repetitions: str
    family: int
    attainable: float
    can_fail: bool
    noise: float
    noise_source: str  # "measured (N runs)" or "assumed"
    min_effect: float
    power: float

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def assess(planned: Sequence[Planned], *, alpha: float, noise: NoiseSource) -> list[Assessment]:
    """Attainable adjusted p-value and power (at the scenario's minimum effect) of every planned gating test.

    ``noise(planned, metric)`` gives the measured SD of per-pair log ratios and where it comes from,
    or None to use :func:`assumed_noise`.
    """
    from harness.judge.power import power

    tests = tests_of(planned)
    result = design.attainable(tests, alpha) if tests else None
    out = []
    level = alpha / max(1, len(tests))
    for p in planned:
        for metric in p.metrics:
            measured = noise(p, metric)
            sd, source = measured if measured else (assumed_noise(metric), "assumed")
            kind: design.Kind = "cost" if p.kind == "cost" else "signed-rank" if p.mode == "ab" else "rank-sum"
            n: int | tuple[int, int] = p.n_head if kind == "signed-rank" else (p.n_base, p.n_head)
            effect = p.scenario.min_effects.get(metric, 0.05)
            found = attainable_alone(result, p.label, metric)
            alone = 1.0 if found is None else found
            out.append(
                Assessment(
                    label=p.label,
                    metric=metric,
                    test=kind,
                    repetitions=f"{p.n_head} pairs" if kind == "signed-rank" else f"{p.n_base} + {p.n_head}",
                    family=len(tests),
                    attainable=alone,
                    can_fail=alone < alpha,
                    noise=sd,
                    noise_source=source,
                    min_effect=effect,
                    power=power(kind, n, sd, effect, level) if sd > 0 else 1.0,
                )
            )
    return out
