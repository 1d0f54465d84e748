"""The one wiring point: settings in, runs, verdicts and an exit code out.

Every entry point (the CLI commands, ``dbperf ci run``, the pytest plugin and the benchmarks) goes
through these functions and repeats none of their steps::

    resolve       settings + names  -> Case (a Server and a Scenario, overrides applied)
    open_session  settings          -> Session (sysbench checked, testbed fingerprinted, store opened,
                                       load warnings collected; pipeline.opening); it resolves each
                                       server's setup once for every stage after it (measure.provision)
    run           measure only      -> Outcome (exit 2 when a run failed)
    gate          measure + judge against this testbed's baselines -> Outcome
    record        measure + write baselines                         -> Outcome, paths
    compare       interleaved A/B comparisons (pipeline.ab)         -> Outcome
    history       stored runs -> TrendData (aggregates + change points) for charts
    changes       stored runs -> SeriesChanges per series (`dbperf changes`)

A new metric family or backend is wired here once: what to measure for a case, and how to judge it.
The records and helpers these steps use live beside this module: :mod:`harness.pipeline.cases` (what to
measure: :class:`Case`, resolved and checked) and :mod:`harness.pipeline.outcome_closing` (what comes back,
closed: settings read back, forecasts, runs the store could not take); the :class:`Outcome` record and its
exit code are :mod:`harness.model.outcome`'s.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from harness.config.settings import Settings
from harness.errors import ConfigError, StoreError
from harness.judge import capacity, stats
from harness.judge.baselines import Baseline, find_baseline
from harness.judge.changepoint_series import change_marks
from harness.judge.gate import DEFAULT_ALPHA, BaselineCase, judge_against_baselines, no_baseline_verdict
from harness.measure.plan_capture import check_plans
from harness.measure.session import Reporter, Session, new_group_id
from harness.measure.timing import measure, plan_runs
from harness.model import Kind, RunResult, Server
from harness.model.history import SeriesChanges, TrendData
from harness.model.outcome import Outcome, exit_code
from harness.model.verdict import CAPACITY_METRICS
from harness.pipeline import advice, design_check, estimates, judgeable, recording
from harness.pipeline.ab import ComparisonSpec, run_comparisons
from harness.pipeline.cases import Case, by_threads, checked, for_kind, forced, kind_threads, resolve, with_decision
from harness.pipeline.opening import open_session
from harness.pipeline.outcome_closing import closed
from harness.store.trend_queries import commit_points, committed, history_tables, one_series, series_keys
from harness.store.trend_work import work_points


@dataclass(frozen=True)
class JudgeOptions:
    """How verdicts are reached and turned into an exit code."""

    alpha: float = DEFAULT_ALPHA
    strict: bool = False
    seed: int | None = None
    max_pairs: int | None = None
    #: The most wall time a design check may raise the timing runs to (None: no limit; the CLI's
    #: --max-minutes, lifted by --yes). Above it the check stops with the cheaper ways.
    limit_s: float | None = None
    #: How a raised plan is priced (the CLI's: this machine's stored run durations; else the profile's).
    pricing: advice.Pricing = dataclasses.field(default_factory=advice.Pricing)


def _session(settings: Settings, reporter: Reporter, servers: Iterable[Server], session: Session | None) -> Session:
    if session is not None:
        return session
    return open_session(settings, reporter, containers=any(t.provider == "container" for t in servers))


def measure_case(
    session: Session, case: Case, *, kind: Kind = "time", label: str = "", group_id: str | None = None
) -> list[RunResult]:
    """Every repetition and thread count of a case, of one kind, each run stored as it finishes."""
    contexts = plan_runs(
        case.server,
        case.scenario,
        testbed=session.testbed,
        git_sha=session.git_sha,
        group_id=group_id or new_group_id(),
        label=label,
        kind=kind,
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

    Timing runs unless the settings ask for cost mode. Exit 2 when a run failed.
    """
    case = resolve(settings, scenario_name, server)
    checked((case.server, case.scenario))
    session = _session(settings, reporter, [case.server], session)
    group = new_group_id()
    runs = [
        r
        for kind in settings.kinds(("time",))
        for r in measure_case(session, for_kind(settings, case, kind), kind=kind, group_id=group)
    ]
    warnings = tuple(session.ledger.warnings)
    outcome = Outcome(tuple(runs), exit_code=exit_code((), runs), warnings=warnings, group_id=group)
    return closed(outcome, session, settings)


