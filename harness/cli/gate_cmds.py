"""Commands that judge: gate (against baselines), compare (A/B) and judge (stored runs again).

What they share with `baseline record` (baseline_cmds.py): the note on --repetitions and the closing error line.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from harness import pipeline
from harness.cli.options import GATE_OPTIONS, JUDGE_OPTIONS, filters, json_option, pop_shared, shared
from harness.cli.run_cmds import scenario_names
from harness.cli.selection import no_runs, pop_filter
from harness.config.servers import check_variables, server_options
from harness.config.settings import Settings
from harness.errors import ConfigError
from harness.model import Kind, Outcome, Scenario, Server, Verdict
from harness.model.server import variables_text
from harness.model.verdict_document import document_of
from harness.pipeline import JudgeOptions
from harness.report.terminal import TerminalReporter, print_summary
from harness.report.verdicts import headline, print_document
from harness.servers.variables import effective_variables, requested_values


def repetitions_note(settings: Settings, scenarios: Sequence[Scenario]) -> None:
    """``--repetitions`` with both kinds sets the timing runs only: say what the cost runs get instead."""
    if settings.repetitions is None or settings.cost is not None or not scenarios:
        return  # --cost: it sets the cost runs; --no-cost: no cost runs
    counts = sorted({s.cost.repetitions for s in scenarios})
    got = " or ".join(map(str, counts))
    click.echo(
        f"note: --repetitions {settings.repetitions} sets the timing runs; cost runs: {got} per thread count, "
        "their scenario's [cost] repetitions (counts repeat to about 0.01 %); --cost --repetitions N sets those",
        err=True,
    )


@click.command("gate")
@json_option
@shared(*GATE_OPTIONS, "measure-unjudged")
def gate_cmd(as_json: bool, **kwargs: Any) -> int:
    """Run scenarios and judge them against this testbed's baselines.

    Before running, the design is checked: with the baseline's run count, can the planned repetitions
    reach --alpha under Holm at all? If not, the repetitions are raised and the command says so with
    the new plan's wall time; above --max-minutes (10) it stops instead and names the cheaper ways
    (--cost, or the exact command that records a baseline of more runs), unless --yes. When
    --repetitions was given, it refuses with the count that can. Exit 0 pass (inconclusive too, with
    a warning, unless --strict), 1 regression, 2 error or failed run. What has no comparable baseline
    (none recorded, another scenario definition or server build) is said before anything runs, with the
    exact command that records one; when nothing can be judged nothing is measured (exit 0), unless
    --measure-unjudged. Over a minute, the expected wall time is said first (docs/usage.md, "Estimates").
    """
    settings = pop_shared(kwargs)
    server = settings.one_server()
    cases = [pipeline.resolve(settings, name, server) for name in scenario_names(settings)]
    repetitions_note(settings, [c.scenario for c in cases])
    outcome = pipeline.gate(settings, cases, TerminalReporter(sys.stderr), judge_options(settings, limited=True))
    if as_json:
        click.echo(json.dumps(outcome.document(), indent=2, default=str))
    else:
        if outcome.runs:
            print_summary(outcome.runs)
        print_document(document_of(outcome))
        if not outcome.runs and outcome.verdicts:  # nothing to judge against: nothing was measured
            click.echo("nothing was measured: there is no baseline to judge against (the notes say how to record one)")
    for warning in outcome.warnings:
        click.echo(f"note: {warning}", err=True)
    _warn_inconclusive(outcome.verdicts, settings.strict)
    echo_error(outcome)
    return outcome.exit_code


def _write_release(out: Path, outcome: Outcome, seconds: float) -> Path:
    """The release report in ``out``, with a differential flame graph per cost comparison."""
    from harness.pipeline.outcome_flames import flame_graphs
    from harness.report.release import write_release

    flames, notes = flame_graphs(outcome)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    return write_release(out, outcome, seconds=seconds, flames=flames)


def echo_error(outcome: Outcome) -> None:
    if outcome.error:
        click.echo(f"dbperf: error: {outcome.error}", err=True)


def judge_options(
    settings: Settings, *, seed: int | None = None, max_pairs: int | None = None, limited: bool = False
) -> JudgeOptions:
    """How verdicts are reached, from the settings (--alpha, --strict) and the command's own options;
    ``limited``: the command has --max-minutes/--yes (gate, compare), which bound a raised design."""
    return pipeline.JudgeOptions(
        alpha=settings.alpha,
        strict=settings.strict,
        seed=seed,
        max_pairs=max_pairs,
        limit_s=settings.raise_limit_s if limited else None,
        pricing=_pricing(settings) if limited else pipeline.Pricing(),
    )


def _pricing(settings: Settings) -> pipeline.Pricing:
    """A raised plan priced as ``dbperf ci plan`` prices its plans: this machine's recent runs in the store
    (read once, when a design is raised), else the profile's (:mod:`harness.pipeline.estimates`)."""
    from functools import cache

    from harness.pipeline.estimates import History, per_run, recent_history
    from harness.pipeline.overhead import PLAN_CHECK_S, SESSION_S, measured

    @cache
    def history() -> History:
        return recent_history(settings.store)

    def run(case: pipeline.Case, kind: Kind, threads: int) -> tuple[float, str]:
        found = history()
        seconds, source = per_run(found.durations, case.server.name, case.server, case.scenario, kind, threads)
        return seconds + found.gap_s(kind)[0], source

    scale = measured(settings.cache_dir).scale  # this runner's measured overhead, else 1 (assumed)
    return pipeline.Pricing(run, SESSION_S * scale, PLAN_CHECK_S * scale)


