"""sysbench 1.0.x text logs into stored runs (``dbperf import sysbench-log``).

An imported run is filed as the user says (:mod:`harness.imports.imported`). A log without a final
summary is an interrupted run: it is stored as failed, with its intervals, and never becomes a baseline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from harness.imports.imported import Filing, content_id, imported_run
from harness.imports.logformat import read_logs
from harness.imports.sysbench_log import ParsedLog, SysbenchTextLog
from harness.model import IntervalSample, LatencyBucket, Metrics, Probes, RunResult, Totals


def _intervals(parsed: ParsedLog) -> tuple[IntervalSample, ...]:
    samples = []
    previous = 0.0
    for item in parsed.intervals:
        dt = item.time_s - previous if item.time_s > previous else (parsed.report_interval_s or 1.0)
        previous = item.time_s
        samples.append(
            IntervalSample(
                t_s=item.time_s,
                interval_s=dt,
                threads_running=item.threads,
                events=round(item.tps * dt),
                reads=round(item.reads_per_s * dt),
                writes=round(item.writes_per_s * dt),
                other=round(item.other_per_s * dt),
                errors=round(item.errors_per_s * dt),
                reconnects=round(item.reconnects_per_s * dt),
                latency_pct_ms=item.latency_pct_ms,
            )
        )
    return tuple(samples)


def to_run(parsed: ParsedLog, *, scenario: str, server: str, server_version: str, text: str) -> RunResult:
    """One imported run; its id is derived from the file's content so importing twice is idempotent."""
    histogram = tuple(LatencyBucket(b.value_ms, b.count) for b in parsed.histogram)
    totals = None
    metrics = None
    summary = parsed.summary
    if summary is not None:
        totals = Totals(
            time_s=summary.total_time_s,
            events=summary.transactions if summary.transactions else summary.events,
            reads=summary.reads,
            writes=summary.writes,
            other=summary.other,
            errors=summary.ignored_errors,
            reconnects=summary.reconnects,
            latency_min_ms=summary.latency_min_ms,
            latency_avg_ms=summary.latency_avg_ms,
            latency_max_ms=summary.latency_max_ms,
            latency_pct_ms=summary.latency_pct_ms,
        )
        metrics = Metrics.derive(totals, histogram, Probes())
        if metrics.p95_ms is not None and summary.percentile != 95 and not histogram:
            metrics = dataclasses.replace(metrics, p95_ms=None)  # the summary's percentile is not the 95th
    if parsed.failure is not None:
        failure = parsed.failure.message()
    elif totals is None:
        failure = "the log has no final summary (an interrupted run); its intervals are kept"
    else:
        failure = ""
    return imported_run(
        Filing(scenario, server, server_version),
        run_id=content_id(text),
        script=scenario,
        threads=parsed.threads or (parsed.intervals[0].threads if parsed.intervals else 1),
        client=parsed.sysbench_version or "unknown",
        failure=failure,
        totals=totals,
        metrics=metrics,
        intervals=_intervals(parsed),
        histogram=histogram,
        options={"file": parsed.path},
    )


def import_logs(paths: Sequence[Path], *, scenario: str, server: str, server_version: str = "") -> list[RunResult]:
    """Parse every file first (so one bad file stores nothing), then return the runs."""
    return [
        to_run(read.log, scenario=scenario, server=server, server_version=server_version, text=read.text)
        for read in read_logs(SysbenchTextLog(), paths)
    ]