def gate(
    settings: Settings,
    cases: Sequence[Case],
    reporter: Reporter,
    options: JudgeOptions = JudgeOptions(),
    *,
    session: Session | None = None,
    label: str = "",
) -> Outcome:
    """Measure each case and judge it against its baselines (Holm across all of them, timing and cost).

    Before any run, the design is checked: with the stored baselines' run counts and the planned
    repetitions, every gating test must be able to reach alpha (:mod:`harness.pipeline.design_check`).
    """
    checked(*((c.server, c.scenario) for c in cases))
    history = estimates.recent_history(settings.store) if session is None else None  # before the store opens
    session = _session(settings, reporter, (c.server for c in cases), session)
    kinds = settings.kinds()
    warnings = list(session.ledger.warnings)

    def baseline(case: Case, kind: Kind, threads: int) -> Baseline | None:
        return find_baseline(
            settings.baselines_dir,
            session.testbed,
            case.server.name,
            case.scenario.name,
            case.scenario.profile,
            threads,
            kind,
        )

    every = advice.baseline_plan(settings, cases, kinds, baseline)
    runs_needed = design_check.baseline_runs([p for p, _ in every], options.alpha, lambda p: p.kind == "time")
    hints = advice.record_hints(settings, cases, runs_needed)
    decision = design_check.check(
        [p for p, found in every if found is not None],
        alpha=options.alpha,
        forced=forced(settings),
        price=lambda n: advice.price(settings, cases, n, kinds, options.pricing),
        limit=design_check.Limit(options.limit_s, advice.gate_cheaper(settings, every, hints, runs_needed)),
        record_hint=hints.get(("time", ""), ""),
    )
    unjudged = judgeable.of_gate(
        settings, cases, kinds, baseline, lambda c: session.setup(c.server, c.scenario).server_build, hints
    )
    for u in unjudged:  # said before anything runs (judgeable's module doc)
        session.reporter.phase(f"note: {u.line()}")
    group = new_group_id()
    if len(unjudged) == len(cases) * len(kinds) and not settings.measure_unjudged:  # nothing measured
        verdicts = tuple(
            no_baseline_verdict(u.scenario, t, u.server.name, u.reason, u.kind, u.command)
            for u in unjudged
            for t in u.threads
        )
        outcome = Outcome((), verdicts, exit_code(verdicts), tuple(warnings), group_id=group)
        return closed(outcome, session, settings)
    timed = with_decision(decision, cases, warnings, session.reporter)
    if history is not None:  # a caller that hands in its session says its own estimate (pytest, ci run)
        estimates.say(
            session.reporter.phase,
            estimates.of_work(settings, estimates.of_cases(settings, timed, kinds), history, session=session),
        )
    runs: list[RunResult] = []
    judged: list[BaselineCase] = []
    for case in timed:
        for kind in kinds:
            c = for_kind(settings, case, kind)
            measured = measure_case(session, c, kind=kind, label=label, group_id=group)
            runs += measured
            for (_, threads), group_runs in by_threads(measured).items():
                found = baseline(c, kind, threads)
                hint = hints.get((kind, c.scenario.name), "")
                judged.append(BaselineCase(c.scenario, threads, c.server.name, found, group_runs, kind, hint))
    verdicts = tuple(judge_against_baselines(judged, alpha=options.alpha))
    outcome = Outcome(
        tuple(runs), verdicts, exit_code(verdicts, strict=options.strict), tuple(warnings), group_id=group
    )
    return closed(outcome, session, settings)


