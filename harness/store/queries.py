"""The store's queries, shared by both backends: the same SQL runs on the local DuckDB file and on the lake.

Every function takes a DuckDB connection whose default catalog holds the store's tables (the local
file, or the lake after ``USE lake``), so table names are never qualified here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING, Any

import duckdb

from harness.model import CostProfile, IntervalSample, LatencyBucket, OperationStats, RunResult
from harness.store.rows import (
    BUCKET_FIELDS,
    COLUMNS,
    INTERVAL_FIELDS,
    TABLES,
    operation_from_row,
    profile_from_rows,
    run_from_row,
)
from harness.store.schema import METRIC_COLUMNS, METRICS_TABLE_KEYS

if TYPE_CHECKING:
    import pyarrow as pa

#: The filters of :meth:`runs` and :meth:`metrics_table`, in their keyword order.
FILTERS = ("scenario", "server", "threads", "status", "group_id", "source")
METRICS_COLUMNS_SQL = ", ".join(f'"{c}"' for c in (*METRICS_TABLE_KEYS, *METRIC_COLUMNS))


@dataclass
class Samples:
    """Intervals and histogram buckets of some runs, by run id."""

    intervals: dict[str, list[IntervalSample]] = field(default_factory=dict)
    histograms: dict[str, list[LatencyBucket]] = field(default_factory=dict)
    operations: dict[str, list[OperationStats]] = field(default_factory=dict)

    def run(self, row: dict[str, Any], profile: CostProfile | None) -> RunResult:
        run_id = row["run_id"]
        return run_from_row(
            row,
            self.intervals.get(run_id, ()),
            self.histograms.get(run_id, ()),
            profile,
            self.operations.get(run_id, ()),
        )


def table(con: duckdb.DuckDBPyConnection, sql: str, params: object = None) -> pa.Table:
    """The result as Arrow: a relation, not execute() (Arrow from a DB-API result costs an extra copy)."""
    return con.sql(sql, params=params).to_arrow_table()


def records(con: duckdb.DuckDBPyConnection, sql: str, params: object = None) -> list[dict[str, Any]]:
    """The result as one dict per row, read without Arrow (``dbperf runs`` starts without pyarrow or numpy).

    Timestamps with a time zone are read as UTC: DuckDB's Python conversion of TIMESTAMPTZ needs pytz,
    so they are converted to naive UTC in SQL and given back their zone here.
    """
    relation = con.sql(sql, params=params)
    kinds = zip(relation.columns, relation.types, strict=True)
    zoned = {name for name, kind in kinds if str(kind) == "TIMESTAMP WITH TIME ZONE"}
    if zoned:
        relation = relation.project(
            ", ".join(f'timezone(\'UTC\', "{c}") AS "{c}"' if c in zoned else f'"{c}"' for c in relation.columns)
        )
    names = relation.columns
    out = [dict(zip(names, row, strict=True)) for row in relation.fetchall()]
    for row in out:
        for name in zoned:
            if row[name] is not None:
                row[name] = row[name].replace(tzinfo=UTC)
    return out


def select(columns: str, filters: Mapping[str, object], limit: int | None) -> tuple[str, list[object]]:
    """``SELECT columns FROM runs`` with the given filters, newest first."""
    where = [(f'"{name}" = ?', value) for name, value in filters.items() if value is not None]
    sql = f"SELECT {columns} FROM runs"
    if where:
        sql += " WHERE " + " AND ".join(clause for clause, _ in where)
    sql += " ORDER BY started_at DESC, run_id DESC"
    if limit is not None:
        sql += f" LIMIT {max(int(limit), 0)}"
    return sql, [value for _, value in where]


def with_ids(con: duckdb.DuckDBPyConnection, run_ids: list[str], sql: str) -> list[dict[str, Any]]:
    """Rows of ``sql`` (a query over ``t`` with ``{ids}`` where the run-id condition goes) for these runs.

    One id is a literal comparison (pushed into Parquet scans and catalog queries), several a semi-join.
    """
    if len(run_ids) == 1:
        return records(con, sql.format(ids="t.run_id = ?"), [run_ids[0]])
    return records(con, sql.format(ids="t.run_id IN (SELECT unnest(?::VARCHAR[]))"), [run_ids])


def samples(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> Samples:
    out = Samples()
    if not run_ids:
        return out
    sql = "SELECT t.* FROM {table} t WHERE {{ids}} ORDER BY t.run_id, {order}"
    for row in with_ids(con, run_ids, sql.format(table="intervals", order="t.seq")):
        out.intervals.setdefault(row["run_id"], []).append(IntervalSample(**{k: row[k] for k in INTERVAL_FIELDS}))
    for row in with_ids(con, run_ids, sql.format(table="histogram", order="t.value_ms")):
        out.histograms.setdefault(row["run_id"], []).append(LatencyBucket(**{k: row[k] for k in BUCKET_FIELDS}))
    return out


def operations(con: duckdb.DuckDBPyConnection, run_ids: list[str], into: Samples) -> Samples:
    """The per-operation rows of these runs added to ``into`` (always read: a few rows per run, and the
    gate, reports and exports need them)."""
    if run_ids:
        sql = "SELECT t.* FROM operations t WHERE {ids} ORDER BY t.run_id, t.op_type"
        for row in with_ids(con, run_ids, sql):
            into.operations.setdefault(row["run_id"], []).append(operation_from_row(row))
    return into


def profiles(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, CostProfile]:
    """The cost profiles (functions by self cost, and the raw dump) of these runs, where they have one."""
    if not run_ids:
        return {}
    heads = with_ids(con, run_ids, "SELECT t.* FROM profiles t WHERE {ids}")
    if not heads:
        return {}
    functions: dict[str, list[dict[str, Any]]] = {}
    sql = "SELECT t.* FROM functions t WHERE {ids} ORDER BY t.run_id, t.self_ir DESC, t.name"
    for row in with_ids(con, [h["run_id"] for h in heads], sql):
        functions.setdefault(row["run_id"], []).append(row)
    return {h["run_id"]: profile_from_rows(h["total_ir"], h["dump"], functions.get(h["run_id"], [])) for h in heads}


def read_runs(
    con: duckdb.DuckDBPyConnection,
    filters: Mapping[str, object],
    limit: int | None,
    *,
    with_samples: bool,
    with_profiles: bool,
) -> list[RunResult]:
    """Runs matching the filters, newest first, with samples and cost profiles on request."""
    sql, params = select("*", filters, limit)
    rows = records(con, sql, params)
    ids = [row["run_id"] for row in rows]
    found = operations(con, ids, samples(con, ids) if with_samples else Samples())
    costs = profiles(con, ids) if with_profiles else {}
    return [found.run(row, costs.get(row["run_id"])) for row in rows]


def read_one(con: duckdb.DuckDBPyConnection, run_id: str) -> RunResult | None:
    """One run with its samples and cost profile, or None."""
    rows = records(con, "SELECT * FROM runs WHERE run_id = ?", [run_id])
    if not rows:
        return None
    return operations(con, [run_id], samples(con, [run_id])).run(rows[0], profiles(con, [run_id]).get(run_id))


def metrics(con: duckdb.DuckDBPyConnection, filters: Mapping[str, object], limit: int | None) -> pa.Table:
    """One row per run (newest first): identity columns and every metric."""
    sql, params = select(METRICS_COLUMNS_SQL, filters, limit)
    return table(con, sql, params)


def durations(con: duckdb.DuckDBPyConnection, hostname: str, limit: int) -> list[dict[str, Any]]:
    """The wall time of this machine's most recent successful runs (server start to result), newest first:
    server, scenario, kind, threads, profile, warmup_s, time_s, group_id, started (epoch seconds) and seconds."""
    sql = (
        "SELECT server, scenario, kind, threads, profile, warmup_s, time_s, group_id, "
        "epoch(started_at) AS started, epoch(finished_at) - epoch(started_at) AS seconds FROM runs "
        "WHERE status = 'ok' AND testbed_hostname = ? ORDER BY started_at DESC, run_id DESC "
        f"LIMIT {max(int(limit), 0)}"
    )
    return records(con, sql, [hostname])


def count(con: duckdb.DuckDBPyConnection) -> int:
    ((number,),) = con.execute("SELECT count(*) FROM runs").fetchall()
    return int(number)


def export(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None) -> dict[str, pa.Table]:
    """Every table's rows in the store's column order (of these runs, or all), for copies and checks."""
    import pyarrow as pa  # Arrow only for copies and checks, not for reading runs

    out: dict[str, pa.Table] = {}
    if run_ids is not None:
        con.register("_export_ids", pa.table({"run_id": pa.array(list(run_ids), pa.string())}))
    try:
        for name in TABLES:
            columns = ", ".join(f'"{c}"' for c, _ in COLUMNS[name])
            where = "" if run_ids is None else " WHERE run_id IN (SELECT run_id FROM _export_ids)"
            out[name] = table(con, f"SELECT {columns} FROM {name}{where}")
    finally:
        if run_ids is not None:
            con.unregister("_export_ids")
    return out
