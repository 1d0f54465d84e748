"""How long a pull-request plan will take: after the design check, for the kinds of runs that will run.

The estimate counts every run the plan makes -- per comparison, the timing pairs the design check
settled on (it may raise the profile's repetitions) times two sides times the thread counts, and the
cost pairs of the scenario's ``[cost]`` settings -- and prices each run by **this machine's recent runs**
of the same server, scenario, kind and thread count (timing runs: of the same warm-up and duration),
read from the store (the median of the newest :data:`RECENT` runs' wall time, server start to result,
plus :data:`GAP_S` for storing it). With nothing stored, it falls back on the profile: warm-up +
measured seconds + an assumed server start (timing), or the event counts at an assumed rate under
callgrind (cost); every figure says which it is. A fixed overhead per comparison (the query-plan check
starts both servers once) and per invocation (session, reports, charts) is added.

Datasets are not counted: they are prepared once per machine and kept in the dataset cache.
"""

from __future__ import annotations

import dataclasses
import platform
import statistics
from collections.abc import Sequence
from pathlib import Path

from harness.ci.assess import PlanDesign
from harness.ci.records import AA_SUFFIX, BASE_SUFFIX, CiPlan, KindEstimate, PlanEstimate
from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.config.settings import Settings, apply_overrides
from harness.errors import HarnessError
from harness.model import RunKind, Scenario
from harness.pipeline.design_check import seconds_per_run
from harness.store import is_lake, open_store

#: How many of the newest matching runs price a run (their median wall time).
RECENT = 10
#: Between two runs: storing the first (DuckDB and Parquet) and reporting it.
GAP_S = 2.0
#: Assumed server start (fresh from the dataset snapshot) when no run of it is stored, by provider.
ASSUMED_START_S = {"local": 5.0, "container": 9.0, "external": 0.0}
#: Per comparison: the query-plan check (both servers started once, every statement EXPLAINed).
PLAN_CHECK_S = 14.0
#: Per invocation: sweep, testbed fingerprint, store, the reports and the charts.
SESSION_S = 20.0

Durations = dict[tuple[str, str, str, int], list[tuple[float, float, float]]]
"""(server, scenario, kind, threads) -> newest first: (warmup_s, time_s, seconds) of this machine's runs."""


def _bare(name: str) -> str:
    return name.removesuffix(BASE_SUFFIX).removesuffix(AA_SUFFIX)


def recent_durations(store: Path | str, hostname: str | None = None) -> Durations:
    """This machine's recent run durations in ``store`` (empty when there is no store or it cannot be read)."""
    if not is_lake(store) and not Path(store).is_file():
        return {}
    try:
        rows = open_store(store).durations(hostname or platform.node())
    except HarnessError:
        return {}
    out: Durations = {}
    for r in rows:
        key = (_bare(str(r["server"])), _bare(str(r["scenario"])), str(r["kind"] or "time"), int(str(r["threads"])))
        seconds = r["seconds"]
        if isinstance(seconds, int | float) and seconds > 0:
            out.setdefault(key, []).append((float(str(r["warmup_s"])), float(str(r["time_s"])), float(seconds)))
    return out


def per_run(
    durations: Durations, server: str, provider: str, scenario: Scenario, kind: RunKind, threads: int
) -> tuple[float, str]:
    """The wall time of one run and where the figure comes from ("measured (N runs)" or "assumed")."""
    found = durations.get((_bare(server), _bare(scenario.name), kind, threads), [])
    if kind == "time":  # a timing run's length follows its warm-up and duration: only the same ones count
        found = [f for f in found if f[0] == scenario.warmup_s and f[1] == scenario.time_s]
    seconds = [f[2] for f in found[:RECENT]]
    if seconds:
        return statistics.median(seconds) + GAP_S, f"measured ({len(seconds)} runs)"
    start = ASSUMED_START_S.get(provider, 5.0)
    if kind == "cost":
        return seconds_per_run(scenario, "cost") + GAP_S, "assumed"
    return seconds_per_run(scenario, "time", start_s=start) + GAP_S, "assumed"


def _cost_repetitions(settings: Settings, scenario: Scenario) -> int:
    if settings.cost and settings.repetitions is not None:
        return settings.repetitions
    return scenario.cost.repetitions


def estimate(
    settings: Settings, the_plan: CiPlan, design: PlanDesign, kinds: Sequence[RunKind], durations: Durations
) -> PlanEstimate:
    """The plan's expected wall time, priced by ``durations`` (see the module doc)."""
    items: list[KindEstimate] = []
    timed = False
    for c in the_plan.comparisons:
        scenario = apply_overrides(load_scenario(c.head.scenario, settings.scenarios_dir, the_plan.profile), settings)
        provider = load_server(c.head.server, settings.servers_dir).provider
        label = f"{c.head_server} {c.scenario}"
        for kind in (k for k in ("time", "cost") if k in kinds and k in c.kinds):
            if kind == "cost" and provider == "external":
                continue
            timed |= kind == "time"
            threads = scenario.threads if kind == "time" else scenario.cost.threads
            reps = design.pairs if kind == "time" else _cost_repetitions(settings, scenario)
            for count in threads:
                sides = [(c.base.server, c.base_server), (c.head.server, c.head_server)]
                per = [per_run(durations, label_, provider, scenario, kind, count) for _, label_ in sides]
                seconds = sum(p[0] for p in per) / 2
                source = per[1][1] if per[1][1] != "assumed" else per[0][1]
                items.append(KindEstimate(f"{label} {count}t", kind, 2 * reps, seconds, source))
    for r in the_plan.recordings:
        scenario = apply_overrides(load_scenario(r.side.scenario, settings.scenarios_dir, the_plan.profile), settings)
        provider = load_server(r.side.server, settings.servers_dir).provider
        for kind in kinds:
            threads = scenario.threads if kind == "time" else scenario.cost.threads
            reps = scenario.repetitions if kind == "time" else _cost_repetitions(settings, scenario)
            for count in threads:
                seconds, source = per_run(durations, r.side.server_label, provider, scenario, kind, count)
                label = f"{r.side.server_label} {r.side.scenario_label} {count}t (recorded)"
                items.append(KindEstimate(label, kind, reps, seconds, source))
    overhead = 0.0
    if the_plan.comparisons or the_plan.recordings:
        overhead = SESSION_S + PLAN_CHECK_S * len(the_plan.comparisons)
    return PlanEstimate(tuple(items), overhead, design.pairs if timed else 0)


def with_estimate(settings: Settings, the_plan: CiPlan, design: PlanDesign, kinds: Sequence[RunKind]) -> CiPlan:
    """The plan with its estimate, each comparison's ``estimated_s`` its own share."""
    found = estimate(settings, the_plan, design, kinds, recent_durations(settings.store))
    comparisons = []
    for c in the_plan.comparisons:
        prefix = f"{c.head_server} {c.scenario} "
        own = sum(i.seconds for i in found.items if i.label.startswith(prefix) and "(recorded)" not in i.label)
        comparisons.append(dataclasses.replace(c, estimated_s=round(own + PLAN_CHECK_S)))
    recordings = []
    for r in the_plan.recordings:
        prefix = f"{r.side.server_label} {r.side.scenario_label} "
        own = sum(i.seconds for i in found.items if i.label.startswith(prefix) and i.label.endswith("(recorded)"))
        recordings.append(dataclasses.replace(r, estimated_s=round(own)))
    return dataclasses.replace(the_plan, comparisons=tuple(comparisons), recordings=tuple(recordings), estimate=found)
