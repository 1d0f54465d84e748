"""``[cost] warmup = "rollback"`` on a throwaway MariaDB (oltp_insert, oltp_delete, tpcc, ycsb_d): the warm-up
runs the scenario's own statements (each event inside BEGIN ... ROLLBACK, tpcc's own COMMIT sent as ROLLBACK,
ycsb_d's next record number written at the end rolled back too, through dbperf's sysbench wrapper) and
leaves the tables as they were; the same command without it changes them (the test can fail), and the
measured window's command has no rollback."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pymysql
import pytest

from harness.config.scenarios import load_scenario
from harness.model.endpoint import Endpoint
from harness.sysbench.command_lines import _fill, cost_argv, prepare_argv

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


#: What a scenario's events change: rows (and the sum of their ids) for sysbench's tables; for tpcc the rows
#: new orders add and deliveries remove, the next order number and the year-to-date sums payments raise.
STATE = {
    "oltp_insert": "SELECT COUNT(*), SUM(id) FROM (SELECT id FROM sbtest1 UNION ALL SELECT id FROM sbtest2) AS t",
    "tpcc": "SELECT (SELECT COUNT(*) FROM orders), (SELECT COUNT(*) FROM new_order), (SELECT COUNT(*) FROM "
    "order_line), (SELECT COUNT(*) FROM history), (SELECT SUM(d_next_o_id) FROM district), "
    "(SELECT SUM(w_ytd) FROM warehouse)",
}
STATE["oltp_delete"] = STATE["oltp_insert"]
STATE["ycsb_d"] = "SELECT (SELECT COUNT(*) FROM usertable), (SELECT value FROM ycsb_meta)"


def _state(endpoint: Endpoint, name: str) -> tuple[object, ...]:
    conn = pymysql.connect(host=endpoint.host, port=endpoint.port, user="root", password="", database="sbtest")
    try:
        with conn.cursor() as cur:
            cur.execute(STATE[name])
            return tuple(cur.fetchone() or ())
    finally:
        conn.close()


def _run(argv: list[str], folder: Path) -> None:
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("name", ["oltp_insert", "oltp_delete", "tpcc", "ycsb_d"])
def test_a_rolled_back_warmup_leaves_the_tables_as_they_were(mariadb, tmp_path, name):
    scenario = load_scenario(name, REPO / "scenarios", "quick")
    if name.startswith("oltp_"):
        scenario = replace(scenario, tables=2, table_size=300)
    elif name == "ycsb_d":
        scenario = replace(scenario, table_size=1000)
    folder, wrapper = _fill(scenario, tmp_path)
    _run(prepare_argv(scenario, mariadb, wrapper, 1), folder)
    try:
        before = _state(mariadb, name)
        warmup = cost_argv(scenario, mariadb, wrapper, 1, 100, None, seed=1, rollback=True)
        assert warmup[-2:] == ["--dbperf-rollback=on", "run"]
        _run(warmup, folder)
        assert _state(mariadb, name) == before  # 100 events, every one rolled back
        measured = cost_argv(scenario, mariadb, wrapper, 1, 100, None, seed=2)
        assert not any(a.startswith("--dbperf-rollback") for a in measured)
        _run(measured, folder)
        after = _state(mariadb, name)
        assert after != before  # the same command without the rollback changes them: the test can fail
        if name.startswith("oltp_"):
            assert after[0] > before[0] if name == "oltp_insert" else after[0] < before[0]  # type: ignore[operator]
    finally:
        _run([*prepare_argv(scenario, mariadb, wrapper, 1)[:-1], "cleanup"], folder)


def _executed(endpoint: Endpoint, prefix: str) -> list[str]:
    """The keys of the prepared statements starting with ``prefix`` that the general log holds, in order."""
    conn = pymysql.connect(host=endpoint.host, port=endpoint.port, user="root", password="", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE command_type = 'Execute' "
                "AND argument LIKE %s ORDER BY event_time",
                (prefix + "%",),
            )
            return [re.findall(r"'(user\d+)'", str(row[0]))[0] for row in cur.fetchall()]
    finally:
        conn.close()


def _general_log(endpoint: Endpoint, on: bool) -> None:
    conn = pymysql.connect(host=endpoint.host, port=endpoint.port, user="root", password="", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL general_log = 0")
            cur.execute("TRUNCATE TABLE mysql.general_log")
            if on:
                cur.execute("SET GLOBAL log_output = 'TABLE'")
                cur.execute("SET GLOBAL general_log = 1")
    finally:
        conn.close()


def test_a_rolled_back_ycsb_warmup_inserts_one_record_number_and_reads_records_that_exist(mariadb, tmp_path):
    """Rolled back, ycsb_d's warm-up keeps no record, so its inserts take the same next record number again
    and its "latest" reads choose among the records the table holds (docs/work-vector.md, "Steady state":
    inserts of ever new keys, rolled back, left the table's pages split by W); the measured window, which
    commits, inserts a new record number each time as before."""
    scenario = replace(load_scenario("ycsb_d", REPO / "scenarios", "quick"), table_size=1000)
    folder, wrapper = _fill(scenario, tmp_path)
    _run(prepare_argv(scenario, mariadb, wrapper, 1), folder)
    try:
        conn = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root", password="", database="sbtest")
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT YCSB_KEY FROM usertable")
                held = {str(row[0]) for row in cur.fetchall()}
        finally:
            conn.close()
        _general_log(mariadb, True)
        _run(cost_argv(scenario, mariadb, wrapper, 1, 400, None, seed=1, rollback=True), folder)
        inserted, read = _executed(mariadb, "INSERT INTO usertable"), _executed(mariadb, "SELECT * FROM usertable")
        assert len(inserted) > 5 and len(set(inserted)) == 1 and inserted[0] not in held
        assert len(read) > 300 and set(read) <= held  # every warm-up read finds a record
        _general_log(mariadb, True)
        _run(cost_argv(scenario, mariadb, wrapper, 1, 400, None, seed=2), folder)
        window = _executed(mariadb, "INSERT INTO usertable")
        assert len(window) > 5 and len(set(window)) == len(window) and inserted[0] in window
    finally:
        _general_log(mariadb, False)
        _run([*prepare_argv(scenario, mariadb, wrapper, 1)[:-1], "cleanup"], folder)
