"""The forecast against the clock: for changes whose direction is known, a cost comparison (its forecast of
single-client TPS) beside timing pairs at one client (the measured change), as a table (docs/forecast.md).

    python benchmarks/forecast_check.py [--cases flush_insert,neutral_sort] [--pairs 7] [--time 3]
                                        [--warmup 1] [--cost-runs 2] [--server mariadb-local] [--keep DIR]

It first calibrates this runner (``dbperf calibrate``: timing runs and a cost run each of oltp_point_select
and oltp_read_only, the I/O units in $TMPDIR), then per case runs ``--cost-runs`` cost runs a side (the
forecast comes with the cost verdict) and ``--pairs`` interleaved timing pairs at 1 client judged on QPS alone
(7 pairs reach p = 0.016 with the signed-rank test), on the quick profile's datasets (ci's for the read-only
buffer-pool case). The table: the measured QPS change (Hodges-Lehmann estimate and its interval), the forecast
(and its interval), whether the sign is right (the forecast moves as the measured estimate does, or both stay
within 3 points of 0; "undecided" where the measured interval holds 0), and whether the forecast is within
+-30 % of a measured change over 5 %, or within 3 points of one under 5 %. Everything goes to a temporary
folder, removed at the end unless ``--keep``. Timing depends on the machine's load: the table says it, from
``os.getloadavg``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import pipeline
from harness.config.settings import Settings, resolve_settings
from harness.measure.session import QuietReporter, Session
from harness.model import MetricVerdict, Verdict
from harness.model.forecast import Forecast
from harness.pipeline.calibrate import calibrate

MINIMAL_BINLOG = {"log_bin": "binlog", "server_id": "1", "binlog_format": "ROW"}


@dataclass(frozen=True)
class Check:
    key: str
    label: str
    scenario: str
    head: dict[str, str]
    base: dict[str, str] = dataclasses.field(default_factory=dict)
    profile: str = "quick"  # the dataset: quick's is small; read_only needs ci's so that 6 MB of pool misses
    #: the timing runs' warm-up seconds when the case needs more than ``--warmup`` to reach the state the
    #: forecast describes (a query cache that holds every key: its cost window asks a warm cache)
    warmup: int | None = None


CHECKS: tuple[Check, ...] = (
    Check("flush_insert", "redo flush 2 -> 1, oltp_insert", "oltp_insert", {"innodb_flush_log_at_trx_commit": "1"}),
    Check("flush_tpcc", "redo flush 2 -> 1, tpcc", "tpcc", {"innodb_flush_log_at_trx_commit": "1"}),
    Check("small_pool_ycsb_a", "buffer pool 6 MB, ycsb_a", "ycsb_a", {"innodb_buffer_pool_size": "6291456"}),
    Check(
        "small_pool_read_only",
        "buffer pool 6 MB, oltp_read_only",
        "oltp_read_only",
        {"innodb_buffer_pool_size": "6291456"},
        profile="ci",
    ),
    Check("pfs", "performance_schema on, oltp_point_select", "oltp_point_select", {"performance_schema": "ON"}),
    Check(
        "query_cache",
        "query cache on (64 MB), oltp_point_select",
        "oltp_point_select",
        {"query_cache_type": "1", "query_cache_size": "67108864"},
        warmup=10,  # 20,000 keys at 10,000 selects a second: over 99 % of them cached before the measured part
    ),
    Check(
        "binlog_minimal",
        "binlog_row_image MINIMAL (log_bin on), oltp_update_non_index",
        "oltp_update_non_index",
        {"binlog_row_image": "MINIMAL"},
        base=MINIMAL_BINLOG,
    ),
    Check(
        "neutral_sort",
        "neutral: sort_buffer_size 4 MB, oltp_point_select",
        "oltp_point_select",
        {"sort_buffer_size": "4194304"},
    ),
    Check("neutral_conn", "neutral: max_connections 500, oltp_read_only", "oltp_read_only", {"max_connections": "500"}),
)


@dataclass(frozen=True)
class Row:
    check: Check
    measured: MetricVerdict | None
    forecast: Forecast | None
    seconds: float
    why: str = ""


def _load() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def _sides(settings: Settings, check: Check) -> pipeline.ComparisonSpec:
    case = pipeline.resolve(settings, check.scenario, settings.server)
    base = case.server.with_variables(check.base) if check.base else case.server
    return pipeline.ComparisonSpec(base, base.with_variables(check.head), case.scenario)


def run_check(settings: Settings, session: Session, check: Check, args: argparse.Namespace, seed: int) -> Row:
    started = time.monotonic()
    profile = dataclasses.replace(settings, profile=check.profile)
    cost = dataclasses.replace(profile, cost=True, repetitions=args.cost_runs)
    counted = pipeline.compare(
        cost, [_sides(cost, check)], session.reporter, pipeline.JudgeOptions(seed=seed), session=session
    )
    verdict = next((v for v in counted.verdicts if v.kind == "cost"), None)
    forecast = verdict.forecast if verdict is not None else None
    why = "" if forecast is not None else _why(verdict)
    timing = dataclasses.replace(
        profile,
        cost=False,
        repetitions=args.pairs,
        threads=(1,),
        time=args.time,
        warmup=args.warmup if check.warmup is None else max(args.warmup, check.warmup),
        gate_metrics=("qps",),
    )
    timed = pipeline.compare(
        timing,
        [_sides(timing, check)],
        session.reporter,
        pipeline.JudgeOptions(seed=seed, limit_s=None),
        session=session,
    )
    qps = next((m for v in timed.verdicts if v.kind == "time" for m in v.metrics if m.metric == "qps"), None)
    return Row(check, qps, forecast, time.monotonic() - started, why)


def _why(verdict: Verdict | None) -> str:
    if verdict is None:
        return "no cost verdict"
    return next((w for w in verdict.warnings if "forecast" in w), verdict.outcome)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f} %"


def judged(row: Row) -> tuple[str, str]:
    """(sign right?, within the tolerance?) as the module docstring defines them; a sign against a measured
    interval that holds 0 is marked "(undecided)": the timing pairs did not decide the direction."""
    m, f = row.measured, row.forecast
    if m is None or f is None or m.estimate_pct is None:
        return "-", "-"
    low, high = m.ci_low_pct, m.ci_high_pct
    undecided = low is None or high is None or low <= 0 <= high
    gap = abs(f.tps_pct - m.estimate_pct)
    if abs(f.tps_pct) <= 3.0 and abs(m.estimate_pct) <= 3.0:
        sign = "yes"  # both no change to speak of
    else:
        sign = "yes" if f.tps_pct * m.estimate_pct > 0 else "no"
    within = gap <= 0.3 * abs(m.estimate_pct) if abs(m.estimate_pct) > 5.0 else gap <= 3.0
    return sign + (" (undecided)" if undecided else ""), "yes" if within else "no"


def base_times(row: Row) -> str:
    """The base side's time per transaction: forecast, and measured (statements per transaction / QPS)."""
    m, f = row.measured, row.forecast
    if m is None or f is None or not m.base_median:
        return "-"
    statements = next((t.base_count for t in f.terms if t.component == "statements"), 0.0)
    return f"{f.base_us:,.0f} / {statements * 1e6 / m.base_median:,.0f}"


