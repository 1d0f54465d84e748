"""The shared store: a DuckLake whose catalog is a PostgreSQL database, for a fleet of runners.

The setting ``store = "ducklake:postgres:dbname=... host=... user=... data_path=/shared/lake/"``
(:mod:`harness.store.location`) selects it. Same tables, columns, records and queries as the local
store (:mod:`harness.store.queries` runs unchanged after ``USE lake``); no Parquet staging folders
and no flock: each save is one DuckLake transaction, so one snapshot, all or nothing, and a writer
killed at any moment leaves nothing half-visible.

Concurrency (why, measured with several writer processes: docs/fleet.md):

* every write, and the first open that may create the catalog, holds a PostgreSQL advisory lock
  (``pg_try_advisory_xact_lock`` in a transaction on a second, plain postgres attachment of the
  catalog database): writers queue instead of colliding at commit, and it makes replacing a run (DELETE + INSERT) safe.
  A killed writer's PostgreSQL session ends and takes the lock with it;
* every write is still retried, with jittered backoff, on the errors a fresh attempt gets past
  (transaction conflicts, catalog-creation races, serialisation failures), up to a deadline;
* the schema version is checked on open and again inside every save: a lake migrated by a newer
  dbperf meanwhile is refused with a message saying to upgrade.

Small saves are kept inside the catalog (data inlining, up to 200 rows per table); ``maintain``
(``dbperf store maintain``) moves them to Parquet, merges small files and expires old snapshots.
"""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import duckdb
import pyarrow as pa

from harness.errors import StoreError
from harness.store import lakeconn
from harness.store.location import LakeLocation
from harness.store.result_store import ResultStore
from harness.store.rows import COLUMNS, TABLES
from harness.store.schema import MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)
T = TypeVar("T")

ALIAS = "lake"
_LOCK_ALIAS = "lake_lock"
_LOCK_KEY = 0x64627066  # "dbpf"

#: Errors (lower case) that a fresh attempt of the whole transaction can get past.
RETRYABLE = (
    "transaction conflict",  # a logical conflict DuckLake found at commit
    "duplicate key value",  # two processes creating the catalog (or the same snapshot id) at once
    "exceeded the maximum retry count",  # DuckLake's own snapshot-id retries ran out
    "could not serialize access",
    "deadlock detected",
    "has been created by another transaction",
    'relation "ducklake_',  # catalog creation race: '... "ducklake_metadata" already exists'
)


def is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.Error) and any(s in str(exc).lower() for s in RETRYABLE)


def _create(table: str) -> str:
    body = ", ".join(f'"{name}" {kind}' for name, kind in COLUMNS[table])
    return f"CREATE TABLE IF NOT EXISTS {table} ({body})"


