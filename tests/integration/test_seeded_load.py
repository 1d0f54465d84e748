"""dbperf's seeded load on a throwaway MariaDB: ``prepare`` through dbperf's wrapper loads the same rows every
time (``CHECKSUM TABLE`` equal across two preparations, with one loading thread and with two), where
sysbench 1.0.20's own ``prepare`` draws new rows each time even with ``--rand-seed`` (the same command without
``--dbperf-seeded-load`` gives different checksums: the test can fail). The rows still look like sysbench's:
``k`` clusters in the middle of the range as its default "special" distribution puts it, and ``c`` strings
are distinct."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pymysql
import pytest

from harness.config.scenarios import load_scenario
from harness.model import Scenario
from harness.model.endpoint import Endpoint
from harness.sysbench.command_lines import _fill, prepare_argv

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration


def _query(endpoint: Endpoint, database: str, sql: str) -> list[tuple[object, ...]]:
    conn = pymysql.connect(host=endpoint.host, port=endpoint.port, user="root", password="", autocommit=True)
    try:
        with conn.cursor() as cur:
            if database:
                cur.execute(f"CREATE DATABASE IF NOT EXISTS {database}")
                cur.execute(f"USE {database}")
            cur.execute(sql)
            return [tuple(row) for row in cur.fetchall()]
    finally:
        conn.close()


def _prepare(endpoint: Endpoint, scenario: Scenario, folder: Path, database: str, threads: int, seeded: bool) -> None:
    _query(endpoint, "", f"DROP DATABASE IF EXISTS {database}")
    _query(endpoint, database, "SELECT 1")
    work = folder / database
    work.mkdir()
    here, wrapper = _fill(scenario, work)
    argv = prepare_argv(scenario, replace(endpoint, database=database), wrapper, threads)
    assert "--dbperf-seeded-load=on" in argv
    if not seeded:
        argv = [a for a in argv if a != "--dbperf-seeded-load=on"]
        argv.insert(-1, "--rand-seed=1")  # sysbench's own seed: prepare still draws anew
    done = subprocess.run(argv, cwd=here, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _checksums(endpoint: Endpoint, database: str, tables: tuple[str, ...]) -> list[object]:
    rows = _query(endpoint, database, "CHECKSUM TABLE " + ", ".join(tables))
    return [row[1] for row in rows]


def test_oltp_prepare_loads_the_same_rows_every_time(mariadb, tmp_path):
    scenario = replace(load_scenario("oltp_update_index", REPO / "scenarios", "quick"), tables=2, table_size=2000)
    tables = scenario.created_tables
    _prepare(mariadb, scenario, tmp_path, "seeded_a", 1, seeded=True)
    _prepare(mariadb, scenario, tmp_path, "seeded_b", 2, seeded=True)  # tables filled by two threads
    first = _checksums(mariadb, "seeded_a", tables)
    assert first == _checksums(mariadb, "seeded_b", tables)
    assert len(set(first)) == 2  # each table its own rows (seeded by its number)

    _prepare(mariadb, scenario, tmp_path, "drawn_a", 1, seeded=False)
    _prepare(mariadb, scenario, tmp_path, "drawn_b", 1, seeded=False)
    assert _checksums(mariadb, "drawn_a", tables) != _checksums(mariadb, "drawn_b", tables)

    # sysbench's shape: ids 1..N, k in 1..N with three quarters of them in the middle 1 % of the range
    # (its default "special" distribution), c and pad filled from their templates, c distinct
    (count, low, high, middle, distinct_c, digits) = _query(
        mariadb,
        "seeded_a",
        "SELECT COUNT(*), MIN(k), MAX(k), SUM(k BETWEEN 985 AND 1016), COUNT(DISTINCT c), "
        "SUM(c REGEXP '^([0-9]{11}-){9}[0-9]{11}$' AND pad REGEXP '^([0-9]{11}-){4}[0-9]{11}$') FROM sbtest1",
    )[0]
    assert (count, distinct_c, digits) == (2000, 2000, 2000)
    assert int(str(low)) >= 1 and int(str(high)) <= 2000
    assert 0.70 < int(str(middle)) / 2000 < 0.80


def test_ycsb_prepare_loads_the_same_records_every_time(mariadb, tmp_path):
    scenario = replace(load_scenario("ycsb_a", REPO / "scenarios", "quick"), table_size=500)
    tables = scenario.created_tables
    _prepare(mariadb, scenario, tmp_path, "ycsb_a1", 1, seeded=True)
    _prepare(mariadb, scenario, tmp_path, "ycsb_a2", 1, seeded=True)
    assert _checksums(mariadb, "ycsb_a1", tables) == _checksums(mariadb, "ycsb_a2", tables)
    _prepare(mariadb, scenario, tmp_path, "ycsb_d1", 1, seeded=False)
    _prepare(mariadb, scenario, tmp_path, "ycsb_d2", 1, seeded=False)
    assert _checksums(mariadb, "ycsb_d1", tables) != _checksums(mariadb, "ycsb_d2", tables)
    (distinct,) = _query(mariadb, "ycsb_a1", "SELECT COUNT(DISTINCT FIELD0) FROM usertable")[0]
    assert distinct == 500
