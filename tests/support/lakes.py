"""Stores shared through DuckLake (tests/integration/test_lake*.py): synthetic stored runs, dbperf on a lake."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import model
from harness.model import Metrics, RunResult, Totals
from support import REPO
from support.cli import dbperf_argv
from support.factories import make_testbed

TESTBED_A = make_testbed(
    cpu_model="AMD EPYC 7763 64-Core",
    cores=16,
    memory_gb=62.7,
    kernel="6.1.0-28-amd64",
    disk="nvme0n1 (ssd)",
    hostname="",
)
TESTBED_B = make_testbed(
    cpu_model="Intel Xeon Gold 6338", cores=8, memory_gb=31.2, kernel="6.1.0-28-amd64", disk="sda (ssd)", hostname=""
)


def synthetic(run_id: str, index: int, *, testbed: model.Testbed = TESTBED_A, qps: float = 1000.0) -> RunResult:
    start = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=index)
    return RunResult(
        run_id=run_id,
        started_at=start,
        finished_at=start + timedelta(seconds=35),
        status="ok",
        server="mariadb-local",
        flavour="mariadb",
        provider="local",
        server_version="10.11.14-MariaDB",
        config_hash="cfg1",
        scenario="oltp_point_select",
        scenario_hash="s1",
        profile="ci",
        script="oltp_point_select",
        threads=8,
        repetition=index % 3,
        warmup_s=1.0,
        time_s=10.0,
        testbed=testbed,
        git_sha=f"sha{index // 3:04d}",
        group_id=f"g{index // 3}",
        intervals=tuple(
            model.IntervalSample(float(s + 1), 1.0, 8, 100 + s, 1400, 0, 200, 0, 0, 2.5) for s in range(10)
        ),
        histogram=tuple(model.LatencyBucket(0.1 * (b + 1), b + 1) for b in range(30)),
        totals=Totals(10.0, int(qps * 10), int(qps * 10), 0, 0, 0, 0),
        metrics=Metrics(qps=qps, tps=qps, p95_ms=2.0),
    )


def dbperf(env: dict[str, str], *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*dbperf_argv(), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900
    )
