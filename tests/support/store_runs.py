"""Full runs (intervals, histogram, probes) for the store's tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from harness.model import IntervalSample, LatencyBucket, Metrics, Probes, RunResult, Totals
from support.factories import make_testbed

TESTBED = make_testbed(
    cpu_model="AMD EPYC 7763 64-Core",
    cores=16,
    memory_gb=62.7,
    kernel="6.8.0-45-generic",
    disk="nvme",
    container_engine=None,
    hostname="bench-01",
)

T0 = datetime(2025, 3, 4, 10, 20, 30, 123456, tzinfo=timezone(timedelta(hours=2)))


def make_run(run_id: str, index: int = 0, *, samples: bool = False, **overrides: object) -> RunResult:
    """A valid ok run; ``samples`` adds intervals, a histogram and probes."""
    totals = Totals(30.0, 3000 + index, 42000, 0, 6000, 0, 1, 0.41, 1.23, 19.5, 2.5)
    values: dict[str, object] = {
        "run_id": run_id,
        "started_at": T0 + timedelta(seconds=index),
        "finished_at": T0 + timedelta(seconds=index + 35),
        "status": "ok",
        "server": "mariadb-11.4",
        "flavour": "mariadb",
        "provider": "local",
        "server_version": "11.4.2-MariaDB",
        "config_hash": "c0ffee",
        "scenario": "oltp_read_only",
        "scenario_hash": "5ce7a1",
        "profile": "quick",
        "script": "oltp_read_only",
        "threads": 8,
        "repetition": index % 5,
        "warmup_s": 5.0,
        "time_s": 30.0,
        "testbed": TESTBED,
        "git_sha": "abc1234",
        "variables": {"innodb_buffer_pool_size": "1G"},
        "options": {"--rand-type": "uniform"},
        "server_cpuset": "0-7",
        "client_cpuset": "8-15",
        "group_id": "g1",
        "label": "nightly",
        "totals": totals,
        "metrics": Metrics(qps=1600.0 + index, tps=100.0 + index, p95_ms=2.5, errors_per_s=0.0),
    }
    if samples:
        values["intervals"] = (
            IntervalSample(1.0, 1.0, 8, 90, 1260, 0, 180, 0, 0, 3.1, warmup=True),
            IntervalSample(2.0, 1.0, 8, 101, 1414, 0, 202, 1, 0, 2.4),
        )
        values["histogram"] = (LatencyBucket(1.1, 40), LatencyBucket(2.43, 55), LatencyBucket(19.5, 1))
        probes = Probes(
            server_cpu_s=12.5,
            instructions=9.1e9,
            instructions_note="perf",
            status_deltas={"Com_select": 42000},
        )
        values["probes"] = probes
        values["metrics"] = Metrics.derive(totals, values["histogram"], probes)  # type: ignore[arg-type]
    values.update(overrides)
    return RunResult(**values)  # type: ignore[arg-type]
