"""The shape of the result store (see :mod:`harness.store.local`): columns, DDL, migrations, row mapping.

A new database is created by running :data:`DDL_V1` and then every migration in turn, so the frozen
version-1 DDL plus :data:`MIGRATIONS` is the single source of truth for the DuckDB schema;
:data:`RUN_COLUMNS` (used for the Parquet files and the Arrow tables) must describe the result, which
``tests/unit/test_store.py`` checks.

To change the schema: append to :data:`MIGRATIONS` (never edit an existing entry or :data:`DDL_V1`),
bump :data:`SCHEMA_VERSION` and update :data:`RUN_COLUMNS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from harness.errors import StoreError
from harness.model import IntervalSample, LatencyBucket, Metrics, Probes, RunResult, Testbed, Totals

SCHEMA_VERSION = 3

_ARROW_TYPES: dict[str, pa.DataType] = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
}

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

#: The columns of :meth:`harness.store.local.Store.metrics_table`, in order (metrics come after these).
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
)
METRIC_COLUMNS: tuple[str, ...] = (
    "qps",
    "tps",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "p999_ms",
    "errors_per_s",
    "reconnects_per_s",
    "cpu_per_txn",
    "instr_per_txn",
)

_V2_ADDED = ("group_id", "label", "server_cpuset", "client_cpuset", "cpu_per_txn", "instr_per_txn")
#: Columns renamed since version 1 (current name -> the name in older files and Parquet folders).
RENAMED: dict[str, str] = {"server": "target"}  # version 3: one name, "server", for a server definition


def _as_in_v1(columns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((RENAMED.get(name, name), kind) for name, kind in columns if name not in _V2_ADDED)


def arrow_schema(columns: tuple[tuple[str, str], ...]) -> pa.Schema:
    """The pyarrow schema of a column list (TIMESTAMPTZ becomes microseconds in UTC)."""
    return pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in columns])


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
    2: tuple(f'ALTER TABLE runs RENAME COLUMN "{old}" TO "{new}"' for new, old in RENAMED.items()),
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


# -- mapping between records and rows ------------------------------------------------------------

RUN_SCHEMA = arrow_schema(RUN_COLUMNS)
INTERVAL_SCHEMA = arrow_schema(INTERVAL_COLUMNS)
HISTOGRAM_SCHEMA = arrow_schema(HISTOGRAM_COLUMNS)
_TOTALS_FIELDS = tuple(f.name for f in fields(Totals))
_METRIC_FIELDS = tuple(f.name for f in fields(Metrics))
INTERVAL_FIELDS = tuple(f.name for f in fields(IntervalSample))
BUCKET_FIELDS = tuple(f.name for f in fields(LatencyBucket))
_TEXT_FIELDS = (
    *("server", "flavour", "provider", "server_version", "config_hash", "scenario", "scenario_hash"),
    *("profile", "script", "git_sha", "failure", "source", "server_cpuset", "client_cpuset"),
    *("group_id", "label"),
)


def _utc(value: datetime) -> datetime:
    """Timestamps are stored in UTC; a naive one is taken to be UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _once(memo: dict[int, str], obj: object, make: Callable[[Any], str]) -> str:
    """``make(obj)``, computed once per object: batches share testbeds and variable mappings."""
    key = id(obj)  # the objects outlive the memo (the runs hold them)
    if key not in memo:
        memo[key] = make(obj)
    return memo[key]


def _json(mapping: Mapping[str, object]) -> str:
    return json.dumps(dict(mapping), sort_keys=True)