class LakeStore(ResultStore):
    """Results of every run of a fleet, in a DuckLake on PostgreSQL (see the module docstring)."""

    def __init__(self, where: LakeLocation, *, deadline_s: float = 600.0, max_attempts: int = 60) -> None:
        self.where = where
        self.deadline_s = deadline_s
        self.max_attempts = max_attempts
        self.retries = 0  # retried attempts, for tests and the benchmark
        self._con: duckdb.DuckDBPyConnection | None = None
        self._lock: duckdb.DuckDBPyConnection | None = None
        self._locked = False
        self._retry(self._open, what="open the lake")

    @property
    def location(self) -> str:
        return str(self.where)

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        for con in (self._lock, self._con):
            if con is not None:
                with contextlib.suppress(duckdb.Error):
                    con.close()
        self._con = self._lock = None

    def __enter__(self) -> LakeStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The connection, with the lake attached as the default catalog (``USE lake``)."""
        if self._con is None:
            raise StoreError(f"the store {self.where} is closed")
        return self._con

    def _open(self) -> None:
        self.close()  # a failed attempt may have left a half-attached connection
        con = lakeconn.connect(self.where)
        try:
            con.execute(lakeconn.lock_attach_sql(self.where, _LOCK_ALIAS))
            self._lock = con.cursor()
            self._con = con
            with self._write_lock():  # so creating the catalog and the tables happens once
                con.execute(lakeconn.attach_sql(self.where, ALIAS))
                con.execute(f"USE {ALIAS}")
                self._ensure_schema()
        except BaseException:
            self.close()
            raise

    def _ensure_schema(self) -> None:
        if "schema_version" not in self._tables():
            with self._plain_transaction() as con:
                tables = self._tables()  # again, in this snapshot: another runner may have made them
                if "schema_version" not in tables:
                    if tables & set(TABLES):
                        raise StoreError(
                            f"the lake {self.where} has tables {', '.join(sorted(tables))} but no schema_version: "
                            "it is not a dbperf store; point the `store` setting at another catalog database"
                        )
                    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                    for table in TABLES:
                        con.execute(_create(table))
                    con.execute(f"INSERT INTO schema_version VALUES ({SCHEMA_VERSION})")
        version = self._version()
        self._refuse_newer(version)
        while version < SCHEMA_VERSION:  # the local store's migrations, unqualified, run in the lake too
            with self._plain_transaction() as con:
                version = self._version()
                if version < SCHEMA_VERSION:
                    for statement in MIGRATIONS[version]:
                        con.execute(statement)
                    con.execute(f"UPDATE schema_version SET version = {int(version) + 1}")
            version = self._version()

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the lake {self.where} is at store schema version {version}, this dbperf knows up to "
                f"{SCHEMA_VERSION}: upgrade dbperf on this runner (pip install -U dbperf)"
            )

    def _version(self) -> int:
        ((version,),) = self.con.execute("SELECT max(version) FROM schema_version").fetchall()
        if version is None:
            raise StoreError(f"the lake {self.where}: its schema_version table is empty; the store is damaged")
        return int(version)

    def _tables(self) -> set[str]:
        rows = self.con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND table_schema = 'main'",
            [ALIAS],
        ).fetchall()
        return {str(r[0]) for r in rows}

    # -- transactions, the writers' lock and retries -------------------------------------------

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        """Hold the fleet's advisory lock (in a PostgreSQL transaction on the lock connection)."""
        lock = self._lock
        if lock is None or self._locked:
            yield
            return
        sql = f"SELECT * FROM postgres_query('{_LOCK_ALIAS}', 'SELECT pg_try_advisory_xact_lock({_LOCK_KEY})')"
        deadline = time.monotonic() + self.deadline_s
        delay = 0.005
        while True:
            lock.execute("BEGIN TRANSACTION")
            if lock.execute(sql).fetchall()[0][0]:
                break
            lock.execute("ROLLBACK")
            if time.monotonic() > deadline:
                raise StoreError(
                    f"the lake {self.where} stayed locked by other writers for {self.deadline_s:g} s: "
                    "check for a stuck dbperf process (pg_stat_activity) and try again"
                )
            time.sleep(delay * random.uniform(0.5, 1.0))  # noqa: S311 - jitter, not security
            delay = min(delay * 1.5, 0.2)
        self._locked = True
        try:
            yield
        finally:
            self._locked = False
            with contextlib.suppress(duckdb.Error):
                lock.execute("ROLLBACK")  # ends the PostgreSQL transaction, which frees the lock

    @contextlib.contextmanager
    def _plain_transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            yield con
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        try:
            con.execute("COMMIT")  # DuckLake writes its snapshot here; conflicts surface here
        except duckdb.Error:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise

    def write(self, action: Callable[[duckdb.DuckDBPyConnection], T], *, what: str) -> T:
        """Run ``action`` in one lake transaction under the writers' lock, retried until it commits."""

        def attempt() -> T:
            with self._write_lock(), self._plain_transaction() as con:
                self._refuse_newer(self._version())  # a newer dbperf may have migrated the lake since
                return action(con)

        return self._retry(attempt, what=what)

    def _retry(self, action: Callable[[], T], *, what: str) -> T:
        deadline = time.monotonic() + self.deadline_s
        for attempt in range(1, self.max_attempts + 1):
            try:
                return action()
            except duckdb.Error as exc:
                if not is_retryable(exc) or attempt == self.max_attempts or time.monotonic() > deadline:
                    text = " ".join(str(exc).split())[:400]
                    if "password" in text:
                        text += " (libpq reads the password from PGPASSWORD, or ~/.pgpass / PGPASSFILE)"
                    raise StoreError(f"cannot {what} in {self.where}: {text}") from exc
                self.retries += 1
                delay = min(2.0, 0.02 * 1.6 ** (attempt - 1)) * random.uniform(0.5, 1.0)  # noqa: S311
                log.debug("lake: %s: retry %d in %.3f s: %s", what, attempt, delay, exc)
                time.sleep(delay)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One read transaction: every query inside sees the same snapshot."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            yield con
        except duckdb.Error as exc:
            raise StoreError(f"cannot read {self.where}: {' '.join(str(exc).split())[:400]}") from exc
        finally:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")

    # -- writing -------------------------------------------------------------------------------

    def save_tables(self, tables: dict[str, pa.Table]) -> None:
        """Replace-or-insert the runs of these Arrow tables (one per store table), in one snapshot.

        Every call into DuckDB here is an ``execute``, which lets go of Python's GIL while it waits: a
        catalog that stops answering then blocks only this thread, so a caller can give up on it by the
        clock (``Saver``). ``register`` would hold the GIL while it binds against the catalog."""
        run_ids = tables["runs"].column("run_id").to_pylist()

        def write(con: duckdb.DuckDBPyConnection) -> None:
            ((existing,),) = con.execute(
                "SELECT count(*) FROM runs WHERE list_contains(?, run_id)", [run_ids]
            ).fetchall()
            if existing:  # only then: a DELETE would conflict with every concurrent insert
                for table in TABLES:
                    con.execute(f"DELETE FROM {table} WHERE list_contains(?, run_id)", [run_ids])
            for table in TABLES:
                incoming_rows = tables[table]  # read by name: DuckDB scans this frame's local variables
                if incoming_rows.num_rows:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")

        what = f"save {tables['runs'].num_rows} run(s)"
        try:
            self.write(write, what=what)
        except duckdb.Error as exc:
            raise StoreError(f"cannot {what} in {self.where}: {' '.join(str(exc).split())[:400]}") from exc

    def ingest_pending(self) -> int:
        """Nothing is ever pending in a lake: a save is queryable once it returns."""
        return 0

    # -- maintenance ---------------------------------------------------------------------------

    def maintain(self, *, keep_snapshots: str = "7 days") -> dict[str, float]:
        """Move inlined rows to Parquet, merge small files, expire old snapshots, delete unused files.

        Returns the seconds each step took. Safe while runners write: each step is its own retried
        transaction, under the writers' lock.
        """
        steps = {
            "flush inlined rows": f"ducklake_flush_inlined_data('{ALIAS}')",
            "merge small files": f"ducklake_merge_adjacent_files('{ALIAS}')",
            "expire snapshots": (
                f"ducklake_expire_snapshots('{ALIAS}', "
                f"older_than => now() - INTERVAL '{lakeconn.quote(keep_snapshots)}')"
            ),
            "delete unused files": f"ducklake_cleanup_old_files('{ALIAS}', cleanup_all => true)",
            "delete orphaned files": f"ducklake_delete_orphaned_files('{ALIAS}', cleanup_all => true)",
        }
        timings: dict[str, float] = {}
        for name, call in steps.items():
            start = time.perf_counter()
            # count(*): the rows hold TIMESTAMPTZ values, which duckdb 1.5 turns into Python only with pytz
            self._retry(lambda call=call: self._step(call), what=name)  # type: ignore[misc]
            timings[name] = time.perf_counter() - start
        return timings

    def delete_orphaned_files(self) -> int:
        """Delete the data path's Parquet files no snapshot references (a writer killed before its commit left
        them: ``store migrate`` does this first); returns how many. Under the writers' lock, which every save
        holds while it writes its files, so a file no snapshot references is no save's in flight."""

        def step() -> int:
            with self._write_lock():
                call = f"ducklake_delete_orphaned_files('{ALIAS}', cleanup_all => true)"
                ((count,),) = self.con.execute(f"SELECT count(*) FROM {call}").fetchall()
            return int(count)

        return self._retry(step, what="delete orphaned files")

    def _step(self, call: str) -> None:
        with self._write_lock():
            self.con.execute(f"SELECT count(*) FROM {call}").fetchall()
