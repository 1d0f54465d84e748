"""The work vector over time, for the trend site: counts per transaction of cost runs, per commit.

A cost run keeps its server counters (``status_deltas``), system calls (``syscalls``) and simulated cache
misses (``cache_misses``) over the measured window; :func:`harness.model.work.work_vector` turns them into
counts per transaction (fsyncs, page reads, rows read, handler calls, system calls by kind: docs/work-vector.md).
Here they are put in long form, one row per scenario x server x threads x testbed x commit x component, the
median of the repetitions, and only the components that are not 0 everywhere in their scenario, so the chart draws
what moved and what a transaction does, not a wall of zeros. Timing runs' counters are left out, like
their instructions: their windows include other work (docs/reports.md, "The trend site").
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from harness.model.work import WORK, work_vector
from harness.store.trend_queries import _connect

_COLUMNS = ("run_id", "totals_events", "status_deltas", "syscalls", "kind", "status")
#: Read when present: stores and Parquet folders written before version 8 lack it.
_OPTIONAL = ("cache_misses",)


def _per_run(table: pa.Table) -> pa.Table:
    """(run_id, component, value) of every ok cost run's work vector."""
    run_ids: list[str] = []
    names: list[str] = []
    values: list[float] = []
    columns = [*_COLUMNS, *(c for c in _OPTIONAL if c in table.column_names)]
    for row in table.select(columns).to_pylist():
        if row["kind"] != "cost" or row["status"] != "ok" or not row["totals_events"]:
            continue
        try:
            deltas = json.loads(row["status_deltas"] or "{}")
            calls = json.loads(row["syscalls"] or "{}")
            misses = json.loads(row.get("cache_misses") or "{}")
        except ValueError:
            continue
        for name, value in work_vector(int(row["totals_events"]), deltas, calls, misses).items():
            run_ids.append(str(row["run_id"]))
            names.append(name)
            values.append(float(value))
    return pa.table(
        {
            "run_id": pa.array(run_ids, pa.string()),
            "component": pa.array(names, pa.string()),
            "value": pa.array(values, pa.float64()),
        }
    )


def work_points(table: pa.Table) -> pa.Table:
    """Per scenario x server x threads x testbed x commit x component: the median count per transaction of
    the cost runs, with ``label`` (``fsync+fdatasync/txn``), ``line`` and ``at`` as the other trend charts
    have them; empty when the table has no cost run with a work vector."""
    if table.num_rows == 0 or any(c not in table.column_names for c in _COLUMNS):
        return pa.table({"scenario": pa.array([], pa.string())})
    per_run = _per_run(table)
    if per_run.num_rows == 0:
        return pa.table({"scenario": pa.array([], pa.string())})
    labels = pa.table(
        {
            "component": pa.array(list(WORK), pa.string()),
            "label": pa.array([w.label for w in WORK.values()], pa.string()),
            "order": pa.array(list(range(len(WORK))), pa.int32()),
        }
    )
    con: duckdb.DuckDBPyConnection = _connect(table)
    try:
        con.register("_work", per_run)
        con.register("_labels", labels)
        found = con.sql(
            """
            WITH w AS (
                SELECT r.*, w.component, w.value FROM runs r JOIN _work w USING (run_id) WHERE r.status = 'ok'
            ),
            moved AS (SELECT scenario, component FROM w GROUP BY ALL HAVING max(abs(value)) > 0)
            SELECT scenario, server, threads, testbed, oneoff,
                   CASE WHEN any_value(several) THEN server || ' · ' || testbed ELSE server END
                   || CASE WHEN oneoff <> '' THEN ' · ' || oneoff ELSE '' END AS line,
                   coalesce(nullif(git_sha, ''), strftime(started_at, '%Y-%m-%d')) AS point,
                   strftime(min(started_at), '%Y-%m-%dT%H:%M:%SZ') AS at,
                   component, any_value(l.label) AS label, any_value(l."order") AS "order",
                   median(value) AS value, min(value) AS value_min, max(value) AS value_max, count(*) AS n,
                   string_agg(DISTINCT server_version, ', ' ORDER BY server_version) AS versions
            FROM w JOIN moved USING (scenario, component) JOIN _labels l USING (component)
            GROUP BY scenario, server, threads, testbed_fingerprint, testbed, oneoff, point, component
            ORDER BY scenario, "order", server, threads, testbed, oneoff, min(started_at)
            """
        ).to_arrow_table()
    finally:
        con.close()
    return found.drop_columns(["order"])


def components(work: pa.Table, scenario: str) -> list[str]:
    """The labels of the components charted for a scenario, in report order."""
    if "label" not in work.column_names:
        return []
    rows = work.filter(pc.equal(work.column("scenario"), scenario)).column("label").to_pylist()
    return list(dict.fromkeys(str(r) for r in rows))