def _run_row(run: RunResult, memo: dict[int, str]) -> dict[str, object]:
    tb, probes = run.testbed, run.probes
    row: dict[str, object] = {name: getattr(run, name) for name in _TEXT_FIELDS}
    row.update(
        run_id=run.run_id,
        started_at=_utc(run.started_at),
        finished_at=_utc(run.finished_at),
        status=run.status,
        threads=run.threads,
        repetition=run.repetition,
        warmup_s=run.warmup_s,
        time_s=run.time_s,
        variables=_once(memo, run.variables, _json),
        options=_once(memo, run.options, _json),
        testbed_cpu_model=tb.cpu_model,
        testbed_cores=tb.cores,
        testbed_memory_gb=tb.memory_gb,
        testbed_kernel=tb.kernel,
        testbed_disk=tb.disk,
        testbed_sysbench_version=tb.sysbench_version,
        testbed_container_engine=tb.container_engine,
        testbed_hostname=tb.hostname,
        testbed_fingerprint=_once(memo, tb, lambda t: t.fingerprint),
        probe_server_cpu_s=probes.server_cpu_s,
        probe_instructions=probes.instructions,
        probe_instructions_note=probes.instructions_note,
        status_deltas=_once(memo, probes.status_deltas, _json),
    )
    for name in _TOTALS_FIELDS:
        row[f"totals_{name}"] = None if run.totals is None else getattr(run.totals, name)
    for name in _METRIC_FIELDS:
        row[name] = getattr(run.metrics, name)
    return row


def arrow_tables(runs: Sequence[RunResult]) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The rows of runs, intervals and histogram for these runs, as Arrow tables."""
    memo: dict[int, str] = {}
    rows = [_run_row(run, memo) for run in runs]
    run_table = pa.table({name: [row[name] for row in rows] for name in RUN_SCHEMA.names}, schema=RUN_SCHEMA)
    intervals: dict[str, list[object]] = {name: [] for name in INTERVAL_SCHEMA.names}
    buckets: dict[str, list[object]] = {name: [] for name in HISTOGRAM_SCHEMA.names}
    for run in runs:
        for seq, sample in enumerate(run.intervals):
            intervals["run_id"].append(run.run_id)
            intervals["seq"].append(seq)
            for name in INTERVAL_FIELDS:
                intervals[name].append(getattr(sample, name))
        for bucket in run.histogram:
            buckets["run_id"].append(run.run_id)
            for name in BUCKET_FIELDS:
                buckets[name].append(getattr(bucket, name))
    return (
        run_table,
        pa.table(intervals, schema=INTERVAL_SCHEMA),
        pa.table(buckets, schema=HISTOGRAM_SCHEMA),
    )


def run_from_row(
    row: dict[str, Any], intervals: Sequence[IntervalSample], histogram: Sequence[LatencyBucket]
) -> RunResult:
    """A RunResult back from a ``runs`` row (as a dict) and its samples."""
    totals = None
    if row["totals_time_s"] is not None:
        totals = Totals(**{name: row[f"totals_{name}"] for name in _TOTALS_FIELDS})
    return RunResult(
        run_id=row["run_id"],
        started_at=row["started_at"].astimezone(UTC),
        finished_at=row["finished_at"].astimezone(UTC),
        status=row["status"],
        threads=row["threads"],
        repetition=row["repetition"],
        warmup_s=row["warmup_s"],
        time_s=row["time_s"],
        testbed=Testbed(
            cpu_model=row["testbed_cpu_model"],
            cores=row["testbed_cores"],
            memory_gb=row["testbed_memory_gb"],
            kernel=row["testbed_kernel"],
            disk=row["testbed_disk"],
            sysbench_version=row["testbed_sysbench_version"],
            container_engine=row["testbed_container_engine"],
            hostname=row["testbed_hostname"] or "",
        ),
        variables=json.loads(row["variables"] or "{}"),
        options=json.loads(row["options"] or "{}"),
        intervals=tuple(intervals),
        histogram=tuple(histogram),
        totals=totals,
        probes=Probes(
            server_cpu_s=row["probe_server_cpu_s"],
            instructions=row["probe_instructions"],
            instructions_note=row["probe_instructions_note"] or "",
            status_deltas=json.loads(row["status_deltas"] or "{}"),
        ),
        metrics=Metrics(**{name: row.get(name) for name in _METRIC_FIELDS}),
        **{name: row.get(name) or "" for name in _TEXT_FIELDS},
    )
