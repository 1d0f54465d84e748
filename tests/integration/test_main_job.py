"""The README's first command, as a fresh machine runs it: ``bash tools/main.sh`` ends with a verdict.

The verdict it ends with on a machine with no timing baseline of its own is the cost verdict against
the committed ``baselines/cost/`` file (instructions and the work vector), so this test also checks that
the committed cost baseline still matches what this machine's sysbench, MariaDB and valgrind count (a
build or event-count change that moved it would turn the pass into a regression or a "no baseline" here,
first).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import REPO

pytestmark = pytest.mark.integration


def test_main_job_ends_with_a_cost_verdict_from_the_committed_baseline(cli_env: dict[str, str], tmp_path: Path):
    assert (REPO / "baselines/cost/mariadb-local/oltp_point_select/quick/1t.json").is_file()
    env = {k: v for k, v in cli_env.items() if k != "DBPERF_BASELINES_DIR"}  # the repository's baselines
    store = tmp_path / "dbperf.duckdb"
    out = subprocess.run(
        ["bash", "tools/main.sh", "--store", str(store), "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)
    (cost,) = [v for v in doc["verdicts"] if v["kind"] == "cost"]
    metrics = {m["metric"]: m for m in cost["metrics"]}
    metric = metrics["instr_per_txn"]
    assert (metric["metric"], metric["backend"], metric["n_base"], metric["n_head"]) == (
        "instr_per_txn",
        "callgrind",
        3,
        3,
    )
    assert metric["outcome"] == "pass", metric["reason"]
    assert abs(metric["estimate_pct"]) < 0.1  # the committed counts repeat here to well under 0.1 %
    # the committed baseline keeps the work vector (format 3): its gating components are judged too, and pass
    assert {"sys_fsync", "sys_pread", "bp_reads", "handler_reads", "rows_read"} <= set(metrics)
    assert all(m["outcome"] == "pass" for m in cost["metrics"]), [m["reason"] for m in cost["metrics"]]
    assert not any("holds no work vector" in w for w in cost["warnings"])
    timing = [v for v in doc["verdicts"] if v["kind"] != "cost"]
    assert timing, "the main job also makes a timing run"
    assert store.is_file() and len(doc["run_ids"]) == 4  # one timing run and three cost runs, stored
