"""The cost gate on real servers: A/A false alarms, detection of a real ~1 % change, time per comparison,
and the noise (CV) of instructions per transaction per workload at 1 and 4 threads.

    python benchmarks/cost_gate.py [--aa 20] [--ab 10] [--server mariadb-local]
                                   [--change max_statement_time=1000] [--cv-repetitions 5]

* A/A: the server against itself, 3 cost runs a side (each a fresh server under callgrind), judged by
  ``dbperf compare --cost`` (Student t on logs, Holm). Any REGRESSION is a false alarm.
* A/B: the head runs with ``--change`` (a real setting; ``max_statement_time`` arms a per-statement timer
  that costs about +1.1 % instructions on oltp_point_select). Each A/B comparison must say REGRESSION.
* CV: repeated cost runs of oltp_point_select, oltp_read_write, oltp_update_index and oltp_insert at 1 and
  4 client threads (the scenario's own event counts), their coefficient of variation.

Rates come with Wilson 95 % intervals. Counts do not depend on the machine's load; wall times do.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.judge.stats import coefficient_of_variation
from harness.measure.session import QuietReporter

WORKLOADS = ("oltp_point_select", "oltp_read_write", "oltp_update_index", "oltp_insert")


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--aa", type=int, default=20, help="A/A comparisons")
    parser.add_argument("--ab", type=int, default=10, help="A/B comparisons with the change")
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--scenario", default="oltp_point_select")
    parser.add_argument("--change", default="max_statement_time=1000", help="NAME=VALUE of the head")
    parser.add_argument("--cv-repetitions", type=int, default=5, help="runs per workload and thread count (0: skip)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="dbperf-cost-bench-"))
    settings = resolve_settings({"store": str(folder / "store.duckdb"), "profile": "quick", "cost": True})
    case = pipeline.resolve(settings, args.scenario, args.server)
    name, _, value = args.change.partition("=")
    base = case.server
    same = base.with_variables({}, name=f"{base.name}(A/A)")
    changed = base.with_variables({name: value})
    session = pipeline.open_session(settings, QuietReporter(), containers=base.provider == "container")

    rows: dict[str, list[tuple[str, float, float | None]]] = {"A/A": [], "A/B": []}
    plan = [("A/A", same)] * args.aa + [("A/B", changed)] * args.ab
    for i, (kind, head) in enumerate(plan):
        started = time.monotonic()
        outcome = pipeline.compare(
            settings,
            [pipeline.ComparisonSpec(base, head, case.scenario)],
            session.reporter,
            pipeline.JudgeOptions(seed=args.seed + i),
            session=session,
        )
        seconds = time.monotonic() - started
        metric = next((m for v in outcome.verdicts for m in v.metrics if m.metric == "instr_per_txn"), None)
        verdict = metric.outcome if metric else "failed"
        rows[kind].append((verdict, seconds, metric.estimate_pct if metric else None))
        estimate = f"{metric.estimate_pct:+.3f} %" if metric and metric.estimate_pct is not None else "-"
        print(f"{kind} #{i + 1}: {verdict:<12} {seconds:6.0f} s  instructions/txn {estimate}", flush=True)

    aa, ab = rows["A/A"], rows["A/B"]
    false = sum(1 for o, *_ in aa if o == "regression")
    found = sum(1 for o, *_ in ab if o == "regression")
    times = [s for r in (aa, ab) for _, s, _ in r]
    effects = [e for _, _, e in ab if e is not None]
    if aa:
        lo, hi = wilson(false, len(aa))
        print(f"\nfalse REGRESSION in A/A: {false}/{len(aa)} (95 % CI {lo:.0%}-{hi:.0%})")
        print(f"A/A verdicts: {', '.join(sorted({o for o, *_ in aa}))}")
    if ab:
        lo, hi = wilson(found, len(ab))
        print(f"REGRESSION found in A/B: {found}/{len(ab)} (95 % CI {lo:.0%}-{hi:.0%})")
        print(f"A/B effect ({args.change}): median {statistics.median(effects):+.3f} %" if effects else "")
    if times:
        print(
            f"time per comparison: median {statistics.median(times):.0f} s (range {min(times):.0f}-{max(times):.0f} s),"
            " 3 + 3 cost runs"
        )

    if args.cv_repetitions:
        print("\nnoise of instructions per transaction (CV over fresh-server repetitions):")
        print(f"{'workload':<20} {'threads':>7} {'runs':>5} {'Ir/txn':>12} {'CV':>9} {'s/run':>7}")
        for workload in WORKLOADS:
            for threads in (1, 4):
                one = pipeline.resolve(settings, workload, args.server)
                cost = replace(one.scenario.cost, threads=(threads,), repetitions=args.cv_repetitions)
                scenario = replace(one.scenario, cost=cost)
                started = time.monotonic()
                runs = pipeline.measure_case(session, pipeline.Case(one.server, scenario), kind="cost")
                seconds = (time.monotonic() - started) / max(1, len(runs))
                values = [r.metrics.instr_per_txn for r in runs if r.ok and r.metrics.instr_per_txn]
                if len(values) < 2:
                    print(f"{workload:<20} {threads:>7} {len(values):>5}  (runs failed: {runs[0].failure[:80]})")
                    continue
                cv = coefficient_of_variation(values) * 100
                print(
                    f"{workload:<20} {threads:>7} {len(values):>5} {statistics.median(values):>12,.0f} "
                    f"{cv:>8.4f}% {seconds:>7.1f}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
