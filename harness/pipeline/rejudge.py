"""Judging stored runs again, without running anything (``dbperf judge``).

The runs come from the store (a group, or any selection of runs). Nothing is measured: the same judge
that ``compare`` and ``gate`` use decides again, with the judging settings of this invocation
(``--alpha``, ``--strict``, ``--min-effect``, ``--gate-metric``) and the *current* scenario
definitions (their minimum effects and gating metrics; a metric recorded but not gated then can be
gated now). Two modes:

* **A/B** (runs labelled ``base``/``head`` by ``compare`` or ``ci run``): the pairs are rebuilt from
  the runs: a base and a head run of the same kind, thread count and repetition number, in the
  order they ran (a pair's two runs are run back to back, so the first unmatched base run of a
  repetition pairs with the first unmatched head run of it). Pairs then group into comparisons by
  base server, head server, scenario, threads and kind, and are judged together (Holm across all).
  Every stored pair is judged at once at ``alpha``: a comparison that was extended in looks is
  re-judged without the alpha spending of its looks.
* **baseline** (any other runs): each scenario x server x threads x kind against the baselines of
  the runs' testbed in ``--baselines-dir``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from harness.config.scenarios import DEFAULT_MIN_EFFECTS, load_scenario
from harness.config.settings import Settings, apply_overrides
from harness.errors import ConfigError, StoreError
from harness.judge.baselines import find_baseline
from harness.judge.gate import BaselineCase, PairedCase, judge_against_baselines, judge_pairs
from harness.model import Kind, RunResult, Scenario
from harness.model.outcome import Outcome, exit_code
from harness.pipeline.forecasts import stored_sweeps, with_forecasts

Mode = Literal["auto", "ab", "baseline"]
_SUFFIX = re.compile(r"@[\w.-]+$")


def scenario_of(run: RunResult, settings: Settings) -> Scenario:
    """The current definition of the run's scenario (``S@base`` -> ``S``) in the run's profile, with the
    judging overrides; a scenario no longer (or never) in the catalogue gets the default judging."""
    name = _SUFFIX.sub("", run.scenario)
    try:
        scenario = load_scenario(name, settings.scenarios_dir, run.profile or "quick")
    except ConfigError:
        scenario = Scenario(
            name=name,
            script=run.script or name,
            profile=run.profile or "",
            threads=(run.threads,),
            warmup_s=int(run.warmup_s),
            time_s=max(1, int(run.time_s)),
            repetitions=1,
            tables=1,
            table_size=1,
            min_effects=dict(DEFAULT_MIN_EFFECTS),
        )
    return apply_overrides(scenario.with_overrides(threads=None), settings)


def rebuild_pairs(runs: Sequence[RunResult]) -> list[tuple[RunResult, RunResult]]:
    """A/B pairs from stored runs (see the module docstring); unmatched runs are left out."""
    pending: dict[tuple[str, Kind, int, int], list[RunResult]] = {}
    pairs: list[tuple[RunResult, RunResult]] = []
    for run in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        if run.label not in ("base", "head"):
            continue
        other = "head" if run.label == "base" else "base"
        key = (run.group_id, run.kind, run.threads, run.repetition)
        waiting = pending.setdefault(key, [])
        match = next((r for r in waiting if r.label == other), None)
        if match is None:
            waiting.append(run)
            continue
        waiting.remove(match)
        pairs.append((match, run) if match.label == "base" else (run, match))
    return pairs


def _ab(settings: Settings, runs: Sequence[RunResult]) -> tuple[list[PairedCase], int]:
    pairs = rebuild_pairs(runs)
    if not pairs:
        raise StoreError(
            "no A/B pairs among these runs (runs labelled base and head by `dbperf compare` or `dbperf ci run`, "
            "with the same repetition and thread count): choose a comparison's group with --group, "
            "or judge them against baselines with --mode baseline"
        )
    grouped: dict[tuple[str, str, str, int, Kind], list[tuple[RunResult, RunResult]]] = {}
    for base, head in pairs:
        key = (base.server, head.server, head.scenario, head.threads, head.kind)
        grouped.setdefault(key, []).append((base, head))
    cases = []
    for (base_server, head_server, _, threads, kind), members in sorted(grouped.items()):
        members.sort(key=lambda p: p[0].repetition)
        scenario = scenario_of(members[0][1], settings)
        cases.append(PairedCase(scenario, threads, base_server, head_server, members, kind))
    return cases, max(len(c.pairs) for c in cases)


def _baseline(settings: Settings, runs: Sequence[RunResult]) -> list[BaselineCase]:
    grouped: dict[tuple[str, str, int, Kind], list[RunResult]] = {}
    for run in runs:
        grouped.setdefault((run.server, run.scenario, run.threads, run.kind), []).append(run)
    cases = []
    for (server, _, threads, kind), members in sorted(grouped.items()):
        members.sort(key=lambda r: r.repetition)
        scenario = scenario_of(members[0], settings)
        found = find_baseline(
            settings.baselines_dir, members[0].testbed, server, scenario.name, scenario.profile, threads, kind
        )
        cases.append(BaselineCase(scenario, threads, server, found, members, kind))
    return cases


def rejudge(settings: Settings, runs: Sequence[RunResult], *, mode: Mode = "auto", strict: bool = False) -> Outcome:
    """Verdicts for stored runs, with this invocation's judging settings; nothing is run."""
    if not runs:
        raise StoreError("no runs to judge: `dbperf runs` lists what is stored")
    labelled = any(r.label in ("base", "head") for r in runs)
    chosen = ("ab" if labelled else "baseline") if mode == "auto" else mode
    warnings: list[str] = []
    if chosen == "ab":
        paired, pairs = _ab(settings, runs)
        verdicts = tuple(judge_pairs(paired, alpha=settings.alpha))
        used = {r.run_id for c in paired for pair in c.pairs for r in pair}
        left = [r for r in runs if r.run_id not in used]
        if left:
            warnings.append(f"{len(left)} run(s) without an A/B partner were not judged (first: {left[0].run_id})")
    else:
        cases = _baseline(settings, [r for r in runs if r.label not in ("base", "baseline")])
        if not cases:
            raise StoreError("no candidate runs to judge against baselines (base and baseline runs are left out)")
        verdicts = tuple(judge_against_baselines(cases, alpha=settings.alpha))
        pairs = 0
    groups = sorted({r.group_id for r in runs if r.group_id})
    outcome = Outcome(
        tuple(runs),
        verdicts,
        exit_code(verdicts, strict=strict or settings.strict),
        tuple(warnings),
        group_id=groups[0] if len(groups) == 1 else "",
        pairs=pairs,
        looks=1 if pairs else 0,
    )
    # cost comparisons get their forecasts from the calibration of the testbed the runs ran on
    return with_forecasts(outcome, runs[0].testbed, settings, stored_sweeps(settings, runs[0].testbed))
