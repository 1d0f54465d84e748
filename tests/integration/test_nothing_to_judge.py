"""Nothing to judge against: said before anything runs, and nothing measured (issue 33, item 5).

Real sysbench, the real local MariaDB binary and a real store; a baselines folder with none for tpcc.
Before, ``pytest scenarios/ -k tpcc`` measured for 13 minutes and then skipped both cases, and
``pytest --lf`` after that all-skipped session selected all 42 scenario tests.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO, SCENARIOS, SERVERS

from harness.store import Store

pytestmark = pytest.mark.integration


def test_gate_says_it_first_and_measures_nothing(dbperf, store_path: Path, tmp_path: Path):
    started = time.monotonic()
    out = dbperf.run(
        "gate", "-s", "tpcc", "--server", "mariadb-local", "--profile", "quick", "--store", store_path,
        "--baselines-dir", tmp_path / "baselines", timeout_s=300,
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert out.returncode == 0, out.stderr[-3000:]
    notes = [line for line in out.stderr.splitlines() if "nothing to judge tpcc" in line]
    assert len(notes) == 2 and all("record one with: dbperf baseline record --scenario tpcc" in n for n in notes)
    assert "nothing was measured" in out.stdout
    assert not store_path.exists() or Store(store_path).runs() == []
    print(f"\ngate with nothing to judge: {seconds:.1f} s")


def test_pytest_skips_before_measuring_and_lf_selects_none(cli_env: dict[str, str], tmp_path: Path):
    store = tmp_path / "store" / "dbperf.duckdb"
    common = [
        sys.executable, "-m", "pytest", "scenarios/", "-o", f"cache_dir={tmp_path / 'cache'}", "-rs",
        "--dbperf-scenarios-dir", SCENARIOS, "--dbperf-servers-dir", SERVERS, "--dbperf-profile", "quick",
        "--dbperf-server", "mariadb-local", "--dbperf-store", store,
        "--dbperf-baselines-dir", tmp_path / "baselines",
    ]  # fmt: skip

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [*map(str, common), *args]
        return subprocess.run(argv, cwd=REPO, env=cli_env, capture_output=True, text=True, timeout=600, check=False)

    started = time.monotonic()
    first = pytest_run("-k", "tpcc")
    seconds = time.monotonic() - started
    assert first.returncode == 0, first.stdout[-4000:]
    assert "2 skipped" in first.stdout, first.stdout[-4000:]
    lines = first.stdout.splitlines()
    said = [i for i, line in enumerate(lines) if line.startswith("dbperf: nothing to judge tpcc")]
    assert len(said) == 2, first.stdout[-4000:]
    assert max(said) < next(i for i, line in enumerate(lines) if line.startswith("scenarios/test_scenarios.py"))
    assert not store.exists() or Store(store).runs() == []  # nothing was measured
    again = pytest_run("--lf")
    assert "no previously failed tests, deselecting all items" in again.stdout, again.stdout[-3000:]
    assert again.returncode == 5, again.stdout[-3000:]  # pytest's "no tests ran": none selected, none measured
    print(f"\npytest scenarios/ -k tpcc with nothing to judge: {seconds:.1f} s, both skipped")
