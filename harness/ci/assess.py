"""Can a pull-request plan fail? The attainable p-value and power of every comparison it will run.

The plan's comparisons become the pipeline's planned tests (timing pairs from the profile, cost pairs
from each scenario's cost settings), the design check raises the pairs when the family needs more,
and each gating metric gets its attainable adjusted p-value and its power at the scenario's minimum
effect, at the noise this runner measured before (the store's history of the same scenario, server and
threads) or, with no history, at the noise typical of shared VMs. It judges what ``ci run`` will run and
how: the scenarios with the command line's overrides (``--threads``, durations, repetitions, minimum
effects) and the family at ``--alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.ci.records import CiPlan
from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.config.settings import Settings, apply_overrides
from harness.errors import HarnessError
from harness.model import Kind
from harness.pipeline import design_check
from harness.pipeline.cases import cost_repetitions
from harness.store import is_lake, open_store

MIN_HISTORY = 3


@dataclass(frozen=True)
class PlanDesign:
    """The pairs the plan will run and what each gating test can do with them."""

    pairs: int
    note: str
    tests: tuple[design_check.Assessment, ...]


def _history_noise(store_path: Path | str) -> design_check.NoiseSource:
    if not is_lake(store_path) and not Path(store_path).is_file():
        return lambda planned, metric: None
    try:
        table = open_store(store_path).metrics_table(status="ok")
    except HarnessError:
        return lambda planned, metric: None
    rows = table.to_pylist()

    def noise(planned: design_check.Planned, metric: str) -> tuple[float, str] | None:
        if planned.kind != "time":
            return None
        values = [
            r[metric]
            for r in rows
            if metric in r  # per-operation metrics are not columns of the metrics table: assumed noise
            if r["scenario"] == planned.scenario.name
            and r["server"] == planned.server.name
            and r["threads"] in planned.scenario.threads
            and r.get("kind") in (None, "time")
            and r[metric] is not None
            and r[metric] > 0
        ]
        if len(values) < MIN_HISTORY:
            return None
        sd = float(np.std(np.log(values), ddof=1)) * math.sqrt(2.0)  # one run's SD -> per-pair log ratio
        return sd, f"measured ({len(values)} runs)"

    return noise


def assess_plan(settings: Settings, the_plan: CiPlan, kinds: tuple[Kind, ...] = ("time", "cost")) -> PlanDesign:
    """The plan's design: pairs (raised when the family needs more) and every gating test's prospects."""
    planned: list[design_check.Planned] = []
    pairs = 2
    for comparison in the_plan.comparisons:
        scenario = apply_overrides(
            load_scenario(comparison.head.scenario, settings.scenarios_dir, the_plan.profile), settings
        )
        server = load_server(comparison.head.server, settings.servers_dir)
        runs = [k for k in kinds if k in comparison.kinds]  # what this comparison measures (ci.scope)
        if "time" in runs:
            pairs = max(pairs, settings.repetitions or scenario.repetitions)
        for kind in runs:
            threads = scenario.cost.threads if kind == "cost" else scenario.threads
            n = cost_repetitions(settings, scenario) if kind == "cost" else settings.repetitions or scenario.repetitions
            for count in threads:
                label = f"{comparison.head_server} {scenario.name} {count}t {kind}"
                metrics = design_check.gating_metrics(scenario, server, kind)
                planned.append(design_check.Planned(label, scenario, server, kind, "ab", n, n, metrics))
    note = ""
    decision = design_check.check(planned, alpha=settings.alpha, forced=settings.repetitions is not None)
    if decision.repetitions is not None:
        pairs, note = decision.repetitions, decision.note
        planned = [
            p
            if p.kind == "cost"
            else design_check.Planned(p.label, p.scenario, p.server, p.kind, p.mode, pairs, pairs, p.metrics)
            for p in planned
        ]
    found = design_check.assess(planned, alpha=settings.alpha, noise=_history_noise(settings.store))
    return PlanDesign(pairs, note, tuple(found))
