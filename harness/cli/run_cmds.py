"""Commands that run and list: run, runs, scenarios, servers, cache, sweep (imports: import_cmds.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from harness.cli.options import RUN_OPTIONS, filters, json_option, pop_shared, shared
from harness.cli.selection import check_filter, check_group, check_names, no_runs, nothing_matches, pop_filter
from harness.config.settings import Settings
from harness.errors import ConfigError, HarnessError
from harness.report.tables import new_table, show
from harness.report.terminal import (
    LISTING_OPTIONAL,
    TerminalReporter,
    console,
    print_summary,
    run_listing,
)
from harness.store import open_store

if TYPE_CHECKING:
    from harness.model.run import RunResult


def scenario_names(settings: Settings) -> tuple[str, ...]:
    """The scenarios a running command was asked for (``--scenario`` or ``DBPERF_SCENARIO``)."""
    from harness.config.scenarios import select_scenarios  # the catalogue (pydantic) only where it is read

    names = select_scenarios(settings.scenarios, settings.scenarios_dir)
    if not names:
        raise ConfigError(
            "give --scenario NAME (or set DBPERF_SCENARIO): names, shell patterns or all; `dbperf scenarios` lists them"
        )
    return names


def _say_estimate(settings: Settings, names: Sequence[str], server: str, reporter: TerminalReporter) -> None:
    """The run's expected wall time, before the store opens (pipeline/estimates.py: said over a minute)."""
    from harness import pipeline
    from harness.pipeline import estimates

    cases = [pipeline.resolve(settings, name, server) for name in names]
    work = estimates.of_cases(settings, cases, settings.kinds(("time",)))
    estimates.say(reporter.phase, estimates.of_work(settings, work, estimates.recent_history(settings.store)))


@click.command("run")
@json_option
@shared(*RUN_OPTIONS)
def run_cmd(as_json: bool, **kwargs: Any) -> int:
    """Run scenarios on a server and store every run.

    Each repetition at each thread count starts its own server from the dataset snapshot, warms up,
    measures with 1 s intervals (progress on stderr), and is stored in DuckDB at once. Several
    scenarios (-s a,b or -s 'oltp_*' or -s all) run one after the other; a failed run is stored and
    the others still run (exit 2 at the end). Over a minute, the expected wall time is said first, from
    this machine's stored runs (docs/usage.md, "Estimates").

    \b
    Example:
      dbperf run --scenario oltp_point_select --server mariadb-local --threads 8 --time 30
    """
    from harness import pipeline  # the whole pipeline only for the commands that run

    settings = pop_shared(kwargs)
    names = scenario_names(settings)
    server = settings.one_server()
    reporter = TerminalReporter(sys.stderr)
    first = pipeline.resolve(settings, names[0], server)
    _say_estimate(settings, names, server, reporter)
    session = pipeline.open_session(settings, reporter, containers=first.server.provider == "container")
    outcomes = [pipeline.run(settings, name, reporter, server=server, session=session) for name in names]
    runs = [r for o in outcomes for r in o.runs]
    if as_json:
        docs = [{**r.summary_dict(), "headline": _headline(r)} for r in runs]
        click.echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    else:
        print_summary(runs)
        click.echo(f"store: {settings.store}")
    failed = [r for r in runs if not r.ok]
    errors = [o.error for o in outcomes if o.error]
    if failed and not errors:
        click.echo(f"dbperf: error: run {failed[0].run_id} failed: {failed[0].failure}", err=True)
    for error in errors:
        click.echo(f"dbperf: error: {error}", err=True)
    return max(o.exit_code for o in outcomes)


def _headline(run: RunResult) -> dict[str, object] | None:
    """The figure the scenario leads with (``headline`` in its TOML; tpcc: NOPM), as the report shows it."""
    metric = str(run.options.get("headline", ""))
    if not metric:
        return None
    label = str(run.options.get("headline_label") or metric)
    return {"metric": metric, "label": label, "value": run.metric(metric)}


@click.command("runs")
@filters("scenario", "server", "threads", "profile")
@click.option("--status", type=click.Choice(["ok", "failed"]), help="only ok or failed runs")
@click.option("--group", "group", metavar="ID", help="only the runs of this group")
@click.option("--limit", type=int, default=50, show_default=True, help="newest N runs (0 = all)")
@json_option
@shared("store")
def runs_cmd(status: str | None, group: str | None, limit: int, as_json: bool, **kwargs: Any) -> int:
    """List stored runs, newest first.

    Each row says when the run started (UTC), its id and its group (what --group takes in report,
    judge and export), what it ran and its headline numbers. A --scenario or --server that names
    nothing in the catalogue nor in the store is an error (with the nearest names); filters that
    match no stored run say so and exit 0.
    """
    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    store = open_store(settings.store)
    check_filter(run_filter, store, settings)
    runs = run_filter.keep(store.runs(**run_filter.store_args(), status=status, group_id=group))
    runs = runs[:limit] if limit else runs
    if not runs:
        check_group(store, group)
        message = nothing_matches(store, run_filter, group, also=[f"status {status}"] if status else [])
        return no_runs(message, as_json=as_json)
    if as_json:
        click.echo(json.dumps([r.summary_dict() for r in runs], indent=2))
        return 0
    show(console(), run_listing(runs, title=f"{len(runs)} run(s) in {settings.store}, newest first"), LISTING_OPTIONAL)
    return 0