def _warn_inconclusive(verdicts: Sequence[Verdict], strict: bool) -> None:
    if any(v.outcome == "inconclusive" for v in verdicts):
        extra = " (--strict: failing)" if strict else ""
        click.echo(f"warning: {headline(verdicts)}: some verdicts are inconclusive{extra}", err=True)


def parse_head_vars(values: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--head-var takes NAME=VALUE (e.g. thread_handling=pool-of-threads), got {item!r}")
        out[name.strip()] = value.strip()
    return out


def same_settings(base: Server, head: Server, scenario: Scenario) -> bool:
    """Whether ``head`` runs what ``base`` runs: the same build, provider and limits, and the same effective
    settings (dbperf's pinned ones, the config file, the variables, the derived minimums), names compared
    without case or ``-``/``_`` differences and values without case. Read back from a started server,
    a clamped value can still differ; this is what dbperf asks each server for."""

    def settings(server: Server) -> dict[str, str]:
        values = {**effective_variables(server, scenario), **requested_values(server)}
        return {k.lower().replace("-", "_"): v.strip().lower() for k, v in values.items()}

    def build(server: Server) -> dict[str, object]:
        return {k: v for k, v in server.identity().items() if k not in {"variables", "config"}}

    return build(base) == build(head) and settings(base) == settings(head)


@click.command("compare")
@click.option("--base", required=True, metavar="SERVER", help="base server")
@click.option("--head", metavar="SERVER", help="head server (default: the base with --head-var overrides)")
@click.option("--head-var", multiple=True, metavar="NAME=VALUE", help="server variable override for the head")
@click.option("--max-repetitions", type=int, help="extend inconclusive comparisons up to this many pairs")
@click.option("--seed", type=int, help="seed of the randomised balanced order (printed when not given)")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="also write the report into this folder: report.md, verdicts.json, the chart of the changes and, "
    "per cost comparison, a differential flame graph (flamegraph-SCENARIO-Nt.svg)",
)
@json_option
@shared(*(o for o in GATE_OPTIONS if o != "server"))
def compare_cmd(
    base: str,
    head: str | None,
    head_var: tuple[str, ...],
    max_repetitions: int | None,
    seed: int | None,
    out: Path | None,
    as_json: bool,
    **kwargs: Any,
) -> int:
    """A/B-compare two servers (or one with --head-var) on scenarios, interleaved.

    Base and head run in a randomised balanced order (ABBA...), each repetition on a fresh server
    from the dataset snapshot; per-pair log ratios are judged with the Hodges-Lehmann estimate and
    the exact Wilcoxon signed-rank interval, Holm-corrected across every scenario x metric. Every
    scenario takes part in every look, so drift hits them all alike. A head whose effective settings
    equal the base's (a --head-var value it already runs with) is said to be an A/A comparison. Pairs
    the design check adds are priced first; over --max-minutes it stops, unless --yes. Over a minute,
    the whole comparison's expected wall time is said before it starts (docs/usage.md, "Estimates").

    \b
    Examples:
      dbperf compare --base mariadb-local --head-var thread_handling=pool-of-threads \\
          --scenario oltp_point_select --repetitions 10
      dbperf compare --base mariadb-10.11 --head mariadb-11.8 --scenario all --out release/   # a release
    """
    settings = pop_shared(kwargs)
    overrides = parse_head_vars(head_var)
    if head is None and not overrides:
        raise ConfigError("give --head SERVER or at least one --head-var NAME=VALUE")
    specs = []
    same: list[str] = []  # heads that set nothing the base does not already run with
    for name in scenario_names(settings):
        base_case = pipeline.resolve(settings, name, base)
        head_server = pipeline.resolve(settings, name, head).server if head else base_case.server
        if overrides:
            check_variables(overrides, "--head-var", server_options(head_server))  # as that server reads them
            head_server = head_server.with_variables(overrides)
        if head_server.name == base_case.server.name and not overrides:
            click.echo("note: base and head are the same server: this is an A/A comparison", err=True)
            head_server = head_server.with_variables({}, name=f"{head_server.name}(A/A)")
        elif same_settings(base_case.server, head_server, base_case.scenario):
            same.append(
                f"{head_server.name} sets what {base_case.server.name} already runs with "
                f"({variables_text(overrides) or 'the same build and settings'}): this is an A/A comparison"
            )
            click.echo(f"note: {same[-1]}", err=True)
            head_server = head_server.with_variables({}, name=f"{head_server.name}(A/A)")
        specs.append(pipeline.ComparisonSpec(base_case.server, head_server, base_case.scenario))
    if "time" in settings.kinds():
        pairs = settings.repetitions or specs[0].scenario.repetitions
        if pairs < 2 and settings.repetitions is not None:
            raise ConfigError(
                f"an A/B comparison needs at least 2 repetitions (pairs); --repetitions {pairs} gives "
                "one: leave --repetitions out, and the design check runs the pairs that can decide"
            )
    repetitions_note(settings, [s.scenario for s in specs])
    options = judge_options(settings, seed=seed, max_pairs=max_repetitions, limited=True)
    started = time.monotonic()
    outcome = pipeline.compare(settings, specs, TerminalReporter(sys.stderr), options)
    outcome = dataclasses.replace(outcome, warnings=(*outcome.warnings, *dict.fromkeys(same)))
    seconds = time.monotonic() - started
    if out is not None:
        click.echo(f"report: {_write_release(out, outcome, seconds)}", err=True)
    if as_json:
        click.echo(json.dumps(outcome.document(), indent=2, default=str))
    else:
        print_document(document_of(outcome))
        click.echo(
            f"{outcome.pairs} pair(s) in {outcome.looks} look(s), seed {outcome.seed}, group {outcome.group_id}, "
            f"{seconds / 60:.1f} min"
        )
    _warn_inconclusive(outcome.verdicts, settings.strict)
    echo_error(outcome)
    return outcome.exit_code