def table(rows: list[Row]) -> str:
    lines = [
        "| case | measured QPS change, 1 client [95 % CI] | forecast [interval] | sign right? | within +-30 % "
        "(3 points under 5 %)? | base µs/txn forecast / measured | minutes |",
        "|---|--:|--:|:-:|:-:|--:|--:|",
    ]
    for row in rows:
        m, f = row.measured, row.forecast
        measured = "-" if m is None else f"{_pct(m.estimate_pct)} [{_pct(m.ci_low_pct)}, {_pct(m.ci_high_pct)}]"
        forecast = row.why or "-" if f is None else f"{_pct(f.tps_pct)} [{_pct(f.tps_low_pct)}, {_pct(f.tps_high_pct)}]"
        sign, within = judged(row)
        times = base_times(row)
        lines.append(
            f"| {row.check.label} | {measured} | {forecast} | {sign} | {within} | {times} | {row.seconds / 60:.1f} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="all", help=f"comma-separated, of: {', '.join(c.key for c in CHECKS)}")
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--pairs", type=int, default=7, help="timing pairs at 1 client per case (7: p >= 0.016)")
    parser.add_argument("--time", type=int, default=3, help="measured seconds per timing run")
    parser.add_argument("--warmup", type=int, default=1, help="warm-up seconds per timing run")
    parser.add_argument("--cost-runs", type=int, default=2, help="cost runs a side per case")
    parser.add_argument("--calibration-runs", type=int, default=3, help="timing runs of the calibration")
    parser.add_argument("--keep", type=Path, help="keep the store and calibration in this folder")
    parser.add_argument("--reuse-calibration", action="store_true", help="use the calibration kept in --keep")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    chosen = [c for c in CHECKS if args.cases == "all" or c.key in args.cases.split(",")]
    if not chosen:
        parser.error(f"no such case: {args.cases}")

    folder = args.keep or Path(tempfile.mkdtemp(prefix="dbperf-forecast-check-"))
    folder.mkdir(parents=True, exist_ok=True)
    flags = {"store": str(folder / "store.duckdb"), "baselines-dir": str(folder / "baselines"), "server": args.server}
    settings = dataclasses.replace(resolve_settings(flags), yes=True)
    reporter = QuietReporter()
    started, load_before = time.monotonic(), _load()
    try:
        if not args.reuse_calibration:
            longer = dataclasses.replace(settings, time=args.time + 2, warmup=args.warmup)
            calibrated = calibrate(longer, reporter, repetitions=args.calibration_runs)
            print(f"calibrated in {time.monotonic() - started:.0f} s: {calibrated.path}", flush=True)
        session = pipeline.open_session(settings, reporter, containers=False)
        rows = []
        for i, check in enumerate(chosen):
            row = run_check(settings, session, check, args, args.seed + i)
            rows.append(row)
            print(table([row]).splitlines()[-1], flush=True)  # each row as it is done
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print()
    print(table(rows))
    print(
        f"\n{len(rows)} case(s) in {(time.monotonic() - started) / 60:.0f} min on {os.cpu_count()} cores; "
        f"load average {load_before} before, {_load()} after; {args.pairs} pairs of {args.warmup}+{args.time} s "
        f"at 1 client, {args.cost_runs} cost runs a side"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