def _catalogue(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> Console:
    """Print a catalogue listing, every column left-aligned; returns the console for what follows."""
    out = console()
    table = new_table(title, [(c, "left") for c in columns])
    for row in rows:
        table.add_row(*row)
    show(out, table)
    return out


@click.command("scenarios")
@filters("scenario")
@json_option
@shared("profile", "scenarios-dir")
def scenarios_cmd(as_json: bool, **kwargs: Any) -> int:
    """List the scenario catalogue for a profile (validating every file)."""
    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    from harness.config.scenarios import PROFILES, available_scenarios, load_scenario

    check_names(run_filter, catalogue=(settings.scenarios_dir, settings.servers_dir), stored=None)
    names = [n for n in available_scenarios(settings.scenarios_dir) if run_filter.matches(n, "", 0, "")]
    scenarios = [load_scenario(name, settings.scenarios_dir, settings.profile) for name in names]
    if as_json:
        docs = [
            {
                "name": s.name,
                "script": s.script,
                "profile": s.profile,
                "tables": s.tables,
                "table_size": s.table_size,
                "threads": list(s.threads),
                "warmup_s": s.warmup_s,
                "time_s": s.time_s,
                "repetitions": s.repetitions,
                "writes": s.writes,
                "gate": list(s.gate_metrics),
                "min_effect": dict(s.min_effects),
                "description": s.description,
            }
            for s in scenarios
        ]
        click.echo(json.dumps(docs, indent=2))
        return 0
    out = _catalogue(
        f"scenarios ({settings.profile} profile, {settings.scenarios_dir})",
        ("name", "script", "dataset", "threads", "warm-up+time", "reps", "writes", "description"),
        [
            (
                s.name,
                s.script,
                f"{s.tables} x {s.table_size:,}",
                ",".join(map(str, s.threads)),
                f"{s.warmup_s}+{s.time_s} s",
                str(s.repetitions),
                "yes" if s.writes else "no",
                s.description,
            )
            for s in scenarios
        ],
    )
    out.print(f"profiles: {', '.join(PROFILES)} (choose with --profile or DBPERF_PROFILE)")
    return 0


@click.command("servers")
@json_option
@shared("servers-dir")
def servers_cmd(as_json: bool, **kwargs: Any) -> int:
    """List the servers (validating every file)."""
    settings = pop_shared(kwargs)
    from harness.config.servers import available_servers, load_server

    servers = [load_server(name, settings.servers_dir) for name in available_servers(settings.servers_dir)]
    if as_json:
        docs = [
            {
                "name": t.name,
                "flavour": t.flavour,
                "version": t.version,
                "provider": t.provider,
                "image": t.image,
                "binary": t.binary,
                "config_file": str(t.config_file) if t.config_file else None,
                "cpuset": t.cpuset,
                "description": t.description,
            }
            for t in servers
        ]
        click.echo(json.dumps(docs, indent=2))
        return 0
    _catalogue(
        f"servers ({settings.servers_dir})",
        ("name", "flavour", "version", "provider", "image / binary", "config", "cpus", "description"),
        [
            (
                t.name,
                t.flavour,
                t.version,
                t.provider,
                t.image or t.binary or f"{t.host}:{t.port}",
                t.config_file.name if t.config_file else "-",
                t.cpuset or "-",
                t.description,
            )
            for t in servers
        ],
    )
    return 0


@click.group("cache")
def cache_group() -> None:
    """Dataset snapshots (prepared once, restored for every run)."""


@cache_group.command("clear")
@json_option
@shared("cache-dir")
def cache_clear(as_json: bool, **kwargs: Any) -> int:
    """Remove every dataset snapshot (they are rebuilt on the next run)."""
    from harness.dataset import DatasetCache

    settings = pop_shared(kwargs)
    removed = DatasetCache(settings.cache_dir).clear()
    if as_json:
        click.echo(json.dumps({"removed": removed, "cache_dir": str(settings.cache_dir)}))
    else:
        click.echo(f"removed {removed} snapshot(s) from {settings.cache_dir}")
    return 0


@click.command("sweep")
@click.option("--all", "everything", is_flag=True, help="also containers of running dbperf processes")
@json_option
@shared("cache-dir")
def sweep_cmd(everything: bool, as_json: bool, **kwargs: Any) -> int:
    """Remove leftover servers, containers and temporary folders of dbperf processes that died.

    --all also removes the containers of dbperf processes still running: only on a machine where no
    one else runs dbperf (a dedicated runner before a job).
    """
    from harness import workspace
    from harness.servers.local import sweep_leftovers

    settings = pop_shared(kwargs)
    removed = workspace.sweep(cache_dir=settings.cache_dir) + sweep_leftovers()
    try:
        from harness.servers.container import sweep_containers

        removed += sweep_containers(only_dead_owners=not everything)
    except HarnessError as exc:  # no Docker engine is fine for a sweep
        click.echo(f"(containers not swept: {exc})", err=True)
    if as_json:
        click.echo(json.dumps({"removed": [str(r) for r in removed]}))
    else:
        for item in removed:
            click.echo(f"removed {item}")
        click.echo(f"removed {len(removed)} leftover(s)")
    return 0


def register(group: click.Group) -> None:
    for command in (run_cmd, runs_cmd, scenarios_cmd, servers_cmd, cache_group, sweep_cmd):
        group.add_command(command)
