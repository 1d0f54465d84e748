"""The one wiring point: settings in, runs, verdicts and an exit code out.

Every entry point (the CLI commands, ``dbperf ci run``, the pytest plugin and the benchmarks) goes
through these functions and repeats none of their steps::

    resolve       settings + names  -> Case (a Server and a Scenario, overrides applied)
    open_session  settings          -> Session (sysbench checked, testbed fingerprinted, store opened,
                                       load warnings collected for the reports)
    run           measure only      -> Outcome (exit 2 when a run failed)
    gate          measure + judge against this testbed's baselines -> Outcome
    record        measure + write baselines                         -> Outcome, paths
    compare       interleaved A/B comparisons (pipeline.ab)         -> Outcome
    history       stored runs -> TrendData (aggregates + change points) for charts

A new metric family or backend is wired here once: what to measure for a case, and how to judge it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.config.settings import Settings, current_git_sha
from harness.dataset import DatasetCache
from harness.errors import StoreError
from harness.judge.baselines import find_baseline, write_baseline
from harness.judge.changes import change_marks
from harness.judge.gate import DEFAULT_ALPHA, judge_against_baselines
from harness.model import RunResult, Scenario, Server, Verdict
from harness.model.history import TrendData
from harness.pipeline.ab import ComparisonSpec, run_comparisons
from harness.run.measure import measure, plan_runs
from harness.run.session import Reporter, Session, new_group_id
from harness.store import Store
from harness.store.history import history_tables
from harness.sysbench.driver import check_version
from harness.testbed import fingerprint, preflight

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_ERROR = 2


@dataclass(frozen=True)
class Case:
    """A scenario and a server resolved from settings, with the command-line overrides applied."""

    server: Server
    scenario: Scenario


@dataclass(frozen=True)
class JudgeOptions:
    """How verdicts are reached and turned into an exit code."""

    alpha: float = DEFAULT_ALPHA
    strict: bool = False
    seed: int | None = None
    max_pairs: int | None = None


@dataclass(frozen=True)
class Outcome:
    """What one invocation produced."""

    runs: tuple[RunResult, ...]
    verdicts: tuple[Verdict, ...] = ()
    exit_code: int = EXIT_OK
    warnings: tuple[str, ...] = ()
    group_id: str = ""
    pairs: int = 0
    looks: int = 0
    seed: int | None = None
    written: tuple[Path, ...] = field(default=())

    def document(self) -> dict[str, object]:
        """The JSON document of ``--json`` (verdicts with their outcome, exit code, what ran)."""
        verdicts = [{**dataclasses.asdict(v), "outcome": v.outcome} for v in self.verdicts]
        doc: dict[str, object] = {"verdicts": verdicts, "exit_code": self.exit_code}
        doc["run_ids"] = [r.run_id for r in self.runs]
        doc["warnings"] = list(self.warnings)
        if self.pairs:
            doc.update(pairs=self.pairs, looks=self.looks, seed=self.seed, group_id=self.group_id)
        return doc


def resolve(settings: Settings, scenario_name: str, server_name: str | None = None) -> Case:
    """The scenario (profile and overrides from ``settings``) and the server it runs on."""
    scenario = load_scenario(scenario_name, settings.scenarios_dir, settings.profile).with_overrides(
        threads=settings.threads,
        time_s=settings.time,
        warmup_s=settings.warmup,
        repetitions=settings.repetitions,
    )
    return Case(load_server(server_name or settings.server, settings.servers_dir), scenario)


def open_session(settings: Settings, reporter: Reporter, *, containers: bool, check: bool = True) -> Session:
    """Check sysbench, fingerprint the testbed, warn about a busy machine, open the store."""
    version = check_version()
    testbed = fingerprint(version, with_engine=containers)
    warnings = preflight() if check else []
    for warning in warnings:
        reporter.phase(f"warning: {warning}")
    store = Store(settings.store)
    return Session(
        cache=DatasetCache(settings.cache_dir),
        testbed=testbed,
        git_sha=current_git_sha(settings.root),
        save=store.save,
        reporter=reporter,
        sysbench_version=version,
        warnings=list(warnings),
    )


def _session(settings: Settings, reporter: Reporter, servers: Iterable[Server], session: Session | None) -> Session:
    if session is not None:
        return session
    return open_session(settings, reporter, containers=any(t.provider == "container" for t in servers))


def exit_code(verdicts: Sequence[Verdict], runs: Sequence[RunResult] = (), *, strict: bool = False) -> int:
    """0 pass (inconclusive too unless strict), 1 regression (or inconclusive with strict), 2 a failed run.

    A comparison that could not be judged because its runs failed is an error (2); a regression found
    elsewhere in the same invocation still says 1 unless such a comparison failed outright.
    """
    outcomes = {v.outcome for v in verdicts}
    if "failed" in outcomes:
        return EXIT_ERROR
    if "regression" in outcomes or (strict and "inconclusive" in outcomes):
        return EXIT_REGRESSION
    if any(not r.ok for r in runs):
        return EXIT_ERROR
    return EXIT_OK


def measure_case(session: Session, case: Case, *, label: str = "", group_id: str | None = None) -> list[RunResult]:
    """Every repetition and thread count of a case, each run stored as it finishes."""
    contexts = plan_runs(
        case.server,
        case.scenario,
        testbed=session.testbed,
        git_sha=session.git_sha,
        group_id=group_id or new_group_id(),
        label=label,
    )
    return measure(session, contexts)


def run(
    settings: Settings,
    scenario_name: str,
    reporter: Reporter,
    *,
    server: str | None = None,
    session: Session | None = None,
) -> Outcome:
    """Measure a scenario on a server (default: the configured one); every run is stored.

    Exit 2 when a run failed.
    """
    case = resolve(settings, scenario_name, server)
    session = _session(settings, reporter, [case.server], session)
    runs = tuple(measure_case(session, case))
    return Outcome(runs, exit_code=exit_code((), runs), warnings=tuple(session.warnings))


def _by_threads(runs: Sequence[RunResult]) -> dict[int, list[RunResult]]:
    out: dict[int, list[RunResult]] = {}
    for one in runs:
        out.setdefault(one.threads, []).append(one)
    return dict(sorted(out.items()))


def gate(
    settings: Settings,
    cases: Sequence[Case],
    reporter: Reporter,
    options: JudgeOptions = JudgeOptions(),
    *,
    session: Session | None = None,
    label: str = "",
) -> Outcome:
    """Measure each case and judge it against this testbed's baselines (Holm across all of them)."""
    session = _session(settings, reporter, (c.server for c in cases), session)
    group = new_group_id()
    runs: list[RunResult] = []
    judged = []
    for case in cases:
        measured = measure_case(session, case, label=label, group_id=group)
        runs += measured
        for threads, group_runs in _by_threads(measured).items():
            baseline = find_baseline(
                settings.baselines_dir, session.testbed, case.server.name, case.scenario.name, threads
            )
            judged.append((case.scenario, threads, case.server.name, baseline, group_runs))
    verdicts = tuple(judge_against_baselines(judged, alpha=options.alpha))
    return Outcome(
        tuple(runs),
        verdicts,
        exit_code(verdicts, strict=options.strict),
        tuple(session.warnings),
        group_id=group,
    )


