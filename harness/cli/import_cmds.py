"""The import commands: sysbench text logs, go-tpc and go-ycsb output, and runs a store could not take."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from harness.cli.options import json_option, pop_shared, shared
from harness.config.settings import Settings
from harness.report.tables import show
from harness.report.terminal import console, runs_table
from harness.store import open_store

if TYPE_CHECKING:
    from harness.imports.runs import ImportedRun

F = TypeVar("F", bound=Callable[..., Any])


@click.group("import")
def import_group() -> None:
    """Bring existing results into the store."""


def imported_as(
    scenario: str, scenario_help: str = "scenario name to file them under", *more: Callable[[Any], Any]
) -> Callable[[F], F]:
    """What every import command takes: the files, the scenario (``scenario``, its default) and server to
    file the runs under, then the command's ``more`` options, the server's version, ``--json`` and the store."""

    def decorate(func: F) -> F:
        for option in reversed(
            (
                click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path)),
                click.option("--scenario", "-s", default=scenario, show_default=True, help=scenario_help),
                click.option(
                    "--server", "server", default="imported", show_default=True, help="server name to file them under"
                ),
                *more,
                click.option("--server-version", default="", help="server version, if known (logs do not say)"),
                json_option,
                shared("store"),
            )
        ):
            func = option(func)
        return func

    return decorate


@import_group.command("sysbench-log")
@imported_as("imported")
def import_sysbench_log(
    files: tuple[Path, ...], scenario: str, server: str, server_version: str, as_json: bool, **kwargs: Any
) -> int:
    """Import sysbench 1.0.x text output (interval lines and final summary) into the store.

    Reads the default human-readable output of any oltp script, with or without --report-interval.
    A log without a final summary (an interrupted run) is stored as a failed run with its intervals.
    Every file is checked before any is stored; an unreadable one is named with its line.
    """
    settings = pop_shared(kwargs)
    from harness.imports.sysbench_runs import import_logs

    runs = import_logs(list(files), scenario=scenario, server=server, server_version=server_version)
    store = open_store(settings.store)
    for run in runs:
        store.save(run)
    if as_json:
        click.echo(json.dumps([r.summary_dict() for r in runs], indent=2))
    else:
        show(console(), runs_table(runs, title=f"imported {len(runs)} log(s) into {settings.store}"))
    return 0


@import_group.command("go-tpc")
@imported_as(
    "go-tpc",
    "scenario name to file them under",
    click.option(
        "--threads",
        type=click.IntRange(min=1),
        required=True,
        help="the threads go-tpc ran with (its -T/--threads; the log does not say)",
    ),
)
def import_go_tpc_cmd(
    files: tuple[Path, ...], scenario: str, server: str, threads: int, server_version: str, as_json: bool, **kwargs: Any
) -> int:
    """Import go-tpc TPC-C output (`go-tpc tpcc run`, --output plain) into the store.

    The files of one import are one group (`dbperf report` shows the newest). Reads every go-tpc
    version's per-type reports ([Current] intervals, [Summary] with NAME_ERR
    failures) and its tpmC line, stored as NOPM, "tpmC-like (unaudited)": an unaudited run is never a
    tpmC. A log without its [Summary] (an interrupted run) is stored as a failed run with its
    intervals. Every file is checked before any is stored; an unreadable one is named with its line.
    """
    from harness.imports.runs import import_go_tpc
    from harness.measure.session import new_group_id

    settings = pop_shared(kwargs)
    imported = import_go_tpc(
        list(files),
        scenario=scenario,
        server=server,
        threads=threads,
        server_version=server_version,
        group_id=new_group_id(),
    )
    return _store_imported(imported, settings, as_json)


@import_group.command("go-ycsb")
@imported_as("go-ycsb", "scenario name to file run phases under (load phases: <scenario>-load)")
def import_go_ycsb_cmd(
    files: tuple[Path, ...], scenario: str, server: str, server_version: str, as_json: bool, **kwargs: Any
) -> int:
    """Import go-ycsb output (`go-ycsb load` and `go-ycsb run`, default histogram output) into the store.

    The files of one import are one group (`dbperf report` shows the newest). One run per phase: a
    log holding a load and a run phase gives two runs, the load one filed under <scenario>-load.
    Threads and workload come from the properties block (passwords and hosts in it are not stored).
    A phase without 'Run finished' is stored as a failed run with its intervals. Every file is
    checked before any is stored; an unreadable one is named with its line.
    """
    from harness.imports.runs import import_go_ycsb
    from harness.measure.session import new_group_id

    settings = pop_shared(kwargs)
    imported = import_go_ycsb(
        list(files), scenario=scenario, server=server, server_version=server_version, group_id=new_group_id()
    )
    return _store_imported(imported, settings, as_json)


def _store_imported(imported: Sequence[ImportedRun], settings: Settings, as_json: bool) -> int:
    """Save imported runs, then print them (go-tpc's headline as NOPM, never tpmC)."""
    from harness.imports.runs import NOPM_LABEL

    store = open_store(settings.store)
    for item in imported:
        store.save(item.run)
    runs = [item.run for item in imported]
    for item in imported:  # a workload other than the scenario it is stored under (harness/imports/ycsb_reference.py)
        for note in item.run.notes:
            if note.startswith("go-ycsb ran "):
                click.echo(f"dbperf: warning: {item.run.scenario} ({item.run.run_id}): {note}", err=True)
    if as_json:
        docs = [{**item.run.summary_dict(), "nopm": item.nopm} for item in imported]
        click.echo(json.dumps(docs, indent=2))
        return 0
    out = console()
    show(out, runs_table(runs, title=f"imported {len(runs)} run(s) into {settings.store}"))
    for item in imported:
        if item.nopm is not None:
            out.print(f"{item.run.scenario} ({item.run.run_id}): {NOPM_LABEL} {item.nopm:,.1f} New-Order/min")
    return 0


@import_group.command("unsaved")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@shared("store")
def import_unsaved(files: tuple[Path, ...], **kwargs: Any) -> int:
    """Store runs that a full or damaged store could not take (the files dbperf named), then remove them."""
    from harness.measure.fallback import read_unsaved

    settings = pop_shared(kwargs)
    runs = [read_unsaved(path) for path in files]  # every file is checked before any is stored
    store = open_store(settings.store)
    for path, run in zip(files, runs, strict=True):
        store.save(run)
        path.unlink(missing_ok=True)
    console().print(runs_table(runs, title=f"imported {len(runs)} unsaved run(s) into {settings.store}"))
    return 0


def register(group: click.Group) -> None:
    group.add_command(import_group)
