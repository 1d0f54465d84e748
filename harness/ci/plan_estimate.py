"""How long a pull-request plan will take: after the design check, for the kinds of runs that will run.

The estimate counts every run the plan makes -- per comparison, the timing pairs the design check
settled on (it may raise the profile's repetitions) times two sides times the thread counts, and the
cost pairs of the scenario's ``[cost]`` settings, side by side as the runner will run them -- and
prices each run by **this machine's recent runs** of the same server, scenario, kind and thread
count, the datasets not yet in the snapshot cache by this machine's preparations of the same shape,
and the fixed overheads (the query-plan check per comparison, the session): the rules are
:mod:`harness.pipeline.estimates`'s, shared with every other command that says its estimate before
it starts. Every figure says whether it was measured or assumed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harness.ci.assess import PlanDesign
from harness.ci.records import CiPlan
from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.config.settings import Settings, apply_overrides
from harness.errors import HarnessError
from harness.measure.cost_slots import slots_for
from harness.measure.provision import readable_setups
from harness.model import RunKind
from harness.model.time_estimate import DatasetEstimate, KindEstimate, PlanEstimate
from harness.pipeline.cases import Case, cost_repetitions
from harness.pipeline.estimates import (
    ASSUMED_START_S,
    GAP_S,
    History,
    assumed_run,
    bare,
    dataset_price,
    overhead_price,
    per_run,
    recent_history,
)
from harness.pipeline.overhead import PLAN_CHECK_S, SESSION_S, measured

__all__ = ["ASSUMED_START_S", "GAP_S", "PLAN_CHECK_S", "SESSION_S", "History", "estimate", "recent_history"]


def estimate(
    settings: Settings, the_plan: CiPlan, design: PlanDesign, kinds: Sequence[RunKind], history: History
) -> PlanEstimate:
    """The plan's expected wall time, priced by ``history`` (see the module doc)."""
    durations = history.durations
    items: list[KindEstimate] = []
    assumed: list[float] = []  # each item's per-run figure from the profile alone (how loaded this machine is)
    timed = False
    for c in the_plan.comparisons:
        scenario = apply_overrides(load_scenario(c.head.scenario, settings.scenarios_dir, the_plan.profile), settings)
        server = load_server(c.head.server, settings.servers_dir)
        provider = server.provider
        label = f"{c.head_server} {c.scenario}"
        for kind in (k for k in ("time", "cost") if k in kinds and k in c.kinds):
            if kind == "cost" and provider == "external":
                continue
            timed |= kind == "time"
            threads = scenario.threads if kind == "time" else scenario.cost.threads
            reps = design.pairs if kind == "time" else cost_repetitions(settings, scenario)
            # a comparison's cost runs go side by side, as many at once as the runner will use
            slots = 1 if kind == "time" else slots_for(2 * reps * len(threads))
            for count in threads:
                sides = [(c.base.server, c.base_server), (c.head.server, c.head_server)]
                per = [per_run(durations, name, server, scenario, kind, count) for name, _ in sides]
                seconds = sum(p[0] for p in per) / 2
                source = per[1][1] if per[1][1] != "assumed" else per[0][1]
                if source != "assumed" and "assumed" in (per[0][1], per[1][1]):  # one side priced as the other
                    seconds = next(p[0] for p in per if p[1] != "assumed")
                gap = history.gap_s(kind)[0]
                items.append(KindEstimate(f"{label} {count}t", kind, 2 * reps, seconds + gap, source, slots))
                assumed.append(assumed_run(server, scenario, kind) + gap)
    for r in the_plan.recordings:
        scenario = apply_overrides(load_scenario(r.side.scenario, settings.scenarios_dir, the_plan.profile), settings)
        server = load_server(r.side.server, settings.servers_dir)
        for kind in kinds:
            threads = scenario.threads if kind == "time" else scenario.cost.threads
            reps = scenario.repetitions if kind == "time" else cost_repetitions(settings, scenario)
            for count in threads:
                seconds, source = per_run(durations, r.side.server_label, server, scenario, kind, count)
                label = f"{r.side.server_label} {r.side.scenario_label} {count}t (recorded)"
                gap = history.gap_s(kind)[0]
                items.append(KindEstimate(label, kind, reps, seconds + gap, source))
                assumed.append(assumed_run(server, scenario, kind) + gap)
    overhead, source = 0.0, "assumed"
    if the_plan.comparisons or the_plan.recordings:  # measured on this runner, else assumed (pipeline/overhead.py)
        overhead, source = overhead_price(settings, len(the_plan.comparisons), items, assumed)
    return PlanEstimate(tuple(items), overhead, design.pairs if timed else 0, overhead_source=source)


def _datasets(settings: Settings, the_plan: CiPlan) -> tuple[DatasetEstimate, ...]:
    """The datasets the plan's servers need that are not in the snapshot cache, each priced once (the
    base side's server as the head tree defines it: what shapes its datadir rarely differs)."""
    from harness.sysbench.driver import check_version

    try:
        version = check_version()
    except (HarnessError, OSError):
        return ()
    cases: list[Case] = []
    sides = [s for c in the_plan.comparisons for s in (c.base, c.head)] + [r.side for r in the_plan.recordings]
    for side in sides:
        try:
            server = load_server(bare(side.server), settings.servers_dir)
            scenario = load_scenario(bare(side.scenario), settings.scenarios_dir, the_plan.profile)
        except HarnessError:
            continue
        cases.append(Case(server, apply_overrides(scenario, settings)))
    setups = readable_setups([(c.server, c.scenario) for c in cases], version)
    out: dict[str, DatasetEstimate] = {}
    for case in cases:
        setup = setups.get((case.server.name, case.scenario.name))
        if setup is not None:
            key = setup.snapshot_key
            price = dataset_price(settings.cache_dir, case.server, setup.build_id, case.scenario, version, key)
            if price is not None:
                out.setdefault(f"{case.server.name} {price.label}", price)
    return tuple(out.values())


def with_estimate(settings: Settings, the_plan: CiPlan, design: PlanDesign, kinds: Sequence[RunKind]) -> CiPlan:
    """The plan with its estimate, each comparison's ``estimated_s`` its own share."""
    found = estimate(settings, the_plan, design, kinds, recent_history(settings.store))
    found = dataclasses.replace(found, datasets=_datasets(settings, the_plan))
    plan_check = PLAN_CHECK_S * measured(settings.cache_dir).scale
    comparisons = []
    for c in the_plan.comparisons:
        prefix = f"{c.head_server} {c.scenario} "
        own = sum(i.seconds for i in found.items if i.label.startswith(prefix) and "(recorded)" not in i.label)
        comparisons.append(dataclasses.replace(c, estimated_s=round(own + plan_check)))
    recordings = []
    for r in the_plan.recordings:
        prefix = f"{r.side.server_label} {r.side.scenario_label} "
        own = sum(i.seconds for i in found.items if i.label.startswith(prefix) and i.label.endswith("(recorded)"))
        recordings.append(dataclasses.replace(r, estimated_s=round(own)))
    return dataclasses.replace(the_plan, comparisons=tuple(comparisons), recordings=tuple(recordings), estimate=found)