def record(settings: Settings, case: Case, reporter: Reporter) -> Outcome:
    """Measure a case and write its runs as this testbed's baseline, one file per thread count."""
    session = _session(settings, reporter, [case.server], None)
    runs = measure_case(session, case, label="baseline")
    warnings = list(session.warnings)
    if len(runs) < 3 * len(case.scenario.threads):
        warnings.append("fewer than 3 repetitions per thread count; the gate will mostly be inconclusive")
    paths = tuple(write_baseline(settings.baselines_dir, group) for group in _by_threads(runs).values())
    return Outcome(tuple(runs), warnings=tuple(warnings), written=paths)


def compare(
    settings: Settings,
    specs: Sequence[ComparisonSpec],
    reporter: Reporter,
    options: JudgeOptions = JudgeOptions(),
    *,
    recordings: Sequence[Case] = (),
    session: Session | None = None,
) -> Outcome:
    """Interleaved A/B comparisons of every spec (Holm across all), after any runs recorded only."""
    servers = [t for s in specs for t in (s.base, s.head)] + [c.server for c in recordings]
    if not specs and not recordings:
        return Outcome(())
    session = _session(settings, reporter, servers, session)
    runs: list[RunResult] = []
    group = new_group_id()
    for case in recordings:
        runs += measure_case(session, case, label="record", group_id=group)
    if not specs:
        return Outcome(tuple(runs), exit_code=exit_code((), runs), warnings=tuple(session.warnings), group_id=group)
    pairs = max(2, settings.repetitions or max(s.scenario.repetitions for s in specs))
    result = run_comparisons(
        session, specs, pairs=pairs, max_pairs=options.max_pairs, seed=options.seed, alpha=options.alpha
    )
    runs += result.runs
    return Outcome(
        tuple(runs),
        result.verdicts,
        exit_code(result.verdicts, runs, strict=options.strict),
        tuple(session.warnings),
        group_id=result.group_id,
        pairs=result.pairs,
        looks=result.looks,
        seed=result.seed,
    )


def history(
    table: pa.Table, *, alpha: float = 0.01, permutations: int = 199, min_size: int = 3, seed: int = 0
) -> TrendData:
    """Stored runs (a metrics table) -> what the trend site draws: aggregates and change points."""
    ok_runs, points, versions, scaling, extents = history_tables(table)
    if ok_runs == 0:
        raise StoreError(
            f"no ok runs to chart ({table.num_rows} run(s) selected): run a scenario first "
            "(dbperf run --scenario oltp_point_select) or loosen the filters"
        )
    changes = change_marks(points, alpha=alpha, permutations=permutations, min_size=min_size, seed=seed)
    return TrendData(ok_runs, points, versions, scaling, changes, extents)
