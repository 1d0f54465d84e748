"""sysbench's output of one run, parsed: the wrapper's report lines, the histogram, the failure.

Warm-up is measured but excluded: ``--report-checkpoints=<warm-up>`` makes sysbench emit (and reset)
the cumulative statistics and the latency histogram at the end of the warm-up, so the final cumulative
record and ``--histogram=on`` cover exactly the measured window. p50/p95/p99 come from that histogram.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from harness.errors import LogParseError
from harness.model import IntervalSample, LatencyBucket, OperationStats, Totals
from harness.sysbench.failures import SysbenchFailure, classify_failure, overrun
from harness.sysbench.histogram import parse_histogram
from harness.sysbench.ops_protocol import miss_failure, parse_operations

#: What starts each of the wrapper's report lines (``@dbperf {...}``, one JSON record a line).
PREFIX = "@dbperf "


@dataclass(frozen=True)
class SysbenchOutcome:
    """What one sysbench run produced, parsed."""

    argv: tuple[str, ...]
    exit_code: int
    elapsed_s: float
    intervals: tuple[IntervalSample, ...]
    totals: Totals | None
    histogram: tuple[LatencyBucket, ...]
    failure: SysbenchFailure | None
    output: str
    #: per-operation statistics, when the script reports them (``DBPERF-OPS`` lines)
    operations: tuple[OperationStats, ...] = ()


def _counts(record: Mapping[str, float]) -> dict[str, int]:
    """The raw counts an interval and the totals both carry, under the records' own field names."""
    return {name: int(record[name]) for name in ("events", "reads", "writes", "other", "errors", "reconnects")}


def interval_sample(record: Mapping[str, float], warmup_s: float) -> IntervalSample:
    return IntervalSample(
        t_s=float(record["t"]),
        interval_s=float(record["dt"]),
        threads_running=int(record["threads"]),
        **_counts(record),
        latency_pct_ms=float(record["lat_pct"]) * 1000.0,
        warmup=float(record["t"]) <= warmup_s + 0.5,
    )


def _totals(record: Mapping[str, float]) -> Totals:
    return Totals(
        time_s=float(record["dt"]),
        **_counts(record),
        latency_min_ms=float(record.get("lat_min", 0.0)) * 1000.0,
        latency_avg_ms=float(record.get("lat_avg", 0.0)) * 1000.0,
        latency_max_ms=float(record.get("lat_max", 0.0)) * 1000.0,
        latency_pct_ms=float(record["lat_pct"]) * 1000.0,
    )


def parse_output(text: str, *, warmup_s: float, exit_code: int, expected_s: float) -> SysbenchOutcome:
    """Parse the wrapper's JSON lines, the histogram and any failure out of sysbench's output."""
    intervals: list[IntervalSample] = []
    cumulative: list[Mapping[str, float]] = []
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        try:
            record = json.loads(line[len(PREFIX) :])
        except json.JSONDecodeError:
            continue
        if record.get("kind") == "interval":
            intervals.append(interval_sample(record, warmup_s))
        elif record.get("kind") == "cumulative":
            cumulative.append(record)
    histogram = tuple(LatencyBucket(b.value_ms, b.count) for b in parse_histogram(text.splitlines()))
    # with a warm-up checkpoint the first cumulative record is the warm-up, the last the measured window
    measured = cumulative[-1] if cumulative and (warmup_s <= 0 or len(cumulative) >= 2) else None
    totals = _totals(measured) if measured else None
    failure = classify_failure(text, exit_code)
    operations: tuple[OperationStats, ...] = ()
    try:
        operations = parse_operations(text.splitlines(), totals.time_s if totals else 0.0)
    except LogParseError as exc:
        failure = failure or SysbenchFailure(
            kind="protocol",
            error_code=None,
            excerpt="",
            cause=f"the workload script wrote a malformed per-operation line ({exc.problem})",
            fix="fix the script's DBPERF-OPS output (scenarios/README.md, the per-operation protocol)",
        )
    failure = failure or miss_failure(operations)  # a read of a record that does not exist (issue 37)
    if failure is None and exit_code != 0:
        failure = classify_failure(text + "\n(exit code only)", exit_code)
    if failure is None and totals is None:
        failure = SysbenchFailure(
            kind="unknown",
            error_code=None,
            excerpt=" | ".join(text.strip().splitlines()[-3:]),
            cause="sysbench ended without a final report",
            fix="check the server's error log and sysbench's output above",
        )
    if failure is None and measured is not None and expected_s > 0:
        # in-flight transactions finish after --time: allow the slowest one (seconds at 1024 threads)
        tolerance = max(2.0, 1.5 * float(measured.get("lat_max", 0.0)))
        failure = overrun(expected_s, float(measured["t"]), tolerance_s=tolerance)
    return SysbenchOutcome(
        argv=(),
        exit_code=exit_code,
        elapsed_s=0.0,
        intervals=tuple(intervals),
        totals=totals,
        histogram=histogram,
        failure=failure,
        output=text,
        operations=operations,
    )
