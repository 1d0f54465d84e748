"""The result store: per-run Parquet folders, merged into one DuckDB file for queries.

Layout, for the store ``results/dbperf.duckdb``::

    results/dbperf.duckdb             DuckDB: runs, intervals, histogram (+ schema_version and
                                      ingested_folders); see harness.store_schema
    results/dbperf.duckdb.lock        flock(2) lock held (exclusively) by every DuckDB access
    results/dbperf.runs/<run_id>/     one folder per saved run:
        run.parquet                     one row, the columns of the runs table
        intervals.parquet               the columns of the intervals table
        histogram.parquet               the columns of the histogram table
    results/dbperf.runs/batch-<time>-<hex>/   the same three files for many runs (Store.save_many)
    results/dbperf.runs/.staging/     folders being written, renamed into place once complete

The Parquet folders are the record. :meth:`Store.save` writes them first (in ``.staging``, then
renamed, so a half-written folder is never visible) and then merges them into DuckDB. A folder whose
merge failed (crash, lock timeout, full disk) is merged by the next save or read, and deleting the
DuckDB file rebuilds it from the folders on the next access.

DuckDB lets one process open a file read-write, and never alongside readers, so every access (reads
too) holds an exclusive ``flock`` on ``<store>.lock`` around a short-lived connection. Parallel jobs
write their Parquet without waiting and queue only for the merge.

Readers that want neither the lock nor the DuckDB file can query the Parquet directly (one folder
level, ``*/``, so ``.staging`` is never read)::

    SELECT * FROM read_parquet('results/dbperf.runs/*/run.parquet', union_by_name=true)
    SELECT * FROM read_parquet('results/dbperf.runs/*/intervals.parquet', union_by_name=true)

``union_by_name`` gives NULL for columns that folders of an older schema lack (version 1 had no
group_id, label, server_cpuset, client_cpuset, cpu_per_txn, instr_per_txn). Timestamps are UTC.
Unlike the DuckDB tables, the glob shows a run twice if it was saved again in another folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from harness.errors import StoreError
from harness.model import RunResult
from harness.store.filecheck import diagnose, explain
from harness.store.result_store import ResultStore
from harness.store.rows import COLUMNS, TABLES, arrow_tables
from harness.store.schema import RENAMED, ensure_schema

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

#: The Parquet file of each table in a run folder.
FILES: dict[str, str] = {
    "runs": "run.parquet",
    "intervals": "intervals.parquet",
    "histogram": "histogram.parquet",
    "functions": "functions.parquet",
    "profiles": "profile.parquet",
    "operations": "operations.parquet",
}
RUN_FILE = FILES["runs"]
#: Files written only when the run has rows for them (readers take a missing file as no rows).
OPTIONAL_FILES = frozenset({"operations"})
_STAGING = ".staging"
_STALE_STAGING_S = 3600.0
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=-]{0,199}")


class _OneByOne(Exception):  # noqa: N818 - internal signal, never escapes
    """Pending folders share a run id: merge them one at a time, in order, so the last one wins."""


class Store(ResultStore):
    """Results of every run: Parquet folders beside a DuckDB file (see the module docstring)."""

    def __init__(self, path: Path, *, lock_timeout_s: float = 600.0, check: bool = True) -> None:
        self.path = Path(path)
        self.runs_dir = self.path.parent / (self.path.stem + ".runs")
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.lock_timeout_s = lock_timeout_s
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store folder {self.path.parent}: {exc}") from exc
        if check:  # create or migrate now, and fail early on a file that is not a store
            with self._locked():
                pass

    @property
    def location(self) -> str:
        """The DuckDB file's path, for messages."""
        return str(self.path)

    def close(self) -> None:
        """Nothing to release: every call holds its own short-lived connection."""

    # -- writing -------------------------------------------------------------------------------

    def save(self, run: RunResult) -> None:
        """Write the run's Parquet folder, then merge it (and any folder left pending) into DuckDB."""
        name = run.run_id
        if not _FOLDER_NAME.fullmatch(name):
            raise StoreError(f"run id {name!r} cannot name a folder: use letters, digits and . _ - + = (max 200)")
        if (self.runs_dir / name).exists():  # saved again: make sure the new folder gets merged
            with self._locked() as con:
                con.execute("DELETE FROM ingested_folders WHERE folder = ?", [name])
        self._write_folder(name, arrow_tables([run]))
        self._merge_written(name)

    def save_tables(self, tables: dict[str, pa.Table]) -> None:
        """Save the runs of these Arrow tables (one per store table) as one Parquet batch folder."""
        name = f"batch-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
        self._write_folder(name, tables)
        self._merge_written(name)

    def ingest_pending(self) -> int:
        """Merge Parquet folders not yet in DuckDB; returns how many runs were merged."""
        with self._locked() as con:
            return self._ingest(con)[0]

    # -- internals -----------------------------------------------------------------------------

    @contextmanager
    def _reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The locked connection, once every pending Parquet folder is merged."""
        with self._locked() as con:
            self._ingest(con)
            yield con

    @contextmanager
    def _locked(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """An exclusive flock on the lock file and a connection to the (created or migrated) store."""
        fd = self._acquire()
        try:
            problem = diagnose(self.path, self.runs_dir)  # a DuckDB 2.0 or foreign file, before DuckDB sees it
            if problem is not None:
                raise StoreError(problem)
            try:
                con = duckdb.connect(str(self.path))
            except duckdb.Error as exc:
                raise StoreError(
                    explain(exc, self.path, self.runs_dir) or f"cannot open the store {self.path}: {exc}"
                ) from exc
            try:
                con.execute("SET TimeZone = 'UTC'")
                ensure_schema(con, self.path)
                yield con
            except (duckdb.Error, OSError) as exc:
                raise StoreError(explain(exc, self.path, self.runs_dir) or f"store {self.path}: {exc}") from exc
            finally:
                con.close()
        finally:
            os.close(fd)  # releases the flock

    def _acquire(self) -> int:
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o664)
        except OSError as exc:
            raise StoreError(f"cannot open the store lock file {self.lock_path}: {exc}") from exc
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise StoreError(
                        f"the store {self.path} stayed locked by another dbperf process for "
                        f"{self.lock_timeout_s:g} s ({self.lock_path}): wait for it to finish"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
            else:
                return fd

    def _write_folder(self, name: str, tables: dict[str, pa.Table]) -> None:
        """Write the tables' Parquet files in a staging folder, then rename it to ``runs_dir/name``."""
        import pyarrow.parquet as pq  # only to write: opening and reading the store need no pyarrow

        staging = self.runs_dir / _STAGING / f"{name}-{uuid.uuid4().hex[:12]}"
        final = self.runs_dir / name
        try:
            staging.mkdir(parents=True)
            for table in TABLES:
                if table in OPTIONAL_FILES and not tables[table].num_rows:
                    continue  # most runs report no operation types: no empty file per run
                pq.write_table(tables[table], staging / FILES[table])
                _fsync(staging / FILES[table])
            if final.exists():  # a run saved again: swap the folders
                old = self.runs_dir / _STAGING / f"old-{name}-{uuid.uuid4().hex[:12]}"
                final.rename(old)
                staging.rename(final)
                shutil.rmtree(old, ignore_errors=True)
            else:
                staging.rename(final)
            _fsync(self.runs_dir)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise StoreError(f"cannot write the Parquet folder {final}: {exc}") from exc

    def _merge_written(self, name: str) -> None:
        folder = self.runs_dir / name
        kept = f"the run is kept in {folder} and the next save or read of the store merges it"
        try:
            with self._locked() as con:
                failed = self._ingest(con, force=(name,))[1]
        except StoreError as exc:
            raise StoreError(f"{exc} ({kept})") from exc
        if name in failed:
            raise StoreError(f"could not merge {folder} into {self.path} (see the log); {kept}")

    def _ingest(self, con: duckdb.DuckDBPyConnection, force: Collection[str] = ()) -> tuple[int, set[str]]:
        """Merge every pending folder (and ``force``); returns (runs merged, folders that failed)."""
        pending = self._pending(con, force)
        if not pending:
            return 0, set()
        try:
            return self._merge(con, pending), set()
        except (_OneByOne, duckdb.Error, OSError) as exc:
            if len(pending) == 1:
                log.warning("store %s: cannot merge %s (kept for a later try): %s", self.path, pending[0], exc)
                return 0, set(pending)
            log.debug("store %s: merging %d folders one by one: %s", self.path, len(pending), exc)
        merged, failed = 0, set()
        for name in pending:
            try:
                merged += self._merge(con, [name])
            except (duckdb.Error, OSError) as exc:
                log.warning("store %s: cannot merge %s (kept for a later try): %s", self.path, name, exc)
                failed.add(name)
        return merged, failed

    def _pending(self, con: duckdb.DuckDBPyConnection, force: Collection[str]) -> list[str]:
        """Folders not merged yet (plus ``force``), oldest first, ``force`` last."""
        if not self.runs_dir.is_dir():
            return []
        self._clean_staging()
        listed = [e.name for e in os.scandir(self.runs_dir) if not e.name.startswith(".") and e.is_dir()]
        if not listed:
            return []
        rows = con.execute(
            "SELECT folder FROM (SELECT unnest(?::VARCHAR[]) AS folder) ANTI JOIN ingested_folders USING (folder)",
            [listed],
        ).fetchall()
        pending = {str(r[0]) for r in rows} | (set(force) & set(listed))
        pending = {n for n in pending if (self.runs_dir / n / RUN_FILE).is_file()}
        return sorted(pending, key=lambda n: (n in force, (self.runs_dir / n).stat().st_mtime_ns, n))

    def _merge(self, con: duckdb.DuckDBPyConnection, names: list[str]) -> int:
        """Replace the runs of these folders in DuckDB, in one transaction; returns how many runs."""
        folders = [self.runs_dir / name for name in names]
        con.begin()
        try:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _incoming AS SELECT run_id FROM "
                f"read_parquet({_sql_list([f / RUN_FILE for f in folders])}, union_by_name=true)"
            )
            count = _incoming_count(con, several=len(names) > 1)
            for table in TABLES:
                con.execute(f"DELETE FROM {table} WHERE run_id IN (SELECT run_id FROM _incoming)")
            for table in TABLES:
                files = [f / FILES[table] for f in folders if (f / FILES[table]).is_file()]
                if files:
                    _insert(con, table, files, COLUMNS[table])
            con.execute("DROP TABLE _incoming")
            con.execute("DELETE FROM ingested_folders WHERE folder IN (SELECT unnest(?::VARCHAR[]))", [names])
            con.execute("INSERT INTO ingested_folders SELECT unnest(?::VARCHAR[]), now()", [names])
        except BaseException:
            con.rollback()
            raise
        con.commit()
        return int(count)

    def _clean_staging(self) -> None:
        """Remove staging folders left by writers that died (older than an hour)."""
        staging = self.runs_dir / _STAGING
        if not staging.is_dir():
            return
        cutoff = time.time() - _STALE_STAGING_S
        for entry in os.scandir(staging):
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    shutil.rmtree(entry.path, ignore_errors=True)


