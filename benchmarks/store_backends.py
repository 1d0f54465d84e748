"""What the shared store costs: write and query times of the local DuckDB file and of a DuckLake on
PostgreSQL (a throwaway one from tools/postgres.py), holding 1,000, 10,000 and 100,000 stored runs
(generated, 10 intervals and 30 histogram buckets each).

    .venv/bin/python benchmarks/store_backends.py [--sizes 1000,10000,100000] [--repeat 7]

Per size, both stores are bulk-loaded with ``save_tables``; the local store also gets one empty,
already-merged run folder per run (what N single saves leave behind, and what every local call
scans). Then each operation is timed ``--repeat`` times (median, min in parentheses, milliseconds):

* save one run: ``save(run)`` as ``dbperf run`` does after each repetition;
* newest 50: ``runs(scenario=..., limit=50)`` (``dbperf runs``);
* metrics table: ``metrics_table()`` over every run (``dbperf trend``, ``changes``);
* one run: ``get(run_id)`` with samples;
* open: a new store object (the lake loads two DuckDB extensions and attaches the catalog; the local
  store opens its file on every call, which the other rows include).

A command-line call on the lake pays "open" once plus its operations.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa

from harness.model import IntervalSample, LatencyBucket, Metrics, RunResult, Testbed, Totals
from harness.store import ResultStore, Store, open_store
from harness.store.rows import COLUMNS, arrow_tables
from harness.store.schema import arrow_schema

REPO = Path(__file__).resolve().parents[1]
TESTBED = Testbed("AMD EPYC 7763 64-Core", 16, 62.7, "6.1.0-28-amd64", "nvme0n1 (ssd)", "1.0.20", None)
SCENARIOS = ("oltp_point_select", "oltp_read_only", "oltp_read_write")
SERVERS = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7")
INTERVALS, BUCKETS = 10, 30


def one_run(run_id: str, i: int) -> RunResult:
    start = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=i)
    return RunResult(
        run_id=run_id,
        started_at=start,
        finished_at=start + timedelta(seconds=15),
        status="ok",
        server=SERVERS[i % 3],
        flavour="mariadb",
        provider="local",
        server_version="10.11.14-MariaDB",
        config_hash=f"cfg{i % 7}",
        scenario=SCENARIOS[i % 3],
        scenario_hash="sh",
        profile="ci",
        script=SCENARIOS[i % 3],
        threads=8,
        repetition=i % 10,
        warmup_s=2.0,
        time_s=10.0,
        testbed=TESTBED,
        git_sha=f"{i // 50:07x}",
        group_id=f"g{i // 60}",
        intervals=tuple(
            IntervalSample(float(s + 1), 1.0, 8, 1000, 14000, 0, 2000, 0, 0, 2.5) for s in range(INTERVALS)
        ),
        histogram=tuple(LatencyBucket(round(0.1 * 1.2**b, 3), 100 + b) for b in range(BUCKETS)),
        totals=Totals(10.0, 10000, 140000, 0, 20000, 0, 0),
        metrics=Metrics(qps=14000.0, tps=1000.0, p95_ms=2.5),
    )


def generated(count: int, prefix: str) -> dict[str, pa.Table]:
    """``count`` runs as the store's Arrow tables, built column by column from one template run (fast)."""
    template = arrow_tables([one_run("t", 0)])
    rng = np.random.default_rng(count)
    idx = np.arange(count)
    ids = pa.array([f"{prefix}{i:07d}" for i in idx], pa.string())

    def repeated(table: str, rows: int) -> dict[str, pa.Array]:
        schema = arrow_schema(COLUMNS[table])
        return {n: pa.repeat(template[table].column(n)[0], rows).cast(schema.field(n).type) for n in schema.names}

    runs = repeated("runs", count)
    start = np.datetime64("2025-01-01T00:00:00", "us") + idx * np.timedelta64(60, "s")
    qps = rng.uniform(5_000, 40_000, count)
    runs.update(
        run_id=ids,
        started_at=pa.array(start, pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        finished_at=pa.array(start + np.timedelta64(15, "s"), pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC")),
        scenario=pa.array([SCENARIOS[i % 3] for i in idx], pa.string()),
        server=pa.array([SERVERS[i % 3] for i in idx], pa.string()),
        git_sha=pa.array([f"{i // 50:07x}" for i in idx], pa.string()),
        group_id=pa.array([f"g{i // 60}" for i in idx], pa.string()),
        qps=pa.array(qps, pa.float64()),
        p95_ms=pa.array(rng.uniform(0.5, 5.0, count), pa.float64()),
    )
    out = {"runs": pa.table(runs, schema=arrow_schema(COLUMNS["runs"]))}
    for table, per_run in (("intervals", INTERVALS), ("histogram", BUCKETS)):
        cols = repeated(table, count * per_run)
        cols["run_id"] = ids.take(pa.array(np.repeat(idx, per_run)))
        if table == "intervals":
            cols["seq"] = pa.array(np.tile(np.arange(per_run), count), pa.int32())
        else:
            cols["value_ms"] = pa.array(np.round(0.1 * 1.2 ** np.tile(np.arange(per_run), count), 3), pa.float64())
        out[table] = pa.table(cols, schema=arrow_schema(COLUMNS[table]))
    for table in ("functions", "profiles"):
        out[table] = template[table].slice(0, 0)
    return out


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), min(samples)


def mark_folders_merged(store: Store, count: int) -> None:
    """One empty run folder per run, recorded as merged: what ``count`` single saves leave behind."""
    names = [f"f{i:07d}" for i in range(count)]
    for name in names:
        (store.runs_dir / name).mkdir(parents=True, exist_ok=True)
    with store._locked() as con:
        con.register("_names", pa.table({"folder": pa.array(names, pa.string())}))
        con.execute("INSERT INTO ingested_folders SELECT folder, now() FROM _names")
        con.unregister("_names")


def measure(store: ResultStore, reopen: Callable[[], ResultStore], repeat: int) -> dict[str, tuple[float, float]]:
    serial = iter(range(10**9))
    return {
        "save one run": timed(lambda: store.save(one_run(f"x{uuid.uuid4().hex[:12]}", next(serial))), repeat),
        "newest 50": timed(lambda: store.runs(scenario="oltp_read_only", limit=50), repeat),
        "metrics table": timed(store.metrics_table, repeat),
        "one run": timed(lambda: store.get("r0000007"), repeat),
        "open": timed(lambda: reopen().close(), max(3, repeat // 2)),
    }


def throwaway_catalog(work: Path) -> tuple[str, Callable[[str], str]]:
    """A PostgreSQL from tools/postgres.py; returns (its folder, a function making a lake URL per size)."""
    root = work / "pg"
    tool = [sys.executable, str(REPO / "tools" / "postgres.py")]
    started = subprocess.run([*tool, "start", str(root)], capture_output=True, text=True, check=True)
    port = started.stdout.split("port=")[1].split()[0]

    def lake(name: str) -> str:
        subprocess.run([*tool, "createdb", str(root), name], check=True, capture_output=True)
        data = work / f"data-{name}"
        return f"ducklake:postgres:dbname={name} host=127.0.0.1 port={port} user=postgres data_path={data}"

    return str(root), lake


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dbperf-bench-"))
    work.chmod(0o755)  # the throwaway PostgreSQL runs as the postgres user
    pg_root, lake_url = throwaway_catalog(work)
    rows = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            tables = generated(size, "r")
            local = Store(work / f"local-{size}" / "dbperf.duckdb")
            start = time.perf_counter()
            local.save_tables(tables)
            mark_folders_merged(local, size)
            local_load = time.perf_counter() - start
            url = lake_url(f"bench_{size}")
            lake = open_store(url)
            start = time.perf_counter()
            lake.save_tables(tables)
            lake_load = time.perf_counter() - start
            load = os.getloadavg()[0]
            local_t = measure(local, lambda local=local: Store(local.path), args.repeat)
            lake_t = measure(lake, lambda url=url: open_store(url), args.repeat)
            lake.close()
            rows.append((size, "bulk load (s)", (local_load * 1000, local_load * 1000), (lake_load * 1000,) * 2, load))
            rows += [(size, op, local_t[op], lake_t[op], load) for op in local_t]
            shutil.rmtree(work / f"local-{size}", ignore_errors=True)
    finally:
        subprocess.run([sys.executable, str(REPO / "tools" / "postgres.py"), "destroy", pg_root], check=False)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'runs':>8} | {'operation':<14} | {'local file ms':>16} | {'lake ms':>16} | load")
    print(f"{'-' * 8}-+-{'-' * 14}-+-{'-' * 16}-+-{'-' * 16}-+-----")
    for size, op, (lm, lmin), (km, kmin), load in rows:
        if op == "bulk load (s)":
            print(f"{size:>8,} | {op:<14} | {lm / 1000:>16.1f} | {km / 1000:>16.1f} | {load:.1f}")
        else:
            print(f"{size:>8,} | {op:<14} | {lm:>8.0f} ({lmin:>5.0f}) | {km:>8.0f} ({kmin:>5.0f}) | {load:.1f}")
    print(f"({os.cpu_count()} cores; median (min) of {args.repeat} calls; a lake CLI call pays 'open' once)")


if __name__ == "__main__":
    main()