def record(settings: Settings, case: Case, reporter: Reporter, *, force: bool = False) -> Outcome:
    """Measure a case and write its runs as baselines: one file per kind and thread count.

    Timing baselines belong to this testbed; cost baselines travel (see :mod:`harness.judge.baselines`).
    A file already there is named before measuring and when replaced; one recorded for the same build
    and configuration from at least as many runs is kept unless ``force``, and said in a note: the
    command recorded what it was asked for (:mod:`harness.pipeline.recording`). A timing baseline of
    fewer runs than the gate's design check needs is written, and the note gives the recording that has
    enough, as the exact command.
    """
    checked((case.server, case.scenario))
    history = estimates.recent_history(settings.store)  # before the store opens
    session = _session(settings, reporter, [case.server], None)
    cases = {kind: for_kind(settings, case, kind) for kind in settings.kinds()}
    estimates.say(
        reporter.phase,
        estimates.of_work(settings, estimates.of_cases(settings, [case], list(cases)), history, session=session),
    )
    threads = {kind: kind_threads(c.scenario, kind) for kind, c in cases.items()}
    if not force:
        for note in recording.before_notes(settings.baselines_dir, session.testbed, case, threads):
            reporter.phase(f"note: {note}")
    group = new_group_id()
    runs = [
        r for kind, c in cases.items() for r in measure_case(session, c, kind=kind, label="baseline", group_id=group)
    ]
    warnings = list(session.ledger.warnings)
    timing = [r for r in runs if r.kind == "time" and r.ok]
    if timing:
        warnings += advice.too_few(settings, case, len(timing) // max(1, len(case.scenario.threads)))
    written = recording.write_all(settings.baselines_dir, list(by_threads(runs).values()), force=force)
    warnings += written.notes
    if written.kept:
        warnings.append(recording.kept_note(written.kept, group))
    outcome = Outcome(tuple(runs), warnings=tuple(warnings), written=written.paths, group_id=group)
    return closed(outcome, session, settings)


def compare(
    settings: Settings,
    specs: Sequence[ComparisonSpec],
    reporter: Reporter,
    options: JudgeOptions = JudgeOptions(),
    *,
    recordings: Sequence[Case] = (),
    session: Session | None = None,
) -> Outcome:
    """Interleaved A/B comparisons of every spec (Holm across all), after any runs recorded only.

    Before any run, the design is checked (:mod:`harness.pipeline.design_check`): too few pairs for the
    family of gating tests are raised, or refused when forced.
    """
    servers = [t for s in specs for t in (s.base, s.head)] + [c.server for c in recordings]
    if not specs and not recordings:
        return Outcome(())
    checked(*((t, s.scenario) for s in specs for t in (s.base, s.head)), *((c.server, c.scenario) for c in recordings))
    history = estimates.recent_history(settings.store) if session is None else None  # before the store opens
    session = _session(settings, reporter, servers, session)
    kinds = settings.kinds()
    if any(s.base.provider == "external" or s.head.provider == "external" for s in specs) and "cost" in kinds:
        if settings.cost:
            raise ConfigError("cost mode needs a server dbperf starts (local or container), not an external one")
        kinds = ("time",)
    warnings = list(session.ledger.warnings)
    runs: list[RunResult] = []
    group = new_group_id()
    for case in recordings:
        for kind in kinds:
            runs += measure_case(session, for_kind(settings, case, kind), kind=kind, label="record", group_id=group)
    if not specs:
        outcome = Outcome(tuple(runs), exit_code=exit_code((), runs), warnings=tuple(warnings), group_id=group)
        return closed(outcome, session, settings)
    pairs = max(
        2,
        settings.repetitions
        if forced(settings) and settings.repetitions
        else max((s.scenario.repetitions for s in specs if s.runs("time", kinds)), default=2),
    )
    if settings.cost and settings.repetitions is not None:
        specs = [
            dataclasses.replace(s, scenario=for_kind(settings, Case(s.head, s.scenario), "cost").scenario)
            for s in specs
        ]
    planned = [
        design_check.Planned(
            f"{s.scenario.name} {threads}t {kind}",
            s.scenario,
            s.head,
            kind,
            "ab",
            n,
            n,
            design_check.gating_metrics(s.scenario, s.head, kind),
        )
        for s in specs
        for kind in kinds
        if s.runs(kind, kinds)
        for threads in kind_threads(s.scenario, kind)
        for n in ((s.scenario.cost.repetitions if kind == "cost" else pairs),)
    ]
    planned += [  # capacity at the SLO: one more test per gating capacity metric, in the same Holm family
        design_check.Planned(f"{s.scenario.name} capacity", s.scenario, s.head, "time", "ab", pairs, pairs, metrics)
        for s in specs
        if s.runs("time", kinds) and capacity.judged(s.scenario)
        for metrics in (tuple(m for m in CAPACITY_METRICS if m in s.scenario.gate_metrics),)
        if metrics
    ]
    session.ledger.comparisons += len(specs)  # each has its query-plan check
    looks = math.ceil(max(pairs, options.max_pairs or pairs) / pairs)
    first_alpha = stats.alpha_spending(options.alpha, 1, looks) if looks > 1 else options.alpha
    sides = [Case(side, s.scenario) for s in specs for side in (s.base, s.head)]
    cheaper = (advice.cost_only(settings, "pairs"),) if settings.cost is not True else ()
    decision = design_check.check(
        planned,
        alpha=first_alpha,
        forced=forced(settings),
        price=lambda n: advice.price(settings, sides, n, kinds, options.pricing, comparisons=len(specs)),
        limit=design_check.Limit(options.limit_s, cheaper),
    )
    if decision.repetitions is not None:
        pairs = decision.repetitions
        warnings.append(decision.note)
        session.reporter.phase(f"note: {decision.note}")
    if history is not None:  # ci run says its plan's estimate itself
        work = estimates.of_specs(specs, kinds, pairs)
        found = estimates.of_work(settings, work, history, comparisons=len(specs), session=session)
        estimates.say(session.reporter.phase, found)
    plans = tuple(check_plans(session, s.base, s.base_side, s.head, s.scenario) for s in specs)
    result = run_comparisons(
        session, specs, pairs=pairs, kinds=kinds, max_pairs=options.max_pairs, seed=options.seed, alpha=options.alpha
    )
    runs += result.runs
    outcome = Outcome(
        tuple(runs),
        result.verdicts,
        exit_code(result.verdicts, runs, strict=options.strict),
        tuple(warnings),
        group_id=result.group_id,
        pairs=result.pairs,
        looks=result.looks,
        seed=result.seed,
        plans=plans,
    )
    return closed(outcome, session, settings)


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
    changes = change_marks(committed(points), alpha=alpha, permutations=permutations, min_size=min_size, seed=seed)
    return TrendData(ok_runs, points, versions, scaling, changes, extents, work=work_points(table))


def changes(
    table: pa.Table,
    metrics: Sequence[str],
    *,
    alpha: float = 0.01,
    permutations: int = 199,
    min_size: int = 3,
    seed: int = 0,
) -> list[SeriesChanges]:
    """Stored runs (a metrics table) -> the change points of every series, one record per series.

    A series is one server x scenario x profile x kind x thread count: the median of the repetitions
    per commit (runs without a git sha are grouped by day), in time order; profiles and kinds never mix.
    """
    if min_size < 2:
        raise ConfigError(f"--min-size {min_size}: must be at least 2")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"--alpha {alpha:g}: must be between 0 and 1")
    found_series: list[SeriesChanges] = []
    for key in series_keys(table):
        points = committed(commit_points(one_series(table, key), metrics))  # one-off runs are no history
        try:
            found = change_marks(points, metrics, alpha=alpha, permutations=permutations, min_size=min_size, seed=seed)
        except ValueError as exc:
            raise ConfigError(f"change-point detection: {exc}") from exc
        counts = points.group_by("threads").aggregate([("threads", "count")]).to_pylist()
        for row in sorted(counts, key=lambda r: r["threads"]):
            threads = int(row["threads"])
            found_series.append(
                SeriesChanges(
                    **key,
                    threads=threads,
                    points=int(row["threads_count"]),
                    changes=tuple(m for m in found if m.threads == threads),
                )
            )
    return found_series
