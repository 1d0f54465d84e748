"""Measure the gate itself on real servers: A/A false alarms, A/B detection, time per comparison.

    python benchmarks/gate_real.py [--comparisons 4] [--pairs 10] [--threads 8] [--time 3]
                                   [--base mariadb-10.11] [--slowdown-cpus 0.9]

* A/A: the base server against itself (same config both sides). Any REGRESSION is a false alarm.
* A/B: the base server against the same server with a real, known slowdown on the head side: the
  container's CPU quota cut to ``--slowdown-cpus`` of a core (``nano_cpus``), which removes that share
  of the server's CPU time at a server-bound thread count. The effect size is measured by the runs
  themselves and printed (median QPS ratio), so the detection rate is reported against what the
  slowdown really was, not what it was meant to be.

Rates come with Wilson 95 % intervals; the time per comparison with its range. Each comparison is a
full `dbperf compare` (interleaved balanced order, a fresh server per run, Holm, alpha 0.02).
For thousands of experiments in seconds, fitted to measured noise, see gate_simulation.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.measure.session import QuietReporter


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--comparisons", type=int, default=4, help="A/A and A/B comparisons each")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--time", type=int, default=3)
    parser.add_argument("--scenario", default="oltp_point_select")
    parser.add_argument("--base", default="mariadb-10.11")
    parser.add_argument("--slowdown-cpus", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    store = Path(tempfile.mkdtemp(prefix="dbperf-gate-bench-")) / "store.duckdb"
    settings = resolve_settings(
        {
            "store": str(store),
            "threads": str(args.threads),
            "time": args.time,
            "warmup": 1,
            "profile": "quick",
            "repetitions": args.pairs,
        }
    )
    case = pipeline.resolve(settings, args.scenario, args.base)
    base = case.server
    same = dataclasses.replace(base, name=f"{base.name}(A/A)")
    slow = dataclasses.replace(base, name=f"{base.name}(cpus={args.slowdown_cpus})", cpus=args.slowdown_cpus)
    session = pipeline.open_session(settings, QuietReporter(), containers=base.provider == "container")

    rows: dict[str, list[tuple[str, float, float | None, float | None]]] = {"A/A": [], "A/B": []}
    for i in range(args.comparisons):
        for kind, head in (("A/A", same), ("A/B", slow)):
            started = time.monotonic()
            result = pipeline.compare(
                settings,
                [pipeline.ComparisonSpec(base, head, case.scenario)],
                session.reporter,
                pipeline.JudgeOptions(seed=args.seed + i),
                session=session,
            )
            seconds = time.monotonic() - started
            verdict = result.verdicts[0]
            qps = next((m for m in verdict.metrics if m.metric == "qps"), None)
            cpu = next((m for m in verdict.metrics if m.metric == "cpu_per_txn"), None)
            rows[kind].append(
                (verdict.outcome, seconds, qps.estimate_pct if qps else None, cpu.estimate_pct if cpu else None)
            )
            print(
                f"{kind} #{i + 1}: {verdict.outcome:<12} {seconds:6.0f} s  "
                f"QPS {qps.estimate_pct if qps else float('nan'):+6.1f} % [{qps.outcome if qps else '-'}]  "
                f"CPU/txn {cpu.estimate_pct if cpu else float('nan'):+6.1f} % [{cpu.outcome if cpu else '-'}]",
                flush=True,
            )

    aa, ab = rows["A/A"], rows["A/B"]
    false = sum(1 for o, *_ in aa if o == "regression")
    found = sum(1 for o, *_ in ab if o == "regression")
    found_qps = sum(1 for _, _, q, _ in ab if q is not None and q < 0)
    times = [s for r in (aa, ab) for _, s, *_ in r]
    effects = [q for _, _, q, _ in ab if q is not None]
    lo, hi = wilson(false, len(aa))
    print(f"\nfalse REGRESSION in A/A: {false}/{len(aa)} = {false / max(1, len(aa)):.0%} (95 % CI {lo:.0%}-{hi:.0%})")
    lo, hi = wilson(found, len(ab))
    print(f"REGRESSION found in A/B: {found}/{len(ab)} = {found / max(1, len(ab)):.0%} (95 % CI {lo:.0%}-{hi:.0%})")
    print(
        f"A/B QPS estimates below 0: {found_qps}/{len(ab)}; median measured QPS effect "
        f"{statistics.median(effects) if effects else float('nan'):+.1f} %"
    )
    print(
        f"time per comparison: median {statistics.median(times):.0f} s (range {min(times):.0f}-{max(times):.0f} s)"
        f", {args.pairs} pairs at {args.threads} threads, {args.time} s measured per run"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
