"""Build time of the trend site over a store of synthetic runs (default 100,000).

    .venv/bin/python benchmarks/trend_build.py [--runs 100000] [--keep DIR] [--no-images]

Generates runs for 3 scenarios x 4 servers x 5 thread counts x 5 repetitions over as many
commits as needed (with known steps, so change points appear), saves them with ``Store.save_many``
into a temporary store, then times ``Store.metrics_table`` + ``build_site`` (the work of
``dbperf trend``) and prints the result. Aim: under 10 s for 100,000 runs.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from harness.model import Metrics, RunResult, Testbed, Totals
from harness.pipeline import history
from harness.report.site import build_site
from harness.store import Store

TESTBED = Testbed(
    cpu_model="AMD EPYC 7763 64-Core",
    cores=16,
    memory_gb=62.7,
    kernel="6.1.0-28-amd64",
    disk="nvme (ssd)",
    sysbench_version="1.0.20",
    container_engine="docker 26.1.5",
    hostname="bench-01",
)
SCENARIOS = {"oltp_point_select": 40000.0, "oltp_read_only": 9000.0, "oltp_read_write": 6000.0}
#: server: (flavour, base version, config hash, speed factor, thread-pool-like scaling)
TARGETS = {
    "mariadb-10.11": ("mariadb", (10, 11, 6), "a1b2c3d4e5f6", 1.00, False),
    "mariadb-10.11-threadpool": ("mariadb", (10, 11, 6), "0f9e8d7c6b5a", 0.97, True),
    "mariadb-11.8": ("mariadb", (11, 8, 1), "3c4d5e6f7a8b", 1.05, False),
    "mysql-9.7": ("mysql", (9, 7, 0), "9a8b7c6d5e4f", 0.92, False),
}
THREADS = (1, 2, 4, 8, 16)
REPS = 5
T0 = datetime(2025, 1, 6, 2, 0, tzinfo=UTC)


def _sha(i: int) -> str:
    return hashlib.sha1(f"commit-{i}".encode()).hexdigest()


def _scaling(threads: int, pool: bool) -> float:
    """Throughput multiplier: grows with threads, thread-per-connection collapses past 8."""
    knee = 64.0 if pool else 24.0
    return threads**0.85 / (1.0 + (threads / knee) ** 2)


def synthetic_runs(count: int, *, seed: int = 0) -> list[RunResult]:
    """``count`` runs (about 1 % failed) with known steps (see :func:`steps`)."""
    rng = np.random.default_rng(seed)
    per_commit = len(SCENARIOS) * len(TARGETS) * len(THREADS) * REPS
    commits = max(1, math.ceil(count / per_commit))
    runs: list[RunResult] = []
    for c in range(commits):
        sha = _sha(c)
        day = T0 + timedelta(hours=12 * c)
        for server, (flavour, version, config, speed, pool) in TARGETS.items():
            major, minor, patch = version
            server_version = f"{major}.{minor}.{patch + c * 6 // max(commits, 1)}" + (
                "-MariaDB" if flavour == "mariadb" else ""
            )
            for scenario, base_qps in SCENARIOS.items():
                level = 1.0
                if server == "mariadb-11.8" and scenario == "oltp_read_only" and c >= commits // 2:
                    level = 0.88  # a 12 % regression half-way through
                if server == "mysql-9.7" and scenario == "oltp_point_select" and c >= commits * 3 // 4:
                    level = 1.10  # a 10 % improvement three quarters through
                for threads in THREADS:
                    mean = base_qps * speed * level * _scaling(threads, pool)
                    for rep in range(REPS):
                        if len(runs) >= count:
                            return runs
                        idx = len(runs)
                        started = day + timedelta(seconds=idx % 40000)
                        run_id = f"syn-{idx:07d}"
                        common = {
                            "run_id": run_id,
                            "started_at": started,
                            "finished_at": started + timedelta(seconds=35),
                            "server": server,
                            "flavour": flavour,
                            "provider": "container",
                            "server_version": server_version,
                            "config_hash": config,
                            "scenario": scenario,
                            "scenario_hash": hashlib.sha1(scenario.encode()).hexdigest()[:12],
                            "profile": "ci",
                            "script": scenario,
                            "threads": threads,
                            "repetition": rep,
                            "warmup_s": 5.0,
                            "time_s": 30.0,
                            "testbed": TESTBED,
                            "git_sha": sha,
                            "group_id": f"g{c:05d}",
                            "label": "nightly",
                            "source": "run",
                        }
                        if rng.random() < 0.01:
                            runs.append(RunResult(status="failed", failure="FATAL: error 2013", **common))  # type: ignore[arg-type]
                            continue
                        qps = float(mean * rng.lognormal(0.0, 0.03))
                        tps = qps / 14.0
                        p95 = float(threads / tps * 1000.0 * 2.2 * rng.lognormal(0.0, 0.04))
                        events = int(tps * 30)
                        totals = Totals(
                            30.0, events, int(qps * 30 * 0.8), int(qps * 30 * 0.1), int(qps * 30 * 0.1), 0, 0
                        )
                        metrics = Metrics(
                            qps=qps, tps=tps, p50_ms=p95 / 2, p95_ms=p95, p99_ms=p95 * 1.4,
                            errors_per_s=0.0, reconnects_per_s=0.0,
                            cpu_per_txn=float(180.0 / speed * rng.lognormal(0, 0.05)),
                            instr_per_txn=float(1.2e6 / speed * rng.lognormal(0, 0.01)),
                        )  # fmt: skip
                        runs.append(RunResult(status="ok", totals=totals, metrics=metrics, **common))  # type: ignore[arg-type]
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build the site here (default: a temporary folder)")
    parser.add_argument("--no-images", action="store_true", help="skip the PNG export")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dbperf-trend-") as tmp:
        t = time.perf_counter()
        runs = synthetic_runs(args.runs)
        print(f"generated {len(runs):,} runs in {time.perf_counter() - t:.1f} s")
        store = Store(Path(tmp) / "store.duckdb")
        t = time.perf_counter()
        store.save_many(runs)
        print(f"saved them with Store.save_many in {time.perf_counter() - t:.1f} s")
        out = args.keep or Path(tmp) / "site"
        t, cpu = time.perf_counter(), time.process_time()
        table = store.metrics_table()
        read_s = time.perf_counter() - t
        result = build_site(history(table), out, images=not args.no_images)
        total, total_cpu = time.perf_counter() - t, time.process_time() - cpu
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        load = os.getloadavg()[0]
        print(
            f"site build over {table.num_rows:,} runs: {total:.2f} s wall, {total_cpu:.2f} s CPU "
            f"(load average {load:.1f} on {os.cpu_count()} cores; metrics_table {read_s:.2f} s, then aggregation, "
            f"change points, pages and {len(result.images)} PNGs); {result.points:,} commit points, "
            f"{len(result.changes)} change points, {size / 1e6:.1f} MB in {out}"
        )
        for change in result.changes:
            print("  ", change.describe())


if __name__ == "__main__":
    main()
