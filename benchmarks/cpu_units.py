"""The server's CPU units against scenarios they were not solved from (docs/forecast.md, "Code a statement
passes through once costs more than code it loops over").

    python benchmarks/cpu_units.py [--runs 5] [--server mariadb-local] [--keep DIR]

Per scenario (quick profile): ``--runs`` timing runs of 1 + 3 s at 1 client (server CPU and wall time per
transaction) and one cost run (statements, instructions and simulated L1i misses per transaction). The
three-unknown solve (CPU per statement, per instruction, per L1i miss) from oltp_point_select,
oltp_read_only and BEGIN and COMMIT alone, and the two-unknown solve (no price for the code fetched) from
the first two, each predict every scenario's server CPU; the table prints both beside the measured one.
Everything goes to a temporary folder, removed at the end unless ``--keep``. The load average is printed.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.measure.server_units import solve, solve_fetches
from harness.measure.session import QuietReporter
from harness.model.forecast import ICACHE, ScenarioWork
from harness.pipeline.calibrate import begin_commit
from harness.pipeline.cases import Case
from harness.pipeline.flow import measure_case

QUERY_CACHE = {"query_cache_type": "1", "query_cache_size": "67108864"}


@dataclass(frozen=True)
class Spec:
    key: str
    scenario: str
    variables: dict[str, str] = dataclasses.field(default_factory=dict)
    warmup: int = 1  # seconds; the query cache needs 10 to hold every key of the quick dataset


SPECS = (
    Spec("point_select", "oltp_point_select"),
    Spec("read_only", "oltp_read_only"),
    Spec("begin_commit", "oltp_read_only"),  # made from read_only (harness.pipeline.calibrate.begin_commit)
    Spec("query_cache_warm", "oltp_point_select", QUERY_CACHE, warmup=10),
    Spec("update_non_index", "oltp_update_non_index"),
    Spec("performance_schema", "oltp_point_select", {"performance_schema": "ON"}),
    Spec("random_points", "select_random_points"),
    Spec("random_ranges", "select_random_ranges"),
)


def measure(settings, session, spec: Spec, runs: int) -> ScenarioWork:  # type: ignore[no-untyped-def]
    case = pipeline.resolve(dataclasses.replace(settings, warmup=spec.warmup), spec.scenario, settings.server)
    if spec.key == "begin_commit":
        case = begin_commit(case)
    server = case.server.with_variables(spec.variables) if spec.variables else case.server
    timing = Case(server, case.scenario.with_overrides(threads=[1], repetitions=runs))
    cost = dataclasses.replace(case.scenario.cost, repetitions=1, threads=(1,))
    counting = Case(server, dataclasses.replace(case.scenario, cost=cost))
    timed = [r for r in measure_case(session, timing, kind="time", label="cpu-units") if r.ok]
    counted = [r for r in measure_case(session, counting, kind="cost", label="cpu-units") if r.ok]
    if not timed or not counted or counted[0].totals is None or ICACHE not in counted[0].metrics.work:
        raise SystemExit(f"{spec.key}: a run failed or counted no L1i misses (see dbperf runs --store ...)")
    c, totals = counted[0], counted[0].totals
    return ScenarioWork(
        scenario=spec.key,
        instr_per_txn=float(c.metrics.instr_per_txn or 0.0),
        statements_per_txn=totals.queries / totals.events,
        cpu_us=statistics.fmean(float(r.metrics.cpu_per_txn or 0.0) for r in timed),
        wall_us=statistics.fmean(1e6 / float(r.metrics.tps or 1.0) for r in timed),
        icache_per_txn=c.metrics.work[ICACHE],
    )


def table(works: list[ScenarioWork]) -> str:
    by = {w.scenario: w for w in works}
    three = [by["point_select"], by["read_only"], by["begin_commit"]]
    s3, p3, q3 = solve_fetches(three, [w.cpu_us for w in three])
    s2, p2 = solve(three[0], three[1], three[0].cpu_us, three[1].cpu_us)
    lines = [
        f"three units: {s3:.1f} µs per statement, {p3 * 1000:.3f} ns per instruction, {q3 * 1000:.2f} ns per L1i "
        f"miss; two units: {s2:.1f} µs per statement, {p2 * 1000:.3f} ns per instruction",
        "",
        "| scenario | statements | instructions | L1i misses | server CPU, measured | three units | two units |",
        "| --- | --: | --: | --: | --: | --: | --: |",
    ]
    for w in works:
        misses = w.icache_per_txn or 0.0
        with3 = w.statements_per_txn * s3 + w.instr_per_txn * p3 + misses * q3
        with2 = w.statements_per_txn * s2 + w.instr_per_txn * p2
        lines.append(
            f"| {w.scenario} | {w.statements_per_txn:g} | {w.instr_per_txn:,.0f} | {misses:,.0f} | {w.cpu_us:,.1f} µs "
            f"| {with3:,.1f} µs ({100 * (with3 / w.cpu_us - 1):+.0f} %) "
            f"| {with2:,.1f} µs ({100 * (with2 / w.cpu_us - 1):+.0f} %) |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="timing runs at 1 client per scenario")
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--keep", type=Path, help="keep the store in this folder")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="dbperf-cpu-units-"))
    folder.mkdir(parents=True, exist_ok=True)
    flags = {"store": str(folder / "store.duckdb"), "baselines-dir": str(folder / "baselines"), "server": args.server}
    settings = dataclasses.replace(resolve_settings(flags), yes=True, time=3)
    started, load = time.monotonic(), ", ".join(f"{v:.2f}" for v in os.getloadavg())
    try:
        session = pipeline.open_session(settings, QuietReporter(), containers=False)
        works = []
        for spec in SPECS:
            works.append(measure(settings, session, spec, args.runs))
            w = works[-1]
            print(f"{spec.key}: {w.cpu_us:,.1f} µs server CPU, {w.icache_per_txn:,.0f} L1i misses", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print()
    print(table(works))
    after = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    minutes = (time.monotonic() - started) / 60
    print(f"\n{len(works)} scenarios in {minutes:.0f} min; load average {load} before, {after} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
