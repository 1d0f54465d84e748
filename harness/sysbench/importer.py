"""The import stage: turn existing sysbench 1.0.x text logs into stored runs.

Logs say nothing about the server or the machine, so imported runs carry the scenario and server
names the user gives, ``source = "import"``, and a testbed marked as imported (never comparable with
a measured baseline). A log without a final summary is an interrupted run: it is stored as failed,
with its intervals, and never becomes a baseline.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import LogParseError
from harness.model import (
    IntervalSample,
    LatencyBucket,
    Metrics,
    Probes,
    RunResult,
    RunStatus,
    Testbed,
    Totals,
)
from harness.sysbench.textlog import ParsedLog, parse_sysbench_log


def _testbed(version: str | None) -> Testbed:
    return Testbed(
        cpu_model="unknown (imported log)",
        cores=0,
        memory_gb=0.0,
        kernel="unknown",
        disk="unknown",
        sysbench_version=version or "unknown",
        container_engine=None,
        hostname="imported",
    )


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
    run_id = "imp-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    now = datetime.now(UTC)
    histogram = tuple(LatencyBucket(b.value_ms, b.count) for b in parsed.histogram)
    totals = None
    failure = ""
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
    if parsed.failure is not None:
        failure = parsed.failure.message()
    elif totals is None:
        failure = "the log has no final summary (an interrupted run); its intervals are kept"
    status: RunStatus = "ok" if totals is not None and not failure else "failed"
    threads = parsed.threads or (parsed.intervals[0].threads if parsed.intervals else 1)
    metrics = Metrics.derive(totals, histogram, Probes()) if status == "ok" else Metrics()
    if metrics.p95_ms is not None and summary is not None and summary.percentile != 95 and not histogram:
        metrics = dataclasses.replace(metrics, p95_ms=None)
    return RunResult(
        run_id=run_id,
        started_at=now,
        finished_at=now,
        status=status,
        failure=failure,
        source="import",
        server=server,
        flavour="unknown",
        provider="import",
        server_version=server_version,
        config_hash="",
        scenario=scenario,
        scenario_hash="",
        profile="import",
        script=scenario,
        threads=max(1, threads),
        repetition=1,
        warmup_s=0.0,
        time_s=summary.total_time_s if summary else 0.0,
        testbed=_testbed(parsed.sysbench_version),
        options={"file": parsed.path},
        intervals=_intervals(parsed),
        histogram=histogram,
        totals=totals if status == "ok" else None,
        metrics=metrics,
    )


def import_logs(paths: Sequence[Path], *, scenario: str, server: str, server_version: str = "") -> list[RunResult]:
    """Parse every file first (so one bad file stores nothing), then return the runs."""
    runs = []
    for path in paths:
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise LogParseError(str(path), 0, f"cannot read the file ({exc.strerror})") from exc
        parsed = parse_sysbench_log(text, str(path))
        runs.append(to_run(parsed, scenario=scenario, server=server, server_version=server_version, text=text))
    return runs
