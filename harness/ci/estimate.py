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
import itertools
import platform
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
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

#: How many of the newest matching runs price a run (their median wall time): few, as a shared
#: machine's load changes within the hour and run times follow it (a cost run: 13 s at one load, 29 s at another).
RECENT = 5
#: How many of the newest runs give the gap between runs.
RECENT_GAPS = 60
#: Between two runs: storing the first (DuckDB and Parquet) and reporting it.
GAP_S = 2.0
#: Assumed server start (fresh from the dataset snapshot) when no run of it is stored, by provider.
ASSUMED_START_S = {"local": 1.5, "container": 6.0, "external": 0.0}
#: Per comparison: the query-plan check (both servers started once, every statement EXPLAINed).
PLAN_CHECK_S = 6.0
#: Per invocation: sweep, testbed fingerprint, store, the reports and the charts.
SESSION_S = 10.0
#: The most the fixed overheads are scaled up by on a machine whose recent runs were slower than assumed.
MAX_SLOWDOWN = 4.0

#: A gap between two runs of one invocation longer than this is something else (a plan check, a dataset).
MAX_GAP_S = 60.0

Durations = dict[tuple[str, str, str, int], list[tuple[float, float, float]]]
"""(server, scenario, kind, threads) -> newest first: (warmup_s, time_s, seconds) of this machine's runs."""


@dataclass(frozen=True)
class History:
    """This machine's recent runs: their durations, and the gaps between consecutive runs of one
    invocation, by the kind of the run that follows (a cost run's server starts under callgrind)."""

    durations: Durations = dataclasses.field(default_factory=dict)
    gaps: tuple[tuple[str, float], ...] = ()

    def gap_s(self, kind: RunKind) -> tuple[float, str]:
        """The time between two runs (storing one, starting the next): measured, or :data:`GAP_S`."""
        found = [gap for k, gap in self.gaps if k == kind]
        if len(found) >= 3:
            return statistics.median(found), "measured"
        return GAP_S, "assumed"


def _bare(name: str) -> str:
    return name.removesuffix(BASE_SUFFIX).removesuffix(AA_SUFFIX)


def recent_history(store: Path | str, hostname: str | None = None) -> History:
    """This machine's recent runs in ``store`` (empty when there is no store or it cannot be read)."""
    if not is_lake(store) and not Path(store).is_file():
        return History()
    try:
        rows = open_store(store).durations(hostname or platform.node())
    except HarnessError:
        return History()
    out: Durations = {}
    spans: dict[str, list[tuple[float, float, str]]] = {}
    for index, r in enumerate(rows):
        kind = str(r["kind"] or "time")
        key = (_bare(str(r["server"])), _bare(str(r["scenario"])), kind, int(str(r["threads"])))
        seconds, started = r["seconds"], r["started"]
        if isinstance(seconds, int | float) and seconds > 0:
            out.setdefault(key, []).append((float(str(r["warmup_s"])), float(str(r["time_s"])), float(seconds)))
            if r["group_id"] and isinstance(started, int | float) and index < RECENT_GAPS:
                begin = float(started)
                spans.setdefault(str(r["group_id"]), []).append((begin, begin + float(seconds), kind))
    gaps: list[tuple[str, float]] = []
    for runs in spans.values():
        runs.sort()
        gaps += [(b[2], b[0] - a[1]) for a, b in itertools.pairwise(runs) if 0 <= b[0] - a[1] <= MAX_GAP_S]
    return History(out, tuple(gaps))


def assumed_run(provider: str, scenario: Scenario, kind: RunKind) -> float:
    """One run's wall time from the profile alone (an idle machine): warm-up + duration + server start, or
    the cost run's event counts at an assumed rate under callgrind."""
    if kind == "cost":
        return float(seconds_per_run(scenario, "cost"))
    return float(seconds_per_run(scenario, "time", start_s=ASSUMED_START_S.get(provider, 6.0)))


def per_run(
    durations: Durations, server: str, provider: str, scenario: Scenario, kind: RunKind, threads: int
) -> tuple[float, str]:
    """The wall time of one run (without the gap to the next) and where the figure comes from
    ("measured (N runs)" or "assumed")."""
    found = durations.get((_bare(server), _bare(scenario.name), kind, threads), [])
    if kind == "time":  # a timing run's length follows its warm-up and duration: only the same ones count
        found = [f for f in found if f[0] == scenario.warmup_s and f[1] == scenario.time_s]
    seconds = [f[2] for f in found[:RECENT]]
    if seconds:
        return statistics.median(seconds), f"measured ({len(seconds)} runs)"
    return assumed_run(provider, scenario, kind), "assumed"


def _cost_repetitions(settings: Settings, scenario: Scenario) -> int:
    if settings.cost and settings.repetitions is not None:
        return settings.repetitions
    return scenario.cost.repetitions


def estimate(
    settings: Settings, the_plan: CiPlan, design: PlanDesign, kinds: Sequence[RunKind], history: History
) -> PlanEstimate:
    """The plan's expected wall time, priced by ``history`` (see the module doc)."""
    durations = history.durations
    items: list[KindEstimate] = []
    slower: list[float] = []  # measured / assumed, per measured figure: how loaded this machine has been
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
                per = [per_run(durations, server, provider, scenario, kind, count) for server, _ in sides]
                seconds = sum(p[0] for p in per) / 2
                source = per[1][1] if per[1][1] != "assumed" else per[0][1]
                if source != "assumed":
                    slower.append(seconds / assumed_run(provider, scenario, kind))
                gap = history.gap_s(kind)[0]
                items.append(KindEstimate(f"{label} {count}t", kind, 2 * reps, seconds + gap, source))
    for r in the_plan.recordings:
        scenario = apply_overrides(load_scenario(r.side.scenario, settings.scenarios_dir, the_plan.profile), settings)
        provider = load_server(r.side.server, settings.servers_dir).provider
        for kind in kinds:
            threads = scenario.threads if kind == "time" else scenario.cost.threads
            reps = scenario.repetitions if kind == "time" else _cost_repetitions(settings, scenario)
            for count in threads:
                seconds, source = per_run(durations, r.side.server_label, provider, scenario, kind, count)
                label = f"{r.side.server_label} {r.side.scenario_label} {count}t (recorded)"
                items.append(KindEstimate(label, kind, reps, seconds + history.gap_s(kind)[0], source))
    overhead = 0.0
    if the_plan.comparisons or the_plan.recordings:
        # the overheads are an idle machine's; a machine whose recent runs took k times the assumed
        # figures is taken to be k times slower at starting servers and writing reports too
        load = min(MAX_SLOWDOWN, max(1.0, statistics.median(slower))) if slower else 1.0
        overhead = (SESSION_S + PLAN_CHECK_S * len(the_plan.comparisons)) * load
    return PlanEstimate(tuple(items), overhead, design.pairs if timed else 0)


def with_estimate(settings: Settings, the_plan: CiPlan, design: PlanDesign, kinds: Sequence[RunKind]) -> CiPlan:
    """The plan with its estimate, each comparison's ``estimated_s`` its own share."""
    found = estimate(settings, the_plan, design, kinds, recent_history(settings.store))
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
