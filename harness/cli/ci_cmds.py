"""Pull-request commands: ``dbperf ci plan`` (what a change needs) and ``dbperf ci run`` (run it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.ci.assess import PlanDesign
from harness.ci.plan import plan
from harness.ci.records import DEFAULT_CI_SCENARIOS, CiPlan
from harness.cli.options import JUDGE_OPTIONS, json_option, pop_shared, shared
from harness.config.scenarios import PROFILES, select_scenarios
from harness.config.settings import Settings
from harness.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def _plan_options(func: F) -> F:
    """The options ``ci plan`` and ``ci run`` share, so the two can never disagree on a plan."""
    decorators = [
        click.option("--base", required=True, help="git ref the change is measured against (e.g. origin/main)"),
        click.option("--head", default="HEAD", show_default=True, help="git ref holding the change"),
        shared("scenario", "server", "profile", defaults={"profile": "ci"}),
        click.option(
            "--servers",
            "servers",
            multiple=True,
            metavar="SERVERS",
            help="only the comparisons of these servers: names or shell patterns, comma-separated, "
            "repeatable; local = every server with provider local (the pull-request runner's)",
        ),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def build_plan(base: str, head: str, settings: Settings, servers: Sequence[str] = ()) -> tuple[CiPlan, PlanDesign]:
    """The plan for the settings (the project root is found from the current folder), and its design.

    The scenario selection (--scenario / DBPERF_SCENARIO) is both the set a changed server runs and
    a filter on changed scenarios; without one, a changed server runs the default set and every
    changed scenario is compared. ``servers`` (--servers) narrows the fan-out; each comparison then
    gets its kinds (:mod:`harness.ci.scope`), the design check its pairs (:mod:`harness.ci.assess`),
    and the plan its estimate for those (:mod:`harness.ci.plan_estimate`).
    """
    from harness.ci.assess import assess_plan
    from harness.ci.plan_estimate import with_estimate
    from harness.ci.scope import decide, narrow

    the_plan = decide(settings, narrow(settings, _diff_plan(base, head, settings), servers))
    design = assess_plan(settings, the_plan, settings.kinds())
    return with_estimate(settings, the_plan, design, settings.kinds()), design


def _diff_plan(base: str, head: str, settings: Settings) -> CiPlan:
    if settings.profile not in PROFILES:
        raise ConfigError(f"unknown profile {settings.profile!r}: choose {', '.join(PROFILES)}")
    selection = settings.scenarios
    if selection:
        default = select_scenarios(selection, settings.scenarios_dir)
        only = () if "all" in selection else selection
    else:
        default, only = DEFAULT_CI_SCENARIOS, ()
    return plan(
        settings.root,
        base,
        head,
        profile=settings.profile,
        default_scenarios=default,
        default_server=settings.one_server(),
        only=only,
        named=bool(selection),
    )


def _minutes(seconds: float) -> str:
    return f"~{max(1, round(seconds / 60))} min" if seconds else "-"


def _measures(kinds: Sequence[str]) -> str:
    return " + ".join({"cost": "cost", "time": "timing"}[k] for k in ("cost", "time") if k in kinds)


def estimate_line(p: CiPlan) -> str:
    """``estimated time: ~7 min (cost ~5 min, timing -, ...)``: the estimate per kind, and its sources."""
    e = p.estimate
    if e is None:
        return f"estimated time: {_minutes(p.estimated_s)}"
    measured = e.measured
    sources = (
        "all measured on this machine"
        if measured == len(e.items)
        else "assumed from the profile (no runs of them stored on this machine)"
        if not measured
        else f"{measured} of {len(e.items)} measured on this machine, the rest assumed from the profile"
    )
    pairs = f"{e.pairs} timing pair(s) per comparison; " if e.pairs else ""
    pairs += f"cost runs {e.cost_slots} at a time; " if e.cost_slots > 1 else ""
    datasets = "datasets all in the snapshot cache"
    if e.datasets:
        how = "measured" if all(d.source != "assumed" for d in e.datasets) else "assumed"
        datasets = f"{len(e.datasets)} dataset(s) to prepare first, {_minutes(e.datasets_s)} ({how})"
    return (
        f"estimated time: {_minutes(e.seconds)} (cost {_minutes(e.by_kind('cost'))}, timing "
        f"{_minutes(e.by_kind('time'))}, plan checks and reports {_minutes(e.overhead_s)} "
        f"({'measured' if e.overhead_source != 'assumed' else 'assumed'}); {pairs}run times "
        f"{sources}; {datasets})"
    )


def print_plan(p: CiPlan) -> None:
    from harness.report.tables import new_table, show
    from harness.report.terminal import console

    out = console()
    out.print(
        f"base {p.base_ref} (merge base {p.base_sha[:12]}) → head {p.head_ref} ({p.head_sha[:12]}); "
        f"profile {p.profile}; default server {p.default_server}; "
        + (
            f"scenarios named with --scenario {', '.join(p.default_scenarios)}"
            if p.scenarios_named
            else f"default set {', '.join(p.default_scenarios)} (where a change names no scenarios of its own)"
        )
    )
    if p.comparisons:
        table = new_table(
            f"{len(p.comparisons)} comparison(s)",
            [(col, "left") for col in ("#", "kind", "base", "head", "scenario", "runs", "est.", "why", "chosen")],
        )
        for i, c in enumerate(p.comparisons, 1):
            base = c.base_server + (f" / {c.base.scenario_label}" if c.base.scenario_label != c.scenario else "")
            table.add_row(
                str(i),
                c.kind,
                base,
                c.head_server,
                c.scenario,
                _measures(c.kinds),
                _minutes(c.estimated_s),
                c.reason,
                c.chosen,
            )
        show(out, table)
    if p.recordings:
        table = new_table(
            f"{len(p.recordings)} run(s) recorded only (no verdict)",
            [(col, "left") for col in ("server", "scenario", "est.", "why")],
        )
        for r in p.recordings:
            table.add_row(r.side.server_label, r.side.scenario_label, _minutes(r.estimated_s), r.reason)
        show(out, table)
    for note in p.notes:
        out.print(f"note: {note}", markup=False)
    for line in p.left_out:
        out.print(f"left out: {line}", markup=False)
    if p.empty:
        out.print("nothing to run: no server, scenario or harness change between base and head")
    else:
        out.print(estimate_line(p), markup=False)


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
@json_option
@shared("repetitions", "cost", "cache-dir", "store")
def plan_cmd(base: str, head: str, servers: tuple[str, ...], as_json: bool, **kwargs: Any) -> int:
    """Show which A/B comparisons the change from BASE to HEAD needs.

    A changed server (its file, its config file, its version or image pin) is compared with
    its base definition on the scenarios its changed settings exercise (durability: the write
    scenarios and tpcc; a buffer pool: reads whose data does not fit; ...; a setting of no class or
    a new build: the default set), or on the ones --scenario names; a changed scenario with its base
    definition on the default server; a harness change runs an A/A check of the selected set. Each
    comparison says why its scenario was chosen. Edits that change nothing
    effective (comments, descriptions, pure renames) run nothing.

    \b
    Examples:
      dbperf ci plan --base origin/main --head HEAD
      dbperf ci plan --base origin/main --scenario 'oltp_point*' --profile quick --json
      dbperf ci plan --base origin/main --servers local      # the pull-request runner's servers

    Each comparison runs cost (instructions and the work vector) and, where the change is of a kind
    cost cannot see (concurrency, locking, a new build) and the timing test has power at the
    minimum effect, timing too; --cost / --no-cost decide for all. The plan lists what it left out
    and why, and estimates its wall time from this machine's recent runs in the store.
    """
    settings = pop_shared(kwargs)
    the_plan, found = build_plan(base, head, settings, servers)
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
    from harness.report.tables import new_table, show
    from harness.report.terminal import console

    if not found.tests:
        return
    columns = (
        "comparison",
        "metric",
        "test",
        "repetitions",
        "attainable p",
        "can fail",
        "min effect",
        "noise",
        "power",
    )
    timed = any(a.test != "cost" for a in found.tests)
    title = f"can it fail? {found.pairs} pair(s) per timing comparison" if timed else "can it fail? (cost only)"
    table = new_table(title, [(c, "left") for c in columns])
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
    show(out, table)
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
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out"),
    show_default=True,
    help="folder for the results, reports, comment, BMF file and charts",
)
@click.option("--seed", type=int, help="seed of the randomised balanced order")
@click.option("--max-repetitions", type=int, help="extend inconclusive comparisons up to this many pairs")
@json_option
@shared("repetitions", "time", "warmup", "threads", "cache-dir", "cost", "store", "store-timeout", *JUDGE_OPTIONS)
def run_cmd(
    base: str,
    head: str,
    servers: tuple[str, ...],
    out: Path,
    seed: int | None,
    max_repetitions: int | None,
    as_json: bool,
    **kwargs: Any,
) -> int:
    """Run the plan's comparisons and write every result into one output folder.

    The base side comes from BASE's servers/ and scenarios/, the head side from the working tree.
    OUT receives the store, report.md (also appended to $GITHUB_STEP_SUMMARY), comment.md (the
    pull-request comment), verdicts.json, plan.json, bmf.json and the charts. When --store (or
    DBPERF_STORE) names a DuckLake shared by a fleet, every run also goes there as it finishes; a
    local store file is left alone (a pull request's runs stay in OUT). Exit 0 pass (inconclusive too
    unless --strict), 1 regression, 2 error or failed run.

    \b
    Example:
      dbperf ci run --base origin/main --head HEAD --out out/
    """
    import json
    import sys

    from harness.ci.execute import run_plan
    from harness.cli.gate_cmds import judge_options
    from harness.model.verdict_document import document_of
    from harness.report.terminal import TerminalReporter
    from harness.report.verdicts import print_document

    settings = pop_shared(kwargs)
    the_plan, _ = build_plan(base, head, settings, servers)
    if not as_json:
        print_plan(the_plan)
    else:  # the estimate before it starts, on stderr: stdout is the one JSON document
        click.echo(estimate_line(the_plan), err=True)
    options = judge_options(settings, seed=seed, max_pairs=max_repetitions)
    done = run_plan(settings, the_plan, out, TerminalReporter(sys.stderr), options)
    if as_json:
        doc = {**done.outcome.document(), "report": str(done.report), "seconds": round(done.seconds, 1)}
        click.echo(json.dumps(doc, indent=2, default=str))
        _closing(done.closing)
        return done.outcome.exit_code
    print_document(document_of(done.outcome), empty_table=False)
    click.echo(
        f"{len(done.outcome.runs)} run(s) in {done.seconds / 60:.1f} min (estimated {_minutes(the_plan.estimated_s)}); "
        f"report: {done.report}"
    )
    _closing(done.closing)
    return done.outcome.exit_code


def _closing(line: str) -> None:
    """What a full or read-only disk kept where, last on stderr (harness.ci.execute.closing_line)."""
    if line:
        click.echo(line, err=True)


@ci_group.command("comment")
@click.argument("verdicts", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--sha", default="", help="the commit the run measured (hex), named in the comment's footer")
@click.option("--run-url", default="", help="the run page to link to (https://github.com/OWNER/REPO/actions/runs/ID)")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="write the Markdown here (default: stdout)"
)
def comment_cmd(verdicts: Path, sha: str, run_url: str, out: Path | None) -> int:
    """Build the pull-request comment from a run's VERDICTS JSON (``verdicts.json`` of ``dbperf ci run``).

    For the trusted job that posts it (pr-comment.yml): names, metrics, outcomes and numbers are checked
    and the run's free text is dropped, so a pull request's code cannot choose what the comment says.
    Anything unexpected refuses the whole file (exit 2)."""
    from harness.report.trusted_comment import write_comment

    markdown = write_comment(verdicts, sha=sha, run_url=run_url, out=out)
    if out is None:
        click.echo(markdown, nl=False)
    return 0


def register(group: click.Group) -> None:
    group.add_command(ci_group)
