"""Mapping between run records and the store's rows (Arrow tables, for Parquet and DuckDB alike)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from harness.model import (
    CostProfile,
    FunctionCost,
    IntervalSample,
    LatencyBucket,
    Metrics,
    OperationStats,
    Probes,
    RunResult,
    Testbed,
    Totals,
)
from harness.model.measurement import Measurement, RunIdentity, build_run
from harness.model.metrics import CATALOGUE
from harness.model.work import work_vector
from harness.store.schema import (
    FUNCTION_COLUMNS,
    HISTOGRAM_COLUMNS,
    INTERVAL_COLUMNS,
    OPERATION_COLUMNS,
    PROFILE_COLUMNS,
    RUN_COLUMNS,
    arrow_schema,
)

if TYPE_CHECKING:
    import pyarrow as pa

#: The store's tables, in the order a run's rows are written.
TABLES: tuple[str, ...] = ("runs", "intervals", "histogram", "functions", "profiles", "operations")
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": RUN_COLUMNS,
    "intervals": INTERVAL_COLUMNS,
    "histogram": HISTOGRAM_COLUMNS,
    "functions": FUNCTION_COLUMNS,
    "profiles": PROFILE_COLUMNS,
    "operations": OPERATION_COLUMNS,
}
_TOTALS_FIELDS = tuple(f.name for f in fields(Totals))
STORED = tuple(m for m in CATALOGUE if m.store_column)  # the metrics kept as columns of runs
INTERVAL_FIELDS = tuple(f.name for f in fields(IntervalSample))
BUCKET_FIELDS = tuple(f.name for f in fields(LatencyBucket))
_FUNCTION_FIELDS = tuple(f.name for f in fields(FunctionCost))
_TEXT_FIELDS = (
    *("server", "flavour", "provider", "server_version", "config_hash", "scenario", "scenario_hash"),
    *("profile", "script", "git_sha", "failure", "source", "server_cpuset", "client_cpuset"),
    *("group_id", "label", "backend", "build_id", "requested_hash", "tool", "arch"),
)
_IDENTITY_FIELDS = frozenset(f.name for f in fields(RunIdentity))


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
        testbed_class=tb.hardware_class,
        testbed_fingerprint=_once(memo, tb, lambda t: t.fingerprint),
        probe_server_cpu_s=probes.server_cpu_s,
        probe_instructions=probes.instructions,
        probe_instructions_note=probes.instructions_note,
        status_deltas=_once(memo, probes.status_deltas, _json),
        syscalls=_json(probes.syscalls) if probes.syscalls else None,
        cache_misses=_json(probes.cache_misses) if probes.cache_misses else None,
        kind=run.kind,
        notes=json.dumps(list(run.notes)),
    )
    for name in _TOTALS_FIELDS:
        row[f"totals_{name}"] = None if run.totals is None else getattr(run.totals, name)
    for m in STORED:  # the work vector is derived from the probes
        row[m.store_column] = getattr(run.metrics, m.name)
    return row


@cache
def table_schema(table: str) -> pa.Schema:
    """The Arrow schema of one of the store's tables (built when first written: reading needs no pyarrow)."""
    return arrow_schema(COLUMNS[table])


def arrow_tables(runs: Sequence[RunResult]) -> dict[str, pa.Table]:
    """The rows of these runs for every table of the store (:data:`TABLES`), as Arrow tables."""
    import pyarrow as pa

    memo: dict[int, str] = {}
    rows = [_run_row(run, memo) for run in runs]
    run_schema = table_schema("runs")
    run_table = pa.table({name: [row[name] for row in rows] for name in run_schema.names}, schema=run_schema)
    intervals: dict[str, list[object]] = {name: [] for name in table_schema("intervals").names}
    buckets: dict[str, list[object]] = {name: [] for name in table_schema("histogram").names}
    functions: dict[str, list[object]] = {name: [] for name in table_schema("functions").names}
    profiles: dict[str, list[object]] = {name: [] for name in table_schema("profiles").names}
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
        if run.cost_profile is not None:
            profiles["run_id"].append(run.run_id)
            profiles["total_ir"].append(run.cost_profile.total_ir)
            profiles["dump"].append(run.cost_profile.dump)
            for fn in run.cost_profile.functions:
                functions["run_id"].append(run.run_id)
                for name in _FUNCTION_FIELDS:
                    functions[name].append(getattr(fn, name))
    return {
        "runs": run_table,
        "intervals": pa.table(intervals, schema=table_schema("intervals")),
        "histogram": pa.table(buckets, schema=table_schema("histogram")),
        "functions": pa.table(functions, schema=table_schema("functions")),
        "profiles": pa.table(profiles, schema=table_schema("profiles")),
        "operations": operation_table(runs),
    }


