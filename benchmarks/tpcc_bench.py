"""The TPC-C-like workload on a local MariaDB: load time, NOPM at 1, 4 and 16 threads, cost noise.

Measures, through the harness pipeline (the same code `dbperf run` uses), with a fresh snapshot
cache and store in a temporary folder:

- load time: the parallel loader (`sysbench tpcc.lua prepare`) for the chosen profile's warehouses
  and items, read from the snapshot's meta.json;
- NOPM (New-Order transactions per minute, "tpmC-like (unaudited)") and total TPS at each thread
  count, one timing run each (New-Order p95 beside them), each ending with the consistency check;
- the cost noise: the coefficient of variation of instructions per transaction over N cost runs
  (fresh server under callgrind each, the scenario's [cost] event counts).

    .venv/bin/python benchmarks/tpcc_bench.py [--profile ci] [--threads 1,4,16] [--time 10]
        [--cost-runs 5] [--cost-profile quick]

Timing figures on a shared 2-core machine are not comparable across machines or days; the cost CV is.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.measure.session import QuietReporter
from harness.model import RunResult

REPO = Path(__file__).resolve().parents[1]


def _settings(root: Path, profile: str, **flags: object) -> object:
    values: dict[str, object | None] = {
        "store": str(root / "store" / "dbperf.duckdb"),
        "cache-dir": str(root / "cache"),
        "baselines-dir": str(root / "baselines"),
        "server": "mariadb-local",
        "profile": profile,
    }
    values.update({k.replace("_", "-"): v for k, v in flags.items()})
    return resolve_settings(values, environ={}, root=REPO)


def _nopm(run: RunResult) -> tuple[float | None, float | None]:
    for op in run.operations:
        if op.type == "NEW_ORDER":
            return op.ops_per_min, op.p95_ms
    return None, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="ci", help="dataset of this profile for the timing runs (default ci)")
    parser.add_argument("--threads", default="1,4,16")
    parser.add_argument("--time", type=int, default=10, help="measured seconds per timing run")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cost-runs", type=int, default=5, help="0: no cost runs")
    parser.add_argument("--cost-profile", default="quick", help="dataset of this profile for the cost runs")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="dbperf-tpcc-bench-") as tmp:
        root = Path(tmp)
        (root / "baselines").mkdir()
        print(f"tpcc benchmark on mariadb-local: timing profile {args.profile}, cost profile {args.cost_profile}")
        rows = []
        for threads in args.threads.split(","):
            settings = _settings(
                root, args.profile, threads=threads, time=args.time, warmup=args.warmup, repetitions=1, cost=False
            )
            started = time.monotonic()
            outcome = pipeline.run(settings, "tpcc", QuietReporter())  # type: ignore[arg-type]
            for run in outcome.runs:
                if not run.ok:
                    print(f"  {threads} threads: FAILED: {run.failure}")
                    return 2
                nopm, p95 = _nopm(run)
                tps = run.metrics.tps or 0.0
                rows.append((run.threads, nopm, p95, tps))
                print(
                    f"  {run.threads:>3} threads: NOPM {nopm or 0:,.0f}  New-Order p95 {p95 or 0:.1f} ms  "
                    f"TPS {tps:,.1f}  (consistency check passed; {time.monotonic() - started:.0f} s with set-up)"
                )
        for meta in sorted((root / "cache").rglob("meta.json")):
            data = json.loads(meta.read_text())
            print(f"  load time ({args.profile} dataset, {meta.parent.name}): {float(data['prepare_s']):.1f} s")

        if args.cost_runs == 0:
            return 0
        settings = _settings(root, args.cost_profile, repetitions=args.cost_runs, cost=True)
        started = time.monotonic()
        outcome = pipeline.run(settings, "tpcc", QuietReporter())  # type: ignore[arg-type]
        counts = [r.metrics.instr_per_txn for r in outcome.runs if r.ok and r.metrics.instr_per_txn]
        if len(counts) < 2:
            print(f"  cost: fewer than 2 runs counted ({[r.failure for r in outcome.runs if not r.ok]})")
            return 2
        mean = statistics.fmean(counts)
        cv = statistics.stdev(counts) / mean
        print(
            f"  cost ({args.cost_profile} dataset, {len(counts)} runs, {time.monotonic() - started:.0f} s): "
            f"{mean:,.0f} instructions per transaction, CV {cv:.4%} "
            f"(min {min(counts):,.0f}, max {max(counts):,.0f})"
        )
        return 0 if cv < 0.001 else 1


if __name__ == "__main__":
    sys.exit(main())
