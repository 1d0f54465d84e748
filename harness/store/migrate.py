"""Moving stores: copy every run between a local store and a lake (``dbperf store migrate``), and
rebuild a local store's DuckDB file from its Parquet run folders (``dbperf store rebuild``).

A copy reads every table of the source in one go (one snapshot of a lake, or under the local store's
lock), saves them into the target in one transaction (a lake) or one Parquet batch folder (a local
store, whose folders stay the record), and then checks the target: for each table, the copied runs'
row count and an order-independent digest (the sum of each row's hash) must equal the source's.
Runs the target already had are replaced by the source's; other runs of the target are kept.

A copy into a lake first deletes the lake's orphaned data files: Parquet files no snapshot references,
which a migration (or any writer) killed before its commit left in the data path (docs/fleet.md).
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from harness.errors import StoreError
from harness.store.duckdb_file import Store
from harness.store.lake import LakeStore
from harness.store.result_store import ResultStore
from harness.store.rows import COLUMNS, TABLES


@dataclass(frozen=True)
class Copied:
    """What :func:`copy_runs` moved."""

    runs: int
    rows: dict[str, int]
    seconds: float
    orphans: int = 0  # orphaned data files of an earlier, interrupted write deleted from a lake target


@dataclass(frozen=True)
class Rebuilt:
    """What :func:`rebuild` did: where the old file went (None: there was none) and the runs now stored."""

    moved_to: Path | None
    runs: int
    seconds: float


def digests(tables: dict[str, pa.Table]) -> dict[str, tuple[int, int]]:
    """Per table: (rows, order-independent digest of the rows' values in the store's column order)."""
    con = duckdb.connect()
    try:
        out = {}
        for name in TABLES:
            con.register("_t", tables[name])
            columns = ", ".join(f'"{c}"' for c, _ in COLUMNS[name])
            ((rows, digest),) = con.execute(
                f"SELECT count(*), coalesce(sum(hash(struct_pack({columns}))), 0)::HUGEINT FROM _t"
            ).fetchall()
            con.unregister("_t")
            out[name] = (int(rows), int(digest))
        return out
    finally:
        con.close()


def copy_runs(source: ResultStore, target: ResultStore) -> Copied:
    """Copy every run of ``source`` (samples and cost profiles too) into ``target``, then check the copy."""
    started = time.perf_counter()
    orphans = target.delete_orphaned_files() if isinstance(target, LakeStore) else 0
    tables = source.export_tables()
    ids = tables["runs"].column("run_id").to_pylist()
    if ids:
        target.save_tables(tables)
        expected, found = digests(tables), digests(target.export_tables(ids))
        if expected != found:
            differ = [t for t in TABLES if expected[t] != found[t]]
            raise StoreError(
                f"the copy in {target.location} differs from {source.location} in table(s) {', '.join(differ)} "
                f"(rows {[expected[t][0] for t in differ]} -> {[found[t][0] for t in differ]}): run the migration "
                "again (runs are replaced, not duplicated)"
            )
    return Copied(len(ids), {t: tables[t].num_rows for t in TABLES}, time.perf_counter() - started, orphans)


def rebuild(path: Path, *, lock_timeout_s: float = 600.0) -> Rebuilt:
    """Move a local store's DuckDB file (and its WAL) aside, then rebuild it from the Parquet run folders.

    The file is kept as ``<name>.aside-<UTC time>`` beside the store. Refused when there are no run
    folders to rebuild from (the file is then the only copy of its runs).
    """
    started = time.perf_counter()
    store = Store(path, lock_timeout_s=lock_timeout_s, check=False)
    if not _has_folders(store.runs_dir):
        raise StoreError(
            f"no run folders in {store.runs_dir} to rebuild {path} from: the file is the only copy of its runs, "
            "so it is left as it is"
        )
    moved_to: Path | None = None
    fd = store._acquire()  # no other dbperf process may open the file while it moves
    try:
        if path.exists():
            moved_to = path.with_name(f"{path.name}.aside-{datetime.now(UTC):%Y%m%dT%H%M%S%f}")
            try:
                path.rename(moved_to)
                wal = path.with_name(path.name + ".wal")
                if wal.exists():
                    wal.rename(moved_to.with_name(moved_to.name + ".wal"))
            except OSError as exc:
                raise StoreError(f"cannot move {path} aside: {exc}") from exc
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    rebuilt = Store(path, lock_timeout_s=lock_timeout_s)
    rebuilt.ingest_pending()
    return Rebuilt(moved_to, rebuilt.count(), time.perf_counter() - started)


def _has_folders(runs_dir: Path) -> bool:
    if not runs_dir.is_dir():
        return False
    with os.scandir(runs_dir) as entries:
        return any(not e.name.startswith(".") and e.is_dir() for e in entries)
