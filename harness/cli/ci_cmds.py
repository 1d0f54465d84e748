"""Pull-request commands: ``dbperf ci plan`` (what a change needs) and ``dbperf ci run`` (run it)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.ci.assess import PlanDesign
from harness.ci.plan import plan
from harness.ci.records import DEFAULT_CI_SCENARIOS, CiPlan
from harness.cli.options import pop_shared, shared
from harness.config.scenarios import PROFILES
from harness.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def _plan_options(func: F) -> F:
    """The options ``ci plan`` and ``ci run`` share, so the two can never disagree on a plan."""
    decorators = [
        click.option("--base", required=True, help="git ref the change is measured against (e.g. origin/main)"),
        click.option("--head", default="HEAD", show_default=True, help="git ref holding the change"),
        click.option(
            "--profile",
            type=click.Choice(PROFILES),
            default="ci",
            show_default=True,
            envvar="DBPERF_CI_PROFILE",
            help="scenario profile of every comparison; env DBPERF_CI_PROFILE",
        ),
        click.option(
            "--scenarios",
            "scenario_list",
            default=",".join(DEFAULT_CI_SCENARIOS),
            show_default=True,
            envvar="DBPERF_CI_SCENARIOS",
            help="comma-separated default scenario set, run for every changed server; env DBPERF_CI_SCENARIOS",
        ),
        click.option(
            "--only",
            default="",
            help="keep only scenarios matching these comma-separated shell patterns (e.g. 'oltp_*')",
        ),
        shared("server"),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def build_plan(base: str, head: str, profile: str, scenario_list: str, only: str, kwargs: dict[str, Any]) -> CiPlan:
    """The plan for the command-line options (the project root is found from the current folder)."""
    settings = pop_shared(kwargs)
    scenarios = _split(scenario_list)
    if not scenarios:
        raise ConfigError("--scenarios needs at least one scenario name")
    return plan(
        settings.root,
        base,
        head,
        profile=profile,
        default_scenarios=scenarios,
        default_server=settings.server,
        only=_split(only),
    )


def _minutes(seconds: int) -> str:
    return f"~{max(1, round(seconds / 60))} min" if seconds else "-"


def print_plan(p: CiPlan) -> None:
    from rich.table import Table

    from harness.report.terminal import console

    out = console()
    out.print(
        f"base {p.base_ref} (merge base {p.base_sha[:12]}) → head {p.head_ref} ({p.head_sha[:12]}); "
        f"profile {p.profile}; default server {p.default_server}; default scenarios "
        f"{', '.join(p.default_scenarios)}"
    )
    if p.comparisons:
        table = Table(title=f"{len(p.comparisons)} comparison(s)", title_justify="left")
        for col in ("#", "kind", "base", "head", "scenario", "est.", "why"):
            table.add_column(col)
        for i, c in enumerate(p.comparisons, 1):
            base = c.base_server + (f" / {c.base.scenario_label}" if c.base.scenario_label != c.scenario else "")
            table.add_row(str(i), c.kind, base, c.head_server, c.scenario, _minutes(c.estimated_s), c.reason)
        out.print(table)
    if p.recordings:
        table = Table(title=f"{len(p.recordings)} run(s) recorded only (no verdict)", title_justify="left")
        for col in ("server", "scenario", "est.", "why"):
            table.add_column(col)
        for r in p.recordings:
            table.add_row(r.side.server_label, r.side.scenario_label, _minutes(r.estimated_s), r.reason)
        out.print(table)
    for note in p.notes:
        out.print(f"note: {note}", markup=False)
    if p.empty:
        out.print("nothing to run: no server, scenario or harness change between base and head")
    else:
        out.print(f"estimated time: {_minutes(p.estimated_s)} (datasets prepared once, not counted)")


@click.group("ci")
def ci_group() -> None:
    """Pull-request performance checks, decided from the git diff between two refs.

    \b
    Start here:
      dbperf ci plan --base origin/main              # what this branch needs, and why
      dbperf ci plan --base origin/main --json       # the same, for scripts
    """


@ci_group.command("plan")
@_plan_options
@click.option("--json", "as_json", is_flag=True, help="print the plan as one JSON document on stdout")
def plan_cmd(base: str, head: str, profile: str, scenario_list: str, only: str, as_json: bool, **kwargs: Any) -> int:
    """Show which A/B comparisons the change from BASE to HEAD needs.

    A changed server (its file, its config file, its version or image pin) is compared with
    its base definition on the default scenarios; a changed scenario with its base definition on the
    default server; a harness change runs an A/A check of the default set. Edits that change nothing
    effective (comments, descriptions, pure renames) run nothing.

    \b
    Example:
      dbperf ci plan --base origin/main --head HEAD --scenarios oltp_point_select
    """
    from harness.ci.assess import assess_plan
    from harness.cli.options import settings_from

    settings = settings_from(kwargs)
    the_plan = build_plan(base, head, profile, scenario_list, only, kwargs)
    found = assess_plan(settings, the_plan, settings.kinds())
    if as_json:
        doc = the_plan.to_dict()
        doc["design"] = {"pairs": found.pairs, "note": found.note, "tests": [a.as_dict() for a in found.tests]}
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print_plan(the_plan)
        print_design(found)
    return 0


def print_design(found: PlanDesign) -> None:
    """Per gating test: can it fail (the smallest adjusted p-value it can reach), and its power."""
    from rich.table import Table

    from harness.report.terminal import console

    if not found.tests:
        return
    table = Table(title=f"can it fail? {found.pairs} pair(s) per timing comparison", title_justify="left")
    for col in (
        "comparison",
        "metric",
        "test",
        "repetitions",
        "attainable p",
        "can fail",
        "min effect",
        "noise",
        "power",
    ):
        table.add_column(col)
    for a in found.tests:
        table.add_row(
            a.label,
            a.metric,
            a.test,
            a.repetitions,
            f"{a.attainable:.2g} (Holm over {a.family})",
            "yes" if a.can_fail else "NO",
            f"{a.min_effect * 100:g} %",
            f"{a.noise * 100:.2g} % ({a.noise_source})",
            f"{a.power:.0%}",
        )
    out = console()
    out.print(table)
    if found.note:
        out.print(f"note: {found.note}", markup=False)
    out.print(
        "power: the chance that a change of exactly the minimum effect is significant at this design; "
        "a regression verdict also needs the estimate beyond the minimum effect",
        markup=False,
    )


@ci_group.command("run")
@_plan_options
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("out"),
    show_default=True,
    help="folder for the results, reports, BMF file and charts",
)
@click.option("--strict", is_flag=True, help="exit 1 on inconclusive verdicts too")
@click.option("--seed", type=int, help="seed of the randomised balanced order")
@click.option("--max-repetitions", type=int, help="extend inconclusive comparisons up to this many pairs")
@shared("repetitions", "time", "warmup", "threads", "cache-dir", "cost")
def run_cmd(
    base: str,
    head: str,
    profile: str,
    scenario_list: str,
    only: str,
    out: Path,
    strict: bool,
    seed: int | None,
    max_repetitions: int | None,
    **kwargs: Any,
) -> int:
    """Run the plan's comparisons and write every result into one output folder.

    The base side comes from BASE's servers/ and scenarios/, the head side from the working tree.
    OUT receives the store, report.md (also appended to $GITHUB_STEP_SUMMARY), verdicts.json,
    plan.json, bmf.json and the charts. Exit 0 pass (inconclusive too unless --strict),
    1 regression, 2 error or failed run.

    \b
    Example:
      dbperf ci run --base origin/main --head HEAD --out out/
    """
    import sys

    from harness.ci.run import run_plan
    from harness.cli.options import settings_from
    from harness.pipeline import JudgeOptions
    from harness.report.terminal import TerminalReporter
    from harness.report.verdicts import print_verdicts

    settings = settings_from(kwargs)
    the_plan = build_plan(base, head, profile, scenario_list, only, kwargs)
    print_plan(the_plan)
    options = JudgeOptions(strict=strict, seed=seed, max_pairs=max_repetitions)
    done = run_plan(settings, the_plan, out, TerminalReporter(sys.stderr), options)
    if done.outcome.verdicts:
        print_verdicts(done.outcome.verdicts)
    click.echo(f"{len(done.outcome.runs)} run(s) in {done.seconds / 60:.1f} min; report: {done.report}")
    return done.outcome.exit_code


def register(group: click.Group) -> None:
    group.add_command(ci_group)
