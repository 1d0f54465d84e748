"""The shape of the result store (see :mod:`harness.store.duckdb_file`): columns, DDL, migrations, row mapping.

A new database is created by running :data:`DDL_V1` and then every migration in turn, so the frozen
version-1 DDL plus :data:`MIGRATIONS` is the single source of truth for the DuckDB schema;
:data:`RUN_COLUMNS` (used for the Parquet files and the Arrow tables) must describe the result, which
``tests/unit/test_store.py`` checks.

To change the schema: append to :data:`MIGRATIONS` (never edit an existing entry or :data:`DDL_V1`),
bump :data:`SCHEMA_VERSION` and update :data:`RUN_COLUMNS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from harness.errors import StoreError
from harness.model.metrics import STORE_COLUMNS

if TYPE_CHECKING:
    import pyarrow as pa

SCHEMA_VERSION = 8

#: Every column of ``runs`` in the current version, with its DuckDB type.
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("started_at", "TIMESTAMPTZ"),
    ("finished_at", "TIMESTAMPTZ"),
    ("status", "VARCHAR"),
    ("failure", "VARCHAR"),
    ("server", "VARCHAR"),
    ("flavour", "VARCHAR"),
    ("provider", "VARCHAR"),
    ("server_version", "VARCHAR"),
    ("config_hash", "VARCHAR"),
    ("scenario", "VARCHAR"),
    ("scenario_hash", "VARCHAR"),
    ("profile", "VARCHAR"),
    ("script", "VARCHAR"),
    ("threads", "INTEGER"),
    ("repetition", "INTEGER"),
    ("warmup_s", "DOUBLE"),
    ("time_s", "DOUBLE"),
    ("git_sha", "VARCHAR"),
    ("source", "VARCHAR"),
    ("variables", "VARCHAR"),  # JSON object text
    ("options", "VARCHAR"),  # JSON object text
    ("testbed_cpu_model", "VARCHAR"),
    ("testbed_cores", "INTEGER"),
    ("testbed_memory_gb", "DOUBLE"),
    ("testbed_kernel", "VARCHAR"),
    ("testbed_disk", "VARCHAR"),
    ("testbed_sysbench_version", "VARCHAR"),
    ("testbed_container_engine", "VARCHAR"),
    ("testbed_hostname", "VARCHAR"),
    ("testbed_fingerprint", "VARCHAR"),
    ("totals_time_s", "DOUBLE"),  # NULL when the run has no totals
    ("totals_events", "BIGINT"),
    ("totals_reads", "BIGINT"),
    ("totals_writes", "BIGINT"),
    ("totals_other", "BIGINT"),
    ("totals_errors", "BIGINT"),
    ("totals_reconnects", "BIGINT"),
    ("totals_latency_min_ms", "DOUBLE"),
    ("totals_latency_avg_ms", "DOUBLE"),
    ("totals_latency_max_ms", "DOUBLE"),
    ("totals_latency_pct_ms", "DOUBLE"),
    ("probe_server_cpu_s", "DOUBLE"),
    ("probe_instructions", "DOUBLE"),
    ("probe_instructions_note", "VARCHAR"),
    ("status_deltas", "VARCHAR"),  # JSON object text
    ("qps", "DOUBLE"),
    ("tps", "DOUBLE"),
    ("p50_ms", "DOUBLE"),
    ("p95_ms", "DOUBLE"),
    ("p99_ms", "DOUBLE"),
    ("p999_ms", "DOUBLE"),
    ("errors_per_s", "DOUBLE"),
    ("reconnects_per_s", "DOUBLE"),
    # added in version 2
    ("group_id", "VARCHAR"),
    ("label", "VARCHAR"),
    ("server_cpuset", "VARCHAR"),
    ("client_cpuset", "VARCHAR"),
    ("cpu_per_txn", "DOUBLE"),
    ("instr_per_txn", "DOUBLE"),
    # added in version 3 (and "target" renamed "server")
    ("kind", "VARCHAR"),  # "time" or "cost"; NULL in older rows means "time"
    ("backend", "VARCHAR"),
    ("build_id", "VARCHAR"),
    ("requested_hash", "VARCHAR"),
    ("tool", "VARCHAR"),
    ("arch", "VARCHAR"),
    ("notes", "VARCHAR"),  # JSON list text
    ("instr_per_query", "DOUBLE"),
    # added in version 4
    ("testbed_class", "VARCHAR"),  # the hardware class (a fleet's runner label); NULL or "" = none
    # --- migration block: issue 20 work vector (version 6) ---
    ("syscalls", "VARCHAR"),  # JSON object: system calls by kind + total (cost runs); NULL otherwise
    # --- end of the issue 20 block ---
    # added in version 8 (issue 38): the window's simulated cache misses by callgrind event (cost runs)
    ("cache_misses", "VARCHAR"),  # JSON object: {"I1mr": n, ...}; NULL otherwise
)

INTERVAL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("seq", "INTEGER"),
    ("t_s", "DOUBLE"),
    ("interval_s", "DOUBLE"),
    ("threads_running", "INTEGER"),
    ("events", "BIGINT"),
    ("reads", "BIGINT"),
    ("writes", "BIGINT"),
    ("other", "BIGINT"),
    ("errors", "BIGINT"),
    ("reconnects", "BIGINT"),
    ("latency_pct_ms", "DOUBLE"),
    ("warmup", "BOOLEAN"),
)

HISTOGRAM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("value_ms", "DOUBLE"),
    ("count", "BIGINT"),
)

#: A cost run's profile: every function with a cost (version 3).
FUNCTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("self_ir", "BIGINT"),
    ("inclusive_ir", "BIGINT"),
    ("calls", "BIGINT"),
)

#: A cost run's raw callgrind dump, gzipped (version 3).
PROFILE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("total_ir", "BIGINT"),
    ("dump", "BLOB"),
)

# --- per-operation statistics (version 5, issue 22) -------------------------------------------------
#: One row per operation type of a run that reports them (the per-operation protocol): counts over the
#: measured window, the window's seconds, and the merged latency histogram as JSON ``[[value_ms, count]]``.
OPERATION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("op_type", "VARCHAR"),
    ("count", "BIGINT"),
    ("errors", "BIGINT"),
    ("retries", "BIGINT"),
    ("latency_sum_ms", "DOUBLE"),
    ("seconds", "DOUBLE"),
    ("ops_per_s", "DOUBLE"),
    ("p50_ms", "DOUBLE"),
    ("p95_ms", "DOUBLE"),
    ("p99_ms", "DOUBLE"),
    ("histogram", "VARCHAR"),
    ("misses", "BIGINT"),  # version 7 (issue 37): reads that found no row; NULL in older rows
)
# --- end per-operation statistics ---------------------------------------------------------------------

#: The columns of :meth:`harness.store.duckdb_file.Store.metrics_table`, in order (metrics come after these).
METRICS_TABLE_KEYS: tuple[str, ...] = (
    "run_id",
    "started_at",
    "status",
    "failure",
    "source",
    "server",
    "flavour",
    "provider",
    "server_version",
    "config_hash",
    "scenario",
    "scenario_hash",
    "profile",
    "threads",
    "repetition",
    "git_sha",
    "testbed_fingerprint",
    "group_id",
    "label",
    "kind",
    "backend",
    "testbed_cpu_model",  # for the trend site's testbed labels
    "testbed_cores",
    "testbed_class",
    "notes",  # JSON list text: the trend site draws runs whose notes say one-off or uncommitted tree apart
    # the trend site's work-vector chart (harness.store.trend_queries.work_points): counts per transaction
    "totals_events",
    "status_deltas",  # JSON object text: the kept status counters' change over the measured window
    "syscalls",  # JSON object text (cost runs)
    "cache_misses",  # JSON object text (cost runs since version 8)
)
#: The metric columns, after those: every catalogue metric with a store column (harness.model.metrics);
#: a new one also needs its migration, and its place in :data:`RUN_COLUMNS`.
METRIC_COLUMNS: tuple[str, ...] = STORE_COLUMNS

_V2_ADDED = ("group_id", "label", "server_cpuset", "client_cpuset", "cpu_per_txn", "instr_per_txn")
_V3_ADDED = ("kind", "backend", "build_id", "requested_hash", "tool", "arch", "notes", "instr_per_query")
_V4_ADDED = ("testbed_class",)
_V6_ADDED = ("syscalls",)  # issue 20 work vector (version 6)
_V8_ADDED = ("cache_misses",)  # issue 38: simulated cache misses (version 8)
#: Columns renamed since version 1 (current name -> the name in older files and Parquet folders).
RENAMED: dict[str, str] = {"server": "target"}  # version 3: one name, "server", for a server definition


def _as_in_v1(columns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((RENAMED.get(name, name), kind) for name, kind in columns if name not in _V2_ADDED)


def arrow_schema(columns: tuple[tuple[str, str], ...]) -> pa.Schema:
    """The pyarrow schema of a column list (TIMESTAMPTZ becomes microseconds in UTC).

    pyarrow is imported here, when a run is written or copied, not when the store is opened or read.
    """
    import pyarrow as pa

    types: dict[str, pa.DataType] = {
        "VARCHAR": pa.string(),
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
        "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(),
        "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
        "BLOB": pa.binary(),
    }
    return pa.schema([(name, types[kind]) for name, kind in columns])


def _create(table: str, columns: tuple[tuple[str, str], ...]) -> str:
    body = ",\n    ".join(f'"{name}" {kind}' for name, kind in columns)
    return f"CREATE TABLE {table} (\n    {body}\n)"


#: Version 1, frozen: do not edit (old files were created with exactly this).
DDL_V1: tuple[str, ...] = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    _create("runs", _as_in_v1(RUN_COLUMNS[: RUN_COLUMNS.index(("group_id", "VARCHAR"))])),
    _create("intervals", INTERVAL_COLUMNS),
    _create("histogram", HISTOGRAM_COLUMNS),
    # which Parquet run folders have been merged into this file (folder name beside the file)
    "CREATE TABLE ingested_folders (folder VARCHAR NOT NULL, ingested_at TIMESTAMPTZ NOT NULL)",
    "INSERT INTO schema_version VALUES (1)",
)

#: ``MIGRATIONS[n]`` takes a version-``n`` database to version ``n + 1``.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: tuple(
        f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {name} {kind}" for name, kind in RUN_COLUMNS if name in _V2_ADDED
    ),
    2: (
        *(f'ALTER TABLE runs RENAME COLUMN "{old}" TO "{new}"' for new, old in RENAMED.items()),
        *(
            f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {name} {kind}"
            for name, kind in RUN_COLUMNS
            if name in _V3_ADDED
        ),
        _create("functions", FUNCTION_COLUMNS),
        _create("profiles", PROFILE_COLUMNS),
    ),
    3: tuple(
        f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {name} {kind}" for name, kind in RUN_COLUMNS if name in _V4_ADDED
    ),
    # --- per-operation statistics (issue 22): one new table, nothing else changes ---
    4: (_create("operations", OPERATION_COLUMNS),),
    # --- end per-operation statistics ---
    # --- migration block: issue 20 work vector ---
    5: tuple(
        f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {name} {kind}" for name, kind in RUN_COLUMNS if name in _V6_ADDED
    ),
    # --- end of the issue 20 block ---
    # --- issue 37: per-operation read misses ---
    6: ("ALTER TABLE operations ADD COLUMN IF NOT EXISTS misses BIGINT",),
    # --- end of the issue 37 block ---
    7: tuple(
        f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {name} {kind}" for name, kind in RUN_COLUMNS if name in _V8_ADDED
    ),
}


def ensure_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Create the schema of a new store, or migrate an older one to :data:`SCHEMA_VERSION`."""
    tables = {
        str(row[0])
        for row in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    if "schema_version" not in tables:
        if tables:
            raise StoreError(
                f"{path} is a DuckDB database but not a dbperf store (it has tables "
                f"{', '.join(sorted(tables))}): point the `store` setting at another file"
            )
        _transaction(con, DDL_V1)
    # fetchall, not fetchone: DuckDB 2.0 refuses register() while a result is unfinished
    ((version,),) = con.execute("SELECT max(version) FROM schema_version").fetchall()
    if version is None:
        raise StoreError(f"{path}: the schema_version table is empty; the store is damaged")
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer dbperf (store schema version {version}, this dbperf "
            f"knows up to {SCHEMA_VERSION}): upgrade dbperf to read it"
        )
    while version < SCHEMA_VERSION:
        _transaction(con, (*MIGRATIONS[version], f"UPDATE schema_version SET version = {int(version) + 1}"))
        version += 1


def _transaction(con: duckdb.DuckDBPyConnection, statements: tuple[str, ...]) -> None:
    con.begin()
    try:
        for statement in statements:
            con.execute(statement)
    except BaseException:
        con.rollback()
        raise
    con.commit()