def _incoming_count(con: duckdb.DuckDBPyConnection, *, several: bool) -> int:
    """How many runs are being merged; several folders sharing a run id must go one by one."""
    # fetchall, not fetchone: DuckDB 2.0 refuses register() while a result is unfinished
    ((count, distinct),) = con.execute("SELECT count(*), count(DISTINCT run_id) FROM _incoming").fetchall()
    if count != distinct and several:
        raise _OneByOne(f"{count - distinct} run ids repeat across folders")
    return int(count)


def _insert(
    con: duckdb.DuckDBPyConnection, table: str, files: list[Path], columns: tuple[tuple[str, str], ...]
) -> None:
    """INSERT ... SELECT from Parquet, taking the columns both sides know (older or newer folders).

    A column renamed since (``RENAMED``) is read under its old name from folders written before.
    """
    source = f"read_parquet({_sql_list(files)}, union_by_name=true)"
    present = {str(r[0]) for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
    targets, values = [], []
    for name, _ in columns:
        old = RENAMED.get(name)
        sources = [f'"{n}"' for n in (name, old) if n is not None and n in present]
        if sources:
            targets.append(f'"{name}"')
            values.append(sources[0] if len(sources) == 1 else f"coalesce({', '.join(sources)})")
    con.execute(f"INSERT INTO {table} ({', '.join(targets)}) SELECT {', '.join(values)} FROM {source}")


def _sql_list(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
