"""The timing gate can fail: a baseline recorded as the README says, then the server's CPU shared by two
busy loops must FAIL `dbperf gate` and `pytest scenarios/ -k point_select` with a regression on QPS or
p95, and the same without the busy loops must not.

The planted slowdown is large (on this kind of machine QPS -35 %, p95 +250 %), because timing noise on
shared VMs is large; small changes are the cost metric's job (tests/integration/test_cost.py).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

POINT = ("--scenario", "oltp_point_select", "--server", "mariadb-local")
TIMING = ("--no-cost", "--repetitions", "8")  # README: baselines and gates of 8 timing runs


@contextmanager
def busy_loops(cpu: str = "0", count: int = 2) -> Iterator[None]:
    """Processes spinning on the server's CPU (mariadb-local pins the server to CPU 0)."""
    loops = [
        subprocess.Popen(["taskset", "-c", cpu, "sh", "-c", "while :; do :; done"], stdin=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(timeout=30)


def gate(dbperf, baselines: Path, store: Path) -> subprocess.CompletedProcess[str]:
    return dbperf.run("gate", *POINT, *TIMING, "--baselines-dir", baselines, "--store", store, "--json", timeout_s=900)


def harmful(doc: dict[str, object]) -> set[str]:
    return {
        m["metric"]  # type: ignore[index]
        for v in doc["verdicts"]  # type: ignore[attr-defined]
        for m in v["metrics"]
        if m["outcome"] == "regression"
    }


def test_busy_server_cpu_fails_the_gate_and_pytest(dbperf, inner_pytest, tmp_path, store_path):
    baselines = tmp_path / "baselines"
    recorded = dbperf.run(
        "baseline", "record", *POINT, *TIMING, "--baselines-dir", baselines, "--store", store_path, timeout_s=900
    )
    assert recorded.returncode == 0, recorded.stderr

    quiet = gate(dbperf, baselines, store_path)
    assert quiet.returncode == 0, quiet.stdout[-3000:] + quiet.stderr[-2000:]

    with busy_loops():
        busy = gate(dbperf, baselines, store_path)
        pytest_busy = inner_pytest(
            "scenarios/", "-k", "point_select", "--dbperf-no-cost", "--dbperf-repetitions", "8",
            "--dbperf-baselines-dir", baselines, "--dbperf-store", store_path,
        )  # fmt: skip
    assert busy.returncode == 1, busy.stdout[-3000:] + busy.stderr[-2000:]
    assert harmful(json.loads(busy.stdout)) & {"qps", "p95_ms"}
    assert pytest_busy.returncode == 1, pytest_busy.stdout[-3000:]
    assert "PerformanceRegression" in pytest_busy.stdout

    pytest_quiet = inner_pytest(
        "scenarios/", "-k", "point_select", "--dbperf-no-cost", "--dbperf-repetitions", "8",
        "--dbperf-baselines-dir", baselines, "--dbperf-store", store_path,
    )  # fmt: skip
    assert pytest_quiet.returncode == 0, pytest_quiet.stdout[-3000:]