# --- per-operation statistics (issue 22) ---------------------------------------------------------------
def operation_table(runs: Sequence[RunResult]) -> pa.Table:
    """The ``operations`` rows of these runs: one per operation type (percentiles kept for plain SQL)."""
    import pyarrow as pa  # where rows are written (reading the store needs no pyarrow)

    schema = table_schema("operations")
    columns: dict[str, list[object]] = {name: [] for name in schema.names}
    for run in runs:
        for op in run.operations:
            row: dict[str, object] = {
                "run_id": run.run_id,
                "op_type": op.type,
                "count": op.count,
                "errors": op.errors,
                "retries": op.retries,
                "latency_sum_ms": op.latency_sum_ms,
                "seconds": op.seconds,
                "ops_per_s": op.ops_per_s,
                "p50_ms": op.p50_ms,
                "p95_ms": op.p95_ms,
                "p99_ms": op.p99_ms,
                "histogram": json.dumps([[b.value_ms, b.count] for b in op.histogram]),
                "misses": op.misses,
            }
            for name, value in row.items():
                columns[name].append(value)
    return pa.table(columns, schema=schema)


def operation_from_row(row: Mapping[str, Any]) -> OperationStats:
    """One :class:`OperationStats` back from its ``operations`` row."""
    return OperationStats(
        type=row["op_type"],
        count=int(row["count"]),
        errors=int(row["errors"]),
        retries=int(row["retries"]),
        latency_sum_ms=float(row["latency_sum_ms"]),
        seconds=float(row["seconds"]),
        histogram=tuple(LatencyBucket(float(v), int(c)) for v, c in json.loads(row["histogram"] or "[]")),
        misses=int(row.get("misses") or 0),  # NULL in rows stored before schema version 7
    )


# --- end per-operation statistics ----------------------------------------------------------------------


def profile_from_rows(total_ir: int, dump: bytes, functions: Sequence[Mapping[str, Any]]) -> CostProfile:
    """A cost run's profile back from its ``profiles`` row and ``functions`` rows."""
    return CostProfile(
        total_ir=int(total_ir),
        functions=tuple(FunctionCost(**{k: row[k] for k in _FUNCTION_FIELDS}) for row in functions),
        dump=bytes(dump or b""),
    )


def run_from_row(
    row: dict[str, Any],
    intervals: Sequence[IntervalSample],
    histogram: Sequence[LatencyBucket],
    profile: CostProfile | None = None,
    operations: Sequence[OperationStats] = (),
) -> RunResult:
    """A RunResult back from a ``runs`` row (as a dict), its samples and its cost profile.

    Through the one builder (:func:`~harness.model.measurement.build_run`), like every run's record: the
    stored status is the builder's own (failed exactly when the run has a failure), so it is not read back."""
    totals = None
    if row["totals_time_s"] is not None:
        totals = Totals(**{name: row[f"totals_{name}"] for name in _TOTALS_FIELDS})
    probes = Probes(
        server_cpu_s=row["probe_server_cpu_s"],
        instructions=row["probe_instructions"],
        instructions_note=row["probe_instructions_note"] or "",
        status_deltas=json.loads(row["status_deltas"] or "{}"),
        syscalls=json.loads(row.get("syscalls") or "{}"),
        cache_misses=json.loads(row.get("cache_misses") or "{}"),
    )
    text = {name: row.get(name) or "" for name in _TEXT_FIELDS}
    who = RunIdentity(
        run_id=row["run_id"],
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
            hardware_class=row.get("testbed_class") or "",
        ),
        kind="cost" if row.get("kind") == "cost" else "time",
        **{name: value for name, value in text.items() if name in _IDENTITY_FIELDS},
    )
    measured = Measurement(
        started_at=row["started_at"].astimezone(UTC),
        finished_at=row["finished_at"].astimezone(UTC),
        variables=json.loads(row["variables"] or "{}"),
        options=json.loads(row["options"] or "{}"),
        intervals=tuple(intervals),
        histogram=tuple(histogram),
        totals=totals,
        probes=probes,
        metrics=Metrics(
            **{m.name: row.get(m.store_column) for m in STORED},
            work=work_vector(
                totals.events if totals else 0, probes.status_deltas, probes.syscalls, probes.cache_misses
            ),
        ),
        notes=tuple(json.loads(row.get("notes") or "[]")),
        cost_profile=profile,
        operations=tuple(operations),
        **{name: value for name, value in text.items() if name not in _IDENTITY_FIELDS},
    )
    return build_run(who, measured)
