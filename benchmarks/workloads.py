"""The multi-operation workloads (issue 22) on a real server: load time, throughput at 1, 4 and 16 threads
with the per-operation breakdown, and the noise of the cost count.

    python benchmarks/workloads.py [--workload ycsb_a] [--server mariadb-local] [--profile ci]
                                   [--threads 1,4,16] [--time 10] [--warmup 3] [--cost-runs 5]

For each workload (every one in :data:`SECTIONS` whose scenario file exists, or those named):

* load time: the seconds ``prepare`` took to load the profile's dataset into a fresh snapshot (a new
  cache folder, so it is measured, not reused);
* the headline rate (YCSB: operations per second; TPC-C: New-Order transactions per minute) and each
  operation type's rate and p99, at each thread count, one timing run each;
* cost noise: the coefficient of variation of instructions per operation over ``--cost-runs`` cost runs
  (each a fresh server under callgrind, the scenario's ``[cost]`` event counts); the catalogue's target
  is a CV under 0.1 %.

Timing figures depend on the machine's load (the script prints the load average); counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.measure.session import QuietReporter
from harness.model import RunResult

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Section:
    """How one workload is summed up: its headline metric and the label it is printed under."""

    headline: str
    label: str


#: The workloads this benchmark knows. TPC-C (helper h22t's scenario) reports New-Order per minute.
SECTIONS: dict[str, Section] = {
    "ycsb_a": Section(headline="ops_per_s", label="ops/s"),
    "tpcc": Section(headline="NEW_ORDER.ops_per_min", label="NOPM (tpmC-like, unaudited)"),
}


def _settings(folder: Path, cache: Path, args: argparse.Namespace, **flags: object) -> object:
    values: dict[str, object] = {
        "store": str(folder / "store.duckdb"),
        "cache-dir": str(cache),
        "profile": args.profile,
    }
    values.update({k.replace("_", "-"): v for k, v in flags.items()})
    return resolve_settings(values, environ={}, root=ROOT)


def _load_seconds(cache: Path) -> float | None:
    metas = sorted(cache.glob("snapshots/*/meta.json"))
    return float(json.loads(metas[0].read_text())["prepare_s"]) if metas else None


def _timing(run: RunResult, section: Section) -> str:
    head = run.metric(section.headline)
    parts = [f"{run.threads:>3} threads: {section.label} {head:,.0f}" if head is not None else "no headline"]
    parts.append(f"QPS {run.metrics.qps:,.0f}" if run.metrics.qps else "")
    for op in run.operations:
        p99 = f"{op.p99_ms:.2f}" if op.p99_ms is not None else "-"
        parts.append(f"{op.type} {op.ops_per_s or 0:,.0f}/s p99 {p99} ms")
    return "  ".join(p for p in parts if p)


def bench(name: str, section: Section, args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix=f"dbperf-{name}-bench-"))
    cache = folder / "cache"
    print(f"== {name} on {args.server} ({args.profile} profile), load average {os.getloadavg()[0]:.1f}")
    started = time.monotonic()
    settings = _settings(
        folder, cache, args, threads=args.threads, time=args.time, warmup=args.warmup, repetitions=1, cost=False
    )
    runs = pipeline.run(settings, name, QuietReporter(), server=args.server).runs  # type: ignore[arg-type]
    load = _load_seconds(cache)
    scenario = pipeline.resolve(settings, name, args.server).scenario  # type: ignore[arg-type]
    print(f"load: {scenario.tables} x {scenario.table_size:,} rows in {load:.1f} s" if load else "load: not measured")
    for run in sorted(runs, key=lambda r: r.threads):
        print("  " + (_timing(run, section) if run.ok else f"{run.threads} threads: FAILED {run.failure}"))
    if args.cost_runs:
        cost = _settings(folder, cache, args, repetitions=args.cost_runs, cost=True)
        counted = [r for r in pipeline.run(cost, name, QuietReporter(), server=args.server).runs if r.ok]  # type: ignore[arg-type]
        values = [r.metrics.instr_per_txn for r in counted if r.metrics.instr_per_txn]
        if len(values) >= 2:
            cv = statistics.stdev(values) / statistics.fmean(values) * 100
            print(
                f"cost: {len(values)} runs of {scenario.cost.events:,} operations after "
                f"{scenario.cost.warmup_events:,} warm-up: instructions/op "
                f"{min(values):,.0f}-{max(values):,.0f}, CV {cv:.4f} %"
            )
        else:
            print(f"cost: only {len(values)} ok cost run(s)")
    print(f"({time.monotonic() - started:.0f} s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", action="append", help="a workload of SECTIONS (repeatable; default: all)")
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--profile", default="ci", help="the dataset size comes from this profile")
    parser.add_argument("--threads", default="1,4,16")
    parser.add_argument("--time", type=int, default=10, help="measured seconds per timing run")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cost-runs", type=int, default=5, help="cost runs for the CV (0: skip)")
    args = parser.parse_args()
    names = args.workload or [n for n in SECTIONS if (ROOT / "scenarios" / f"{n}.toml").is_file()]
    for name in names:
        if name not in SECTIONS:
            print(f"unknown workload {name!r}; known: {', '.join(SECTIONS)}", file=sys.stderr)
            return 2
        bench(name, SECTIONS[name], args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
