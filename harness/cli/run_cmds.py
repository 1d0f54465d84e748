"""Commands that run, list and import measurements: run, runs, import, scenarios, servers, cache, sweep."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from harness import pipeline
from harness.cli.options import RUN_OPTIONS, pop_shared, shared
from harness.config.scenarios import PROFILES, available_scenarios, load_scenario
from harness.config.servers import available_servers, load_server
from harness.errors import HarnessError
from harness.report.terminal import TerminalReporter, console, print_summary, runs_table
from harness.store import open_store
from harness.sysbench.importer import import_logs


@click.command("run")
@click.option("--scenario", "-s", required=True, help="scenario name (a file in scenarios/)")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="print the result as one JSON document on stdout (a list when there are several runs)",
)
@shared(*RUN_OPTIONS)
def run_cmd(scenario: str, as_json: bool, **kwargs: Any) -> int:
    """Run a scenario on a server and store every run.

    Each repetition at each thread count starts its own server from the dataset snapshot, warms up,
    measures with 1 s intervals (progress on stderr), and is stored in DuckDB at once.

    \b
    Example:
      dbperf run --scenario oltp_point_select --server mariadb-local --threads 8 --time 30
    """
    settings = pop_shared(kwargs)
    outcome = pipeline.run(settings, scenario, TerminalReporter(sys.stderr))
    if as_json:
        docs = [r.summary_dict() for r in outcome.runs]
        click.echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    else:
        print_summary(outcome.runs)
        click.echo(f"store: {settings.store}")
    failed = [r for r in outcome.runs if not r.ok]
    if failed and not outcome.error:
        click.echo(f"dbperf: error: run {failed[0].run_id} failed: {failed[0].failure}", err=True)
    if outcome.error:
        click.echo(f"dbperf: error: {outcome.error}", err=True)
    return outcome.exit_code


@click.command("runs")
@click.option("--scenario", "-s", help="only this scenario")
@click.option("--server", "server", help="only this server")
@click.option("--threads", type=int, help="only this thread count")
@click.option("--status", type=click.Choice(["ok", "failed"]), help="only ok or failed runs")
@click.option("--limit", type=int, default=50, show_default=True, help="newest N runs (0 = all)")
@click.option("--json", "as_json", is_flag=True, help="print the runs as a JSON list on stdout")
@shared("store")
def runs_cmd(
    scenario: str | None,
    server: str | None,
    threads: int | None,
    status: str | None,
    limit: int,
    as_json: bool,
    **kwargs: Any,
) -> int:
    """List stored runs, newest first."""
    settings = pop_shared(kwargs)
    store = open_store(settings.store)
    runs = store.runs(scenario=scenario, server=server, threads=threads, status=status, limit=limit or None)
    if as_json:
        click.echo(json.dumps([r.summary_dict() for r in runs], indent=2))
        return 0
    if not runs:
        click.echo(f"no runs stored in {settings.store} (try: dbperf run --scenario oltp_point_select)")
        return 0
    console().print(runs_table(runs, title=f"{len(runs)} run(s) in {settings.store}"))
    return 0


@click.group("import")
def import_group() -> None:
    """Bring existing results into the store."""


@import_group.command("sysbench-log")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--scenario", "-s", default="imported", show_default=True, help="scenario name to file them under")
@click.option("--server", "server", default="imported", show_default=True, help="server name to file them under")
@click.option("--server-version", default="", help="server version, if known (logs do not say)")
@click.option("--json", "as_json", is_flag=True, help="print the imported runs as JSON")
@shared("store")
def import_sysbench_log(
    files: tuple[Path, ...], scenario: str, server: str, server_version: str, as_json: bool, **kwargs: Any
) -> int:
    """Import sysbench 1.0.x text output (interval lines and final summary) into the store.

    Reads the default human-readable output of any oltp script, with or without --report-interval.
    A log without a final summary (an interrupted run) is stored as a failed run with its intervals.
    Every file is checked before any is stored; an unreadable one is named with its line.
    """
    settings = pop_shared(kwargs)
    runs = import_logs(list(files), scenario=scenario, server=server, server_version=server_version)
    store = open_store(settings.store)
    for run in runs:
        store.save(run)
    if as_json:
        click.echo(json.dumps([r.summary_dict() for r in runs], indent=2))
    else:
        console().print(runs_table(runs, title=f"imported {len(runs)} log(s) into {settings.store}"))
    return 0


@import_group.command("unsaved")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@shared("store")
def import_unsaved(files: tuple[Path, ...], **kwargs: Any) -> int:
    """Store runs that a full or damaged store could not take (the files dbperf named), then remove them."""
    from harness.run.fallback import read_unsaved

    settings = pop_shared(kwargs)
    runs = [read_unsaved(path) for path in files]  # every file is checked before any is stored
    store = open_store(settings.store)
    for path, run in zip(files, runs, strict=True):
        store.save(run)
        path.unlink(missing_ok=True)
    console().print(runs_table(runs, title=f"imported {len(runs)} unsaved run(s) into {settings.store}"))
    return 0


@click.command("scenarios")
@shared("profile", "scenarios-dir")
def scenarios_cmd(**kwargs: Any) -> int:
    """List the scenario catalogue for a profile (validating every file)."""
    settings = pop_shared(kwargs)
    out = console()
    from rich.table import Table

    table = Table(title=f"scenarios ({settings.profile} profile)", title_justify="left")
    for col in ("name", "script", "dataset", "threads", "warm-up+time", "reps", "writes", "description"):
        table.add_column(col)
    for name in available_scenarios(settings.scenarios_dir):
        s = load_scenario(name, settings.scenarios_dir, settings.profile)
        table.add_row(
            s.name,
            s.script,
            f"{s.tables} x {s.table_size:,}",
            ",".join(map(str, s.threads)),
            f"{s.warmup_s}+{s.time_s} s",
            str(s.repetitions),
            "yes" if s.writes else "no",
            s.description,
        )
    out.print(table)
    out.print(f"profiles: {', '.join(PROFILES)} (choose with --profile or DBPERF_PROFILE)")
    return 0


@click.command("servers")
@shared("servers-dir")
def servers_cmd(**kwargs: Any) -> int:
    """List the servers (validating every file)."""
    settings = pop_shared(kwargs)
    from rich.table import Table

    table = Table(title="servers", title_justify="left")
    for col in ("name", "flavour", "version", "provider", "image / binary", "config", "cpus", "description"):
        table.add_column(col)
    for name in available_servers(settings.servers_dir):
        t = load_server(name, settings.servers_dir)
        table.add_row(
            t.name,
            t.flavour,
            t.version,
            t.provider,
            t.image or t.binary or f"{t.host}:{t.port}",
            t.config_file.name if t.config_file else "-",
            t.cpuset or "-",
            t.description,
        )
    console().print(table)
    return 0


@click.group("cache")
def cache_group() -> None:
    """Dataset snapshots (prepared once, restored for every run)."""


@cache_group.command("clear")
@shared("cache-dir")
def cache_clear(**kwargs: Any) -> int:
    """Remove every dataset snapshot (they are rebuilt on the next run)."""
    from harness.dataset import DatasetCache

    settings = pop_shared(kwargs)
    removed = DatasetCache(settings.cache_dir).clear()
    click.echo(f"removed {removed} snapshot(s) from {settings.cache_dir}")
    return 0


@click.command("sweep")
@click.option("--all", "everything", is_flag=True, help="also containers of running dbperf processes")
@shared("cache-dir")
def sweep_cmd(everything: bool, **kwargs: Any) -> int:
    """Remove leftover servers, containers and temporary folders of dbperf processes that died."""
    from harness import workspace
    from harness.servers.local import sweep_leftovers

    settings = pop_shared(kwargs)
    removed = workspace.sweep(cache_dir=settings.cache_dir) + sweep_leftovers()
    for item in removed:
        click.echo(f"removed {item}")
    try:
        from harness.servers.container import sweep_containers

        removed += sweep_containers(only_dead_owners=not everything)
    except HarnessError as exc:  # no Docker engine is fine for a sweep
        click.echo(f"(containers not swept: {exc})", err=True)
    click.echo(f"removed {len(removed)} leftover(s)")
    return 0


def register(group: click.Group) -> None:
    for command in (run_cmd, runs_cmd, import_group, scenarios_cmd, servers_cmd, cache_group, sweep_cmd):
        group.add_command(command)