@click.command("judge")
@click.option("--group", "group", metavar="ID", help="the runs of this group (default: the newest group)")
@click.option("--all", "all_runs", is_flag=True, help="every matching run instead of one group")
@filters("scenario", "server", "threads", "profile")
@click.option(
    "--mode",
    type=click.Choice(["auto", "ab", "baseline"]),
    default="auto",
    show_default=True,
    help="ab: rebuild the A/B pairs of runs labelled base/head; baseline: judge against baselines; "
    "auto: ab when the runs have base/head labels",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="also write the report into this folder: report.md, verdicts.json and, per cost comparison whose "
    "runs kept their callgrind dumps, a differential flame graph",
)
@json_option
@shared("store", "scenarios-dir", "baselines-dir", *JUDGE_OPTIONS)
def judge_cmd(group: str | None, all_runs: bool, mode: str, out: Path | None, as_json: bool, **kwargs: Any) -> int:
    """Judge stored runs again, without running anything.

    A/B groups (from `dbperf compare` or `dbperf ci run`) are re-paired from their runs and judged
    again; other runs are judged against this testbed's baselines. Any judging option applies: a
    different --alpha, --min-effect, or a metric gated now that was only recorded then
    (--gate-metric). The scenarios' current definitions give the minimum effects and gating metrics
    unless overridden. Exit codes as for compare and gate.

    \b
    Examples:
      dbperf judge                                              # the newest group, as it was judged
      dbperf judge --group 20261123T152526-6528e6 --alpha 0.05 --min-effect qps=2%
      dbperf judge --group G --gate-metric qps,p95_ms,p99_ms,cpu_per_txn --json
      dbperf judge --all -s oltp_point_select --server mariadb-local --mode baseline
    """
    from harness.cli.selection import check_filter, select_runs
    from harness.pipeline.rejudge import rejudge
    from harness.store import open_store

    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    store = open_store(settings.store)
    check_filter(run_filter, store, settings)
    runs, described = select_runs(
        store, run_filter, group=group, all_runs=all_runs, quiet=as_json, with_profiles=out is not None
    )
    if not runs:
        empty = json.dumps({**Outcome(()).document(), "selection": described}, indent=2)
        return no_runs(f"{described}; nothing judged", as_json=as_json, empty=empty)
    outcome = rejudge(settings, runs, mode=mode)  # type: ignore[arg-type]
    if out is not None:
        click.echo(f"report: {_write_release(out, outcome, 0.0)}", err=True)
    if as_json:
        click.echo(json.dumps({**outcome.document(), "selection": described}, indent=2, default=str))
    else:
        print_document(document_of(outcome))
        for warning in outcome.warnings:
            click.echo(f"note: {warning}", err=True)
        click.echo(f"judged {len(runs)} stored run(s) of {described} again; nothing was run")
    _warn_inconclusive(outcome.verdicts, settings.strict)
    return outcome.exit_code


def register(group: click.Group) -> None:
    for command in (gate_cmd, compare_cmd, judge_cmd):
        group.add_command(command)
