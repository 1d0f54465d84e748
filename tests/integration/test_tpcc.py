"""The TPC-C-like workload (scenarios/lua/tpcc.lua) and its consistency check, on real servers.

- NURand: the Lua generators' samples against the exact distribution (chi-square), and a uniform
  sample is told apart (the test can fail).
- On a throwaway MariaDB: load 1 warehouse (the same rows every time, pinned with the loader's version),
  run the mix at 4 threads, every thread's DBPERF-OPS line carries the five types and their counts add up
  to sysbench's events; conditions 1-10 and 12 hold, and each deliberately corrupted table fails the check
  with every broken condition named, with its warehouse and district;
  a lock held past innodb_lock_wait_timeout is retried (1205) and counted, never a failed run.
- Through the pipeline (quick profile) on mariadb-local and MySQL 9.7: the run passes its check; with
  the warehouse corrupted before the check, the run fails with the condition's line.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
import pymysql
import pytest
from scipy.stats import chisquare
from support import SCENARIOS
from support.integration import throwaway_mariadb

from harness import pipeline
from harness.measure import consistency
from harness.measure.session import QuietReporter
from harness.model.endpoint import Endpoint

pytestmark = pytest.mark.integration

SCRIPT = SCENARIOS / "lua" / "tpcc.lua"
TYPES = {"NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"}


def nurand_pmf(a: int, x: int, y: int, c: int) -> np.ndarray:
    """The exact distribution of NURand(A, x, y) = (((rand(0, A) | rand(x, y)) + C) % (y - x + 1)) + x."""
    n = y - x + 1
    r1 = np.arange(0, a + 1)
    pmf = np.zeros(n)
    for r2 in range(x, y + 1):
        values = ((r1 | r2) + c) % n
        np.add.at(pmf, values, 1.0)
    return pmf / pmf.sum()


def _copy_script(folder: Path) -> None:
    shutil.copy(SCRIPT, folder / "tpcc.lua")
    shutil.copy(SCRIPT.with_name("dbperf_ops.lua"), folder / "dbperf_ops.lua")  # required by tpcc.lua


def _sample(tmp_path: Path, samples: int) -> dict[str, dict[str, object]]:
    _copy_script(tmp_path)
    out = subprocess.run(
        ["sysbench", "tpcc.lua", f"--nurand_samples={samples}", "--rand-seed=7", "nurand"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    found = [json.loads(line[len("NURAND ") :]) for line in out.splitlines() if line.startswith("NURAND ")]
    return {str(g["name"]): g for g in found}


def _observed(counts: dict[str, int], x: int, n: int) -> np.ndarray:
    obs = np.zeros(n)
    for value, count in counts.items():
        obs[int(value) - x] = count
    return obs


def test_nurand_matches_its_definition(tmp_path):
    samples = 200_000
    gens = _sample(tmp_path, samples)
    for name, (a, x, y, bins) in {
        "last": (255, 0, 999, 1000),
        "customer": (1023, 1, 3000, 3000),
        "item": (8191, 1, 100_000, 500),  # 100,000 values in 500 bins of 200
    }.items():
        g = gens[name]
        pmf = nurand_pmf(a, x, y, int(g["c"]))  # type: ignore[call-overload]
        obs = _observed(g["counts"], x, y - x + 1)  # type: ignore[arg-type]
        assert obs.sum() == samples
        if bins < len(pmf):
            pmf, obs = pmf.reshape(bins, -1).sum(axis=1), obs.reshape(bins, -1).sum(axis=1)
        fit = chisquare(obs, pmf * samples)
        assert fit.pvalue > 1e-4, f"{name}: NURand sample does not follow NURand({a}, {x}, {y}): p={fit.pvalue:.2g}"
        uniform = chisquare(obs, np.full(len(obs), samples / len(obs)))
        assert uniform.pvalue < 1e-12, f"{name}: the test cannot tell NURand from uniform"


# -- a throwaway MariaDB with one small warehouse -----------------------------------------------


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    root = tmp_path_factory.mktemp("tpcc-mariadb")
    options = ("--innodb-lock-wait-timeout=1", "--innodb-flush-log-at-trx-commit=2")
    with throwaway_mariadb(root / "d", *options) as endpoint:
        _sysbench(endpoint, root, "prepare", "--threads=1")
        yield endpoint


def _sysbench(endpoint: Endpoint, folder: Path, command: str, *args: str) -> str:
    _copy_script(folder)
    argv = [
        "sysbench",
        "tpcc.lua",
        *endpoint.sysbench_args(),
        "--tables=1",
        "--table-size=10000",
        *args,
        command,
    ]
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def _ops(output: str) -> tuple[list[dict[str, object]], dict[str, Counter[str]]]:
    """Every thread's DBPERF-OPS line, and per type the protocol's counts with the DBPERF-TPCC extras."""
    lines = [json.loads(line[len("DBPERF-OPS ") :]) for line in output.splitlines() if line.startswith("DBPERF-OPS ")]
    extras = [
        json.loads(line[len("DBPERF-TPCC ") :]) for line in output.splitlines() if line.startswith("DBPERF-TPCC ")
    ]
    assert len(extras) == len(lines)
    totals: dict[str, Counter[str]] = {}
    for line in lines:
        for name, op in line["ops"].items():  # type: ignore[attr-defined]
            total = totals.setdefault(name, Counter())
            for key in ("count", "errors", "retries"):
                total[key] += op[key]
            total["hist"] += sum(c for _, c in op["hist"])
    for line in extras:
        for name, op in line["ops"].items():  # type: ignore[attr-defined]
            total = totals.setdefault(name, Counter())
            total["rolled_back"] += op["rolled_back"]
            for errno, n in op["retry_errors"].items():
                total[f"errno {errno}"] += n
    return lines, totals


def _conn(endpoint: Endpoint) -> pymysql.connections.Connection:
    return pymysql.connect(
        host=endpoint.host,
        port=endpoint.port,
        user=endpoint.user,
        password=endpoint.password,
        database=endpoint.database,
        autocommit=True,
    )


def _sql(endpoint: Endpoint, *statements: str) -> None:
    conn = _conn(endpoint)
    try:
        with conn.cursor() as cur:
            for sql in statements:
                cur.execute(sql)
    finally:
        conn.close()


def test_mix_reports_every_type_and_keeps_the_tables_consistent(mariadb, tmp_path):
    out = _sysbench(mariadb, tmp_path, "run", "--threads=4", "--time=3", "--rand-seed=3")
    lines, totals = _ops(out)
    assert sorted(line["thread"] for line in lines) == [0, 1, 2, 3]  # type: ignore[type-var]
    assert set(totals) == TYPES
    events = int(out.split("total number of events:")[1].split()[0])
    assert sum(t["count"] + t["errors"] for t in totals.values()) == events
    assert all(t["hist"] == t["count"] for t in totals.values())
    share = totals["NEW_ORDER"]["count"] / events
    assert 0.35 < share < 0.55, f"New-Order share {share:.2f}, want about 0.45"
    assert consistency.check_tpcc(mariadb) is None


FINGERPRINT = (
    "SELECT (SELECT SUM(s_quantity) + SUM(CRC32(s_data)) FROM stock), (SELECT SUM(CRC32(i_data)) FROM item), "
    "(SELECT SUM(CRC32(CONCAT(c_last, c_first, c_credit, c_discount))) FROM customer), "
    "(SELECT SUM(o_ol_cnt * o_c_id) FROM orders), (SELECT SUM(ol_i_id * ol_number) + SUM(ol_amount) FROM order_line), "
    "(SELECT COUNT(*) FROM new_order), (SELECT SUM(w_ytd) FROM warehouse) + (SELECT SUM(d_ytd) FROM district)"
)
#: The fingerprint of the quick dataset's rows at ``[dataset] loader = 2`` (scenarios/tpcc.toml). When a change
#: to the loader moves it, the rows changed: raise ``loader`` there (the snapshot key) and pin the new value here.
LOADER_2 = (
    Decimal("21410190152615"),
    Decimal("21580815077554"),
    Decimal("6414481561706"),
    Decimal("4508958"),
    Decimal("946076783.02"),
    900,
    Decimal("60000.00"),  # W_YTD + sum(D_YTD): 10.00 per customer, twice (300 per district)
)


def test_the_loader_makes_the_same_rows_every_time(mariadb, tmp_path):
    """Base and head prepare their own snapshots, and a cost count depends on the rows: the loader draws from
    its own seeded generator, so any server, day and loader thread count gets the same dataset."""
    prints = []
    for database, threads in (("tpcc_a", 1), ("tpcc_b", 2)):
        _sql(mariadb, f"CREATE DATABASE {database}")
        endpoint = Endpoint(mariadb.host, mariadb.port, mariadb.user, mariadb.password, database)
        _sysbench(endpoint, tmp_path, "prepare", f"--threads={threads}")
        conn = _conn(endpoint)
        try:
            with conn.cursor() as cur:
                cur.execute(FINGERPRINT)
                prints.append(cur.fetchone())
        finally:
            conn.close()
        _sql(mariadb, f"DROP DATABASE {database}")
    assert prints[0] == prints[1]
    assert prints[0] == LOADER_2, "the loader's rows changed: raise [dataset] loader in scenarios/tpcc.toml"
    assert all(v is not None and v > 0 for v in prints[0])


def _corruption(name: str, corrupt: tuple[str, ...], repair: tuple[str, ...], first: str, named: set[int]) -> object:
    return pytest.param(corrupt, repair, first, named, id=name)


_ORDER = "WHERE o_w_id = 1 AND o_d_id = {d} AND o_id = 5"  # delivered at load: 5 is under 70 % of 300 orders
CORRUPTIONS = [
    _corruption(
        "1-warehouse-ytd",
        ("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1",),
        ("UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1",),
        "condition 1 violated at warehouse 1:",
        {1, 8},  # W_YTD is also the warehouse's history total
    ),
    _corruption(
        "2-next-order-id",
        ("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 3",),
        ("UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE d_w_id = 1 AND d_id = 3",),
        "condition 2 violated at warehouse 1, district 3:",
        {2},
    ),
    _corruption(
        "3-new-order-gap",
        (
            "CREATE TEMPORARY TABLE gone AS SELECT * FROM new_order WHERE no_w_id = 1 AND no_d_id = 5 "
            "ORDER BY no_o_id LIMIT 1 OFFSET 3",
            "DELETE new_order FROM new_order JOIN gone USING (no_o_id, no_d_id, no_w_id)",
        ),
        ("INSERT INTO new_order SELECT * FROM gone", "DROP TEMPORARY TABLE gone"),
        "condition 3 violated at warehouse 1, district 5:",
        {3, 5},  # and the order lost its NEW-ORDER row with no carrier
    ),
    _corruption(
        "4-order-lines",
        (f"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 {_ORDER.format(d=7)}",),
        (f"UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 {_ORDER.format(d=7)}",),
        "condition 4 violated at warehouse 1, district 7:",
        {4, 6},
    ),
    _corruption(
        "5-carrier-without-new-order",
        (
            f"SELECT o_carrier_id INTO @carrier FROM orders {_ORDER.format(d=2)}",
            f"UPDATE orders SET o_carrier_id = NULL {_ORDER.format(d=2)}",
        ),
        (f"UPDATE orders SET o_carrier_id = @carrier {_ORDER.format(d=2)}",),
        "condition 5 violated at warehouse 1, district 2: order 5 has O_CARRIER_ID None and no NEW-ORDER row",
        {5, 7},  # its lines are delivered too
    ),
    _corruption(
        "6-line-moved-to-another-order",  # the district's line count holds (4), the orders' do not
        (
            "UPDATE order_line SET ol_o_id = 6, ol_number = 99 WHERE ol_w_id = 1 AND ol_d_id = 7 AND ol_o_id = 5 "
            "AND ol_number = 1",
        ),
        (
            "UPDATE order_line SET ol_o_id = 5, ol_number = 1 WHERE ol_w_id = 1 AND ol_d_id = 7 AND ol_o_id = 6 "
            "AND ol_number = 99",
        ),
        "condition 6 violated at warehouse 1, district 7: order 5 has O_OL_CNT",
        {6},
    ),
    _corruption(
        "7-line-undelivered",
        (
            "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 8 AND ol_o_id = 5 "
            "AND ol_number = 1",
        ),
        (
            "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = 1 AND ol_d_id = 8 AND ol_o_id = 5 "
            "AND ol_number = 1",
        ),
        "condition 7 violated at warehouse 1, district 8: order 5 has O_CARRIER_ID",
        {7},
    ),
    _corruption(
        "8-9-ytd-beside-history",  # warehouse and district agree (1), the history does not
        (
            "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1",
            "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 4",
        ),
        (
            "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1",
            "UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 4",
        ),
        "condition 8 violated at warehouse 1: W_YTD",
        {8, 9},
    ),
    _corruption(
        "9-history-in-another-district",  # the warehouse's total holds (8)
        ("UPDATE history SET h_d_id = 4 WHERE h_w_id = 1 AND h_c_id = 1 AND h_c_d_id = 3 AND h_d_id = 3 LIMIT 1",),
        ("UPDATE history SET h_d_id = 3 WHERE h_w_id = 1 AND h_c_id = 1 AND h_c_d_id = 3 AND h_d_id = 4 LIMIT 1",),
        "condition 9 violated at warehouse 1, district 3: D_YTD",
        {9},
    ),
    _corruption(
        "10-balance",  # balance + year-to-date payment hold (12)
        (
            "UPDATE customer SET c_balance = c_balance + 1, c_ytd_payment = c_ytd_payment - 1 "
            "WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 9",
        ),
        (
            "UPDATE customer SET c_balance = c_balance - 1, c_ytd_payment = c_ytd_payment + 1 "
            "WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 9",
        ),
        "condition 10 violated at warehouse 1, district 6: customer 9 has C_BALANCE",
        {10},
    ),
    _corruption(
        "12-ytd-payment",
        ("UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 9",),
        ("UPDATE customer SET c_ytd_payment = c_ytd_payment - 1 WHERE c_w_id = 1 AND c_d_id = 6 AND c_id = 9",),
        "condition 12 violated at warehouse 1, district 6: customer 9 has C_BALANCE",
        {12},
    ),
]


@pytest.mark.parametrize(("corrupt", "repair", "first", "named"), CORRUPTIONS)
def test_a_corrupted_table_fails_the_check(mariadb, corrupt, repair, first, named):
    """Each corruption breaks the conditions it must, and the line names every one of them."""
    conn = _conn(mariadb)  # one session: the temporary table and @carrier live until the repair
    try:
        with conn.cursor() as cur:
            for sql in corrupt:
                cur.execute(sql)
        found = consistency.check_tpcc(mariadb)
        with conn.cursor() as cur:
            for sql in repair:
                cur.execute(sql)
    finally:
        conn.close()
    assert found is not None and first in found, found
    assert {int(n) for n in re.findall(r"condition (\d+) violated", found)} == named, found
    assert found.startswith("TPC-C consistency condition ") and "\n" not in found
    assert consistency.check_tpcc(mariadb) is None  # repaired


def test_lock_wait_timeouts_are_retried_and_counted(mariadb, tmp_path):
    """A row lock held for 2.5 s (innodb_lock_wait_timeout=1): the waiting transactions get 1205, roll
    back and run again; the run ends normally and the tables stay consistent."""
    holder = _conn(mariadb)
    held = threading.Event()

    def hold() -> None:
        with holder.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("SELECT * FROM warehouse WHERE w_id = 1 FOR UPDATE")  # every Payment waits on it
            held.set()
            time.sleep(2.5)
            cur.execute("ROLLBACK")

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        held.wait(10)
        out = _sysbench(mariadb, tmp_path, "run", "--threads=2", "--time=4", "--rand-seed=5")
    finally:
        thread.join()
        holder.close()
    _, totals = _ops(out)
    assert totals["PAYMENT"]["errno 1205"] >= 1, totals["PAYMENT"]
    assert totals["PAYMENT"]["retries"] == totals["PAYMENT"]["errno 1205"] + totals["PAYMENT"]["errno 1213"]
    assert totals["PAYMENT"]["errors"] == 0
    assert consistency.check_tpcc(mariadb) is None


# -- through the pipeline, on the catalogue's servers -------------------------------------------

SERVER_CASES = [
    pytest.param("mariadb-local", id="mariadb-local"),
    pytest.param("mysql-9.7", id="mysql-9.7", marks=pytest.mark.docker),
]


@pytest.mark.parametrize("server_name", SERVER_CASES)
def test_quick_tpcc_run_passes_its_check(server_name, store_path, settings_factory):
    settings = settings_factory(store_path, server=server_name, profile="quick", time=2, warmup=1)
    results = pipeline.run(settings, "tpcc", QuietReporter(), server=server_name).runs
    assert len(results) == 1
    run = results[0]
    assert run.ok, run.failure
    assert run.totals is not None and run.totals.events > 0
    # the per-type statistics came through the protocol: the five types, about the measured events
    by_type = {op.type: op for op in run.operations}
    # a 2 s run on a loaded machine may see no 4 % type at all; the mix test sees every type
    assert {"NEW_ORDER", "PAYMENT"} <= set(by_type) <= TYPES, set(by_type)
    counted = sum(op.count + op.errors for op in run.operations)
    assert abs(counted - run.totals.events) <= max(4, 0.1 * run.totals.events), (counted, run.totals.events)
    assert by_type["NEW_ORDER"].ops_per_min and by_type["NEW_ORDER"].p95_ms


def test_a_violation_fails_the_run(store_path, settings_factory, monkeypatch):
    def corrupt_then_check(endpoint: Endpoint) -> str | None:
        _sql(endpoint, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1")
        return consistency.check_tpcc(endpoint)

    monkeypatch.setitem(consistency.CHECKS, "tpcc", corrupt_then_check)  # type: ignore[index]
    settings = settings_factory(store_path, server="mariadb-local", profile="quick", time=2, warmup=1)
    results = pipeline.run(settings, "tpcc", QuietReporter(), server="mariadb-local").runs
    assert len(results) == 1
    assert not results[0].ok
    assert "TPC-C consistency condition 1 violated at warehouse 1" in results[0].failure
