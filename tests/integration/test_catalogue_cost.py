"""One cost run of every catalogue scenario on the embedded MariaDB, through ``pytest scenarios/``.

The longest test of the suite, in a file of its own: xdist (``--dist loadfile``) gives each file one worker, so
here it runs beside the rest of the catalogue's tests instead of after them.
"""

from __future__ import annotations

import pytest
from support import SCENARIOS
from support.integration import passed_ids

from harness.config.scenarios import available_scenarios, load_scenario
from harness.store import Store

pytestmark = pytest.mark.integration


def test_every_scenario_counts_its_cost(inner_pytest, store_path, baselines_dir, cache_dir):
    """One cost run of every scenario on the embedded MariaDB: each recipe (read view for writes) works."""
    out = inner_pytest(
        "scenarios/", "-v", "--dbperf-profile", "quick", "--dbperf-server", "mariadb-local", "--dbperf-cost",
        "--dbperf-repetitions", "1", "--dbperf-store", store_path, "--dbperf-cache-dir", cache_dir,
        "--dbperf-baselines-dir", baselines_dir, "--dbperf-measure-unjudged",
        timeout_s=2400,  # a cost run of every scenario: about 8 min on a quiet machine, over 15 at load 30
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    names = available_scenarios(SCENARIOS)
    assert passed_ids(out.stdout) == {f"{name}-mariadb-local-cost" for name in names}, out.stdout[-4000:]
    runs = Store(store_path).runs()
    assert {r.scenario for r in runs} == set(names)
    for run in runs:
        assert run.ok and run.kind == "cost" and run.backend == "callgrind", run.failure
        assert run.metrics.instr_per_txn is not None and run.metrics.instr_per_txn > 10_000
        assert run.metrics.qps is None
        writes = load_scenario(run.scenario, SCENARIOS, "quick").writes
        assert any("read view" in note for note in run.notes) == writes
