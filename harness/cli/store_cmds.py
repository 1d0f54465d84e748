"""``dbperf store``: what the store holds, copying it to and from a shared lake, rebuilding, upkeep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.cli.options import pop_shared, shared
from harness.config.settings import store_location
from harness.errors import StoreError
from harness.store import is_lake, open_store


@click.group("store")
def store_group() -> None:
    """Inspect, copy, rebuild and maintain the result store (a local file or a shared DuckLake).

    \b
    Examples:
      dbperf store info
      dbperf store migrate --to 'ducklake:postgres:dbname=dbperf host=db user=runner data_path=/srv/lake/'
      dbperf store migrate --store 'ducklake:postgres:dbname=dbperf host=db user=runner' --to results/dbperf.duckdb
      dbperf store rebuild          # a store file DuckDB cannot read: rebuild it from its run folders
      dbperf store maintain         # a lake: compact small files, expire old snapshots
    """


@store_group.command("info")
@shared("store")
def info_cmd(**kwargs: Any) -> int:
    """Say which store the settings name, and how many runs and testbeds it holds."""
    settings = pop_shared(kwargs)
    store = open_store(settings.store)
    try:
        table = store.metrics_table()
        testbeds = len(set(table.column("testbed_fingerprint").to_pylist()))
        kind = "DuckLake (shared)" if is_lake(settings.store) else "local DuckDB file"
        click.echo(f"store: {store.location}\nbackend: {kind}\nruns: {table.num_rows:,}\ntestbeds: {testbeds}")
    finally:
        store.close()
    return 0


@store_group.command("migrate")
@click.option("--to", "target", required=True, metavar="STORE", help="the store to copy into (a file or a lake)")
@shared("store")
def migrate_cmd(target: str, **kwargs: Any) -> int:
    """Copy every run of the store (--store) into another one (--to), and check the copy.

    Local file to lake, lake to local file, or between two of a kind. Runs already in the target are
    replaced by the source's (nothing is duplicated); its other runs are kept. The source is not changed.
    A copy into a lake first deletes the Parquet files no snapshot references (left by a killed write).
    """
    from harness.store.migrate import copy_runs

    settings = pop_shared(kwargs)
    destination = store_location(target, settings.root)
    if str(destination) == str(settings.store):
        raise StoreError(f"--to names the store being copied ({settings.store}): name another store")
    source = open_store(settings.store)
    try:
        sink = open_store(destination)
        try:
            copied = copy_runs(source, sink)
        finally:
            sink.close()
    finally:
        source.close()
    rows = ", ".join(f"{n:,} {t}" for t, n in copied.rows.items() if n)
    click.echo(
        f"copied {copied.runs:,} run(s) from {source.location} to {sink.location} in {copied.seconds:.1f} s"
        f"{f' ({rows} rows)' if rows else ''}; every table checked"
        + (f"; deleted {copied.orphans} orphaned data file(s) an interrupted write had left" if copied.orphans else "")
    )
    return 0


@store_group.command("rebuild")
@shared("store")
def rebuild_cmd(**kwargs: Any) -> int:
    """Move a local store's DuckDB file aside and rebuild it from its Parquet run folders.

    For a file DuckDB cannot read: written by another DuckDB version (2.0), truncated or damaged.
    The old file is kept beside the store as <name>.aside-<time>.
    """
    from harness.store.migrate import rebuild

    settings = pop_shared(kwargs)
    if is_lake(settings.store):
        raise StoreError("a lake has no local file to rebuild: `dbperf store rebuild` is for a local store")
    result = rebuild(Path(settings.store))
    moved = f"moved the old file to {result.moved_to}; " if result.moved_to else ""
    click.echo(f"{moved}rebuilt {settings.store} with {result.runs:,} run(s) in {result.seconds:.1f} s")
    return 0


@store_group.command("maintain")
@click.option(
    "--keep-snapshots", default="7 days", show_default=True, help="how long the lake keeps old snapshots (time travel)"
)
@shared("store")
def maintain_cmd(keep_snapshots: str, **kwargs: Any) -> int:
    """Compact a lake: move small saves out of the catalog into Parquet, merge files, expire snapshots.

    Safe while runners write (each step waits for the writers' lock). Run it nightly, e.g. after
    the trend site is drawn.
    """
    from harness.store.lake import LakeStore

    settings = pop_shared(kwargs)
    store = open_store(settings.store)
    try:
        if not isinstance(store, LakeStore):
            raise StoreError(f"{store.location} is a local file: nothing to maintain (the lake needs it)")
        timings = store.maintain(keep_snapshots=keep_snapshots)
    finally:
        store.close()
    click.echo("; ".join(f"{name} {seconds:.1f} s" for name, seconds in timings.items()))
    return 0


def register(group: click.Group) -> None:
    group.add_command(store_group)
