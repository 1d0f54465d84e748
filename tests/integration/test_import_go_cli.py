"""``dbperf import go-tpc`` and ``dbperf import go-ycsb`` through the real CLI into a real DuckDB store, read back
with ``dbperf runs --json``, ``dbperf report`` and the store (issue 22, "Importing go-tpc and go-ycsb output").
"""

from __future__ import annotations

import json
import re

import pytest
from support import REPO
from support.cli import one_line_error

from harness.store import Store

pytestmark = pytest.mark.integration

DATA = REPO / "tests" / "data"
TPC_LOGS = [DATA / "go-tpc" / "tpcc_errors.log", DATA / "go-tpc" / "tpcc_interrupted.log"]
YCSB_LOG = DATA / "go-ycsb" / "ycsb_load_run.log"


def test_import_go_tpc_and_read_it_back(dbperf, store_path):
    out = dbperf.run(
        "import", "go-tpc", *TPC_LOGS, "--scenario", "tpcc-prod", "--server", "tidb-7", "--threads", "16",
        "--store", store_path, "--json", timeout_s=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    imported = {doc["status"]: doc for doc in json.loads(out.stdout)}
    # tpcc_errors.log: "tpmC: 3779.9, tpmTotal: 8222.7, efficiency: 7348.2%"
    assert imported["ok"]["nopm"] == 3779.9
    assert imported["failed"]["nopm"] is None

    runs = {doc["status"]: doc for doc in dbperf.runs(store_path)}
    assert sorted(runs) == ["failed", "ok"]
    ok = runs["ok"]
    assert (ok["scenario"], ok["server"], ok["threads"], ok["profile"]) == ("tpcc-prod", "tidb-7", 16, "import")
    assert ok["run_id"] == imported["ok"]["run_id"]
    assert ok["qps"] is None  # go-tpc does not count queries
    errors = 121 + 106 + 16 + 8 + 6  # the [Summary] *_ERR counts
    assert ok["errors_per_s"] == pytest.approx(errors / 60.0)
    assert "no '[Summary]' report" in runs["failed"]["failure"]

    stored = Store(store_path).get(str(ok["run_id"]))
    assert stored.source == "import"
    assert stored.options["nopm"] == "3779.9" and stored.options["tool"] == "go-tpc"
    assert len(stored.intervals) == 6
    by_type = {o.type: o for o in stored.operations}
    assert sorted(by_type) == ["DELIVERY", "NEW_ORDER", "ORDER_STATUS", "PAYMENT", "STOCK_LEVEL"]
    # [Summary] NEW_ORDER - Takes(s): 60.0, Count: 3779, ..., 95th(ms): 18.9 ; NEW_ORDER_ERR Count: 121
    assert (by_type["NEW_ORDER"].count, by_type["NEW_ORDER"].errors) == (3779, 121)
    assert by_type["NEW_ORDER"].p95_ms == pytest.approx(18.9, rel=0.009)
    assert stored.metric("NEW_ORDER.ops_per_min") == pytest.approx(3779.9, rel=2e-3)
    failed = Store(store_path).get(str(runs["failed"]["run_id"]))
    assert len(failed.intervals) == 4 and failed.operations == ()

    report = dbperf.run("report", "--format", "markdown", "--store", store_path, timeout_s=120)
    assert report.returncode == 0, report.stderr
    assert "NOPM (tpmC-like, unaudited): 3779.9" in report.stdout
    # the per-type table native TPC-C runs get: NEW_ORDER at go-tpc's own TPM 3779.9 a minute, 121 failed
    row = next(line for line in report.stdout.splitlines() if "| NEW_ORDER |" in line)
    assert "| 3,780 |" in row and "| 121 |" in row, row
    # the headline is never called plain tpmC (only quoted as what go-tpc prints)
    assert not re.search(r"tpmC(?![-'])", report.stdout), report.stdout


def test_import_go_ycsb_load_and_run(dbperf, store_path):
    out = dbperf.run(
        "import", "go-ycsb", YCSB_LOG, "--scenario", "ycsb_b", "--server", "tidb-7", "--store", store_path,
        timeout_s=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    runs = {doc["scenario"]: doc for doc in dbperf.runs(store_path)}
    assert sorted(runs) == ["ycsb_b", "ycsb_b-load"]
    run = runs["ycsb_b"]
    assert run["status"] == "ok" and run["threads"] == 8
    # run phase: READ 190001 + UPDATE 9998 in Takes(s) 21.8; TOTAL's 95th(us): 1830
    assert run["tps"] == pytest.approx((190001 + 9998) / 21.8)
    assert run["p95_ms"] == pytest.approx(1.830)
    assert {op["type"]: op["count"] for op in run["operations"]} == {"READ": 190001, "UPDATE": 9998}
    stored = Store(store_path).get(str(run["run_id"]))
    assert {o.type: o.count for o in stored.operations} == {"READ": 190001, "UPDATE": 9998}
    assert [i.t_s for i in stored.intervals] == [5.0, 10.0, 15.0, 20.0]
    assert not any("password" in k or "s3cret" in v for k, v in stored.options.items())
    load = Store(store_path).get(str(runs["ycsb_b-load"]["run_id"]))
    assert {o.type: o.count for o in load.operations} == {"INSERT": 100000}

    report = dbperf.run("report", "--format", "markdown", "--store", store_path, timeout_s=120)
    assert report.returncode == 0, report.stderr
    assert "ycsb_b-load" in report.stdout and "ycsb_b" in report.stdout
    assert any("| INSERT |" in line and "ycsb_b-load" in line for line in report.stdout.splitlines())


@pytest.mark.parametrize(
    ("args", "wrong"),
    [
        (["go-tpc", TPC_LOGS[0], "--threads", "4"], DATA / "go-ycsb" / "ycsb_a_run.log"),
        (["go-ycsb", YCSB_LOG], DATA / "sysbench" / "oltp_read_write.log"),
    ],
    ids=["ycsb-log-as-go-tpc", "sysbench-log-as-go-ycsb"],
)
def test_other_formats_are_refused_in_one_line(dbperf, store_path, args, wrong):
    out = dbperf.run("import", *args, wrong, "--store", store_path, timeout_s=120)
    assert out.returncode == 2, (out.stdout, out.stderr)
    line = one_line_error(out.stderr)
    assert line.startswith("dbperf: error: ") and f"{wrong}:1: " in line, line
    assert dbperf.runs(store_path) == []  # every file is checked before any is stored
