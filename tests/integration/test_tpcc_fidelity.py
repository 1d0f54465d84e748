"""tpcc against the reference tools' numbers (go-tpc, sysbench-tpcc; TPC-C 5.11 clause 2), read from what
the server received, at 1 and at 8 threads on 3 warehouses.

A throwaway MariaDB writes its general log during a short run of scenarios/lua/tpcc.lua; every committed
transaction is read back from it per connection (a deadlock's rolled-back attempt is left out, the 1 %
New-Orders rolled back on purpose are counted) and the test checks:

- the mix, 45/43/4/4/4 % (chi-square);
- the home warehouse, uniform over 1..W per transaction (chi-square; one thread used to stay on warehouse 1);
- remote order lines 1 % of New-Order lines, remote Payments 15 % (binomial);
- by-name lookups 60 % of Payments and of Order-Status (binomial), each finding about three customers
  (the standard's 3,000 customers share 1,000 names; the reduced dataset used to have one per name);
- afterwards, every consistency condition dbperf checks (1-10, 12).

``measure`` is also what docs/tpcc-fidelity.md's before/after table was measured with.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
import pytest
from scipy.stats import binomtest, chisquare
from support import SCENARIOS
from support.integration import throwaway_mariadb

from harness.measure import consistency
from harness.model.endpoint import Endpoint

pytestmark = pytest.mark.integration

WAREHOUSES = 3
ITEMS = 10_000  # 300 customers per district, 100 last names
MIX = {"NEW_ORDER": 0.45, "PAYMENT": 0.43, "ORDER_STATUS": 0.04, "DELIVERY": 0.04, "STOCK_LEVEL": 0.04}
#: the first statement after BEGIN names the transaction
FIRST = {
    "SELECT c_discount": "NEW_ORDER",
    "UPDATE warehouse SET w_ytd": "PAYMENT",
    "SELECT c_id FROM customer": "ORDER_STATUS",  # by name
    "SELECT c_balance": "ORDER_STATUS",  # by id
    "SELECT no_o_id": "DELIVERY",
    "SELECT d_next_o_id": "STOCK_LEVEL",
}
_LOG_LINE = re.compile(r"^(?:\d{6}\s+[\d:]+)?\s+(\d+)\s+(Query|Connect|Quit|Prepare|Execute)\s?(.*)$")
_W = re.compile(r"w_id=(\d+)")
_LINE = re.compile(r"INSERT INTO order_line VALUES \((\d+),(\d+),(\d+),(\d+),(\d+),(\d+),")
_BY_NAME = re.compile(r"SELECT c_id FROM customer WHERE c_w_id=(\d+) AND c_d_id=(\d+) AND c_last='(\w+)'")
_PAID = re.compile(r"FROM customer WHERE c_w_id=(\d+) AND c_d_id=\d+ AND c_id=\d+ FOR UPDATE")


@dataclass
class Fidelity:
    """What the server received, committed transaction by transaction."""

    mix: Counter[str] = field(default_factory=Counter)
    home: Counter[int] = field(default_factory=Counter)
    lines: int = 0
    remote_lines: int = 0
    remote_payments: int = 0
    by_name: Counter[str] = field(default_factory=Counter)
    lookups: list[tuple[int, int, str]] = field(default_factory=list)
    found_per_lookup: float = 0.0
    violations: str | None = None

    def share(self, part: int, whole: int) -> float:
        return part / whole if whole else 0.0

    def row(self) -> dict[str, float]:
        total = sum(self.mix.values())
        return {
            **{f"mix {t}": self.share(self.mix[t], total) for t in MIX},
            **{f"home w{w}": self.share(self.home[w], total) for w in range(1, WAREHOUSES + 1)},
            "remote lines": self.share(self.remote_lines, self.lines),
            "remote payments": self.share(self.remote_payments, self.mix["PAYMENT"]),
            "by-name payments": self.share(self.by_name["PAYMENT"], self.mix["PAYMENT"]),
            "by-name order-status": self.share(self.by_name["ORDER_STATUS"], self.mix["ORDER_STATUS"]),
            "customers per by-name lookup": self.found_per_lookup,
            "transactions": total,
        }


def _classify(statements: list[str], committed: bool, items: int, seen: Fidelity) -> None:
    kind = next((k for prefix, k in FIRST.items() if statements and statements[0].startswith(prefix)), None)
    if kind is None:
        return
    # a New-Order rolled back on purpose asked for the unused item id; any other rollback is a retried attempt
    if not committed and not (kind == "NEW_ORDER" and f"WHERE i_id={items + 1}" in " ".join(statements)):
        return
    home = _W.search(statements[0])
    assert home, statements[0]
    w = int(home.group(1))
    seen.mix[kind] += 1
    seen.home[w] += 1
    for sql in statements:
        if line := _LINE.match(sql):
            seen.lines += 1
            seen.remote_lines += int(line.group(6)) != int(line.group(3))
        elif name := _BY_NAME.match(sql):
            seen.by_name[kind] += 1
            seen.lookups.append((int(name.group(1)), int(name.group(2)), name.group(3)))
        elif kind == "PAYMENT" and (paid := _PAID.search(sql)):
            seen.remote_payments += int(paid.group(1)) != w


def parse_general_log(text: str, items: int) -> Fidelity:
    seen = Fidelity()
    open_txn: dict[int, list[str]] = {}
    for raw in text.splitlines():
        m = _LOG_LINE.match(raw)
        if not m or m.group(2) != "Query":
            continue
        conn, sql = int(m.group(1)), m.group(3).strip()
        if sql == "BEGIN":
            open_txn[conn] = []
        elif sql in ("COMMIT", "ROLLBACK"):
            _classify(open_txn.pop(conn, []), sql == "COMMIT", items, seen)
        elif conn in open_txn:
            open_txn[conn].append(sql)
    return seen


def _conn(endpoint: Endpoint) -> pymysql.connections.Connection:
    return pymysql.connect(
        host=endpoint.host, port=endpoint.port, user=endpoint.user, password=endpoint.password,
        database=endpoint.database, autocommit=True,
    )  # fmt: skip


def sysbench(script_dir: Path, endpoint: Endpoint, command: str, *args: str) -> str:
    argv = ["sysbench", "tpcc.lua", *endpoint.sysbench_args(), f"--tables={WAREHOUSES}", f"--table-size={ITEMS}"]
    done = subprocess.run(
        [*argv, *args, command], cwd=script_dir, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def measure(script_dir: Path, endpoint: Endpoint, log: Path, threads: int, seconds: int, seed: int) -> Fidelity:
    """One run of the script in ``script_dir`` with the server's general log on; what it sent, parsed."""
    conn = _conn(endpoint)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET GLOBAL general_log_file = '{log}'")
            cur.execute("SET GLOBAL general_log = ON")
        sysbench(script_dir, endpoint, "run", f"--threads={threads}", f"--time={seconds}", f"--rand-seed={seed}")
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL general_log = OFF")
        seen = parse_general_log(log.read_text(errors="replace"), ITEMS)
        with conn.cursor() as cur:
            found = 0
            for w, d, last in seen.lookups:
                cur.execute(
                    "SELECT COUNT(*) FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_last = %s", (w, d, last)
                )
                found += int(cur.fetchone()[0])
        seen.found_per_lookup = found / len(seen.lookups) if seen.lookups else 0.0
    finally:
        conn.close()
    seen.violations = consistency.check_tpcc(endpoint)
    return seen


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Endpoint]]:
    root = tmp_path_factory.mktemp("tpcc-fidelity")
    script_dir = root / "lua"
    script_dir.mkdir()
    for name in ("tpcc.lua", "dbperf_ops.lua"):
        shutil.copy(SCENARIOS / "lua" / name, script_dir / name)
    options = ("--innodb-lock-wait-timeout=2", "--innodb-flush-log-at-trx-commit=2", "--log-output=FILE")
    with throwaway_mariadb(root / "d", *options) as endpoint:
        sysbench(script_dir, endpoint, "prepare", "--threads=2")
        yield script_dir, endpoint


def test_the_loaded_dataset_holds_every_condition(prepared):
    assert consistency.check_tpcc(prepared[1]) is None


def _assert_share(what: str, part: int, whole: int, p: float) -> None:
    assert whole >= 30, f"{what}: only {whole} draws"
    fit = binomtest(part, whole, p)
    assert fit.pvalue > 1e-6, f"{what}: {part} of {whole} ({part / whole:.3f}), want {p} (p={fit.pvalue:.2g})"


@pytest.mark.parametrize("threads", [1, 8])
def test_inputs_match_the_reference_tools(prepared, tmp_path, threads):
    script_dir, endpoint = prepared
    seen = measure(script_dir, endpoint, tmp_path / "general.log", threads, seconds=8, seed=11)
    total = sum(seen.mix.values())
    assert total >= 300, seen.row()
    mix = chisquare([seen.mix[t] for t in MIX], [p * total for p in MIX.values()])
    assert mix.pvalue > 1e-6, f"mix {dict(seen.mix)} is not 45/43/4/4/4 (p={mix.pvalue:.2g})"
    homes = [seen.home[w] for w in range(1, WAREHOUSES + 1)]
    uniform = chisquare(homes)
    assert uniform.pvalue > 1e-6, f"home warehouses {homes} are not uniform (p={uniform.pvalue:.2g})"
    _assert_share("remote order lines", seen.remote_lines, seen.lines, 0.01)
    _assert_share("remote payments", seen.remote_payments, seen.mix["PAYMENT"], 0.15)
    _assert_share("by-name payments", seen.by_name["PAYMENT"], seen.mix["PAYMENT"], 0.60)
    if seen.mix["ORDER_STATUS"] >= 30:  # 4 % of the mix: a slow run may see too few to test
        _assert_share("by-name order-status", seen.by_name["ORDER_STATUS"], seen.mix["ORDER_STATUS"], 0.60)
    assert 2.0 < seen.found_per_lookup < 4.5, f"{seen.found_per_lookup:.2f} customers per by-name lookup, want ~3"
    assert seen.violations is None, seen.violations


def test_the_log_parser_tells_committed_from_retried():
    """A deadlocked attempt (ROLLBACK) is left out, its retry counted; the intended rollback counts."""
    log = "\n".join(
        [
            "261128  0:40:01\t    7 Query\tBEGIN",
            "\t\t    7 Query\tUPDATE warehouse SET w_ytd=w_ytd+5.00 WHERE w_id=2",
            "\t\t    7 Query\tROLLBACK",
            "\t\t    7 Query\tBEGIN",
            "\t\t    7 Query\tUPDATE warehouse SET w_ytd=w_ytd+5.00 WHERE w_id=2",
            "\t\t    7 Query\tSELECT c_id FROM customer WHERE c_w_id=3 AND c_d_id=4 AND c_last='BARBAR'",
            "\t\t    7 Query\tSELECT c_first FROM customer WHERE c_w_id=3 AND c_d_id=4 AND c_id=9 FOR UPDATE",
            "\t\t    7 Query\tCOMMIT",
            "\t\t    8 Query\tBEGIN",
            "\t\t    8 Query\tSELECT c_discount, c_last FROM customer, warehouse WHERE w_id=1 AND c_w_id=w_id",
            "\t\t    8 Query\tINSERT INTO order_line VALUES (3001,1,1,1,77,2,NULL,5,1.00,'x')",
            f"\t\t    8 Query\tSELECT i_price, i_name, i_data FROM item WHERE i_id={ITEMS + 1}",
            "\t\t    8 Query\tROLLBACK",
        ]
    )
    seen = parse_general_log(log, ITEMS)
    assert seen.mix == Counter({"PAYMENT": 1, "NEW_ORDER": 1})
    assert seen.home == Counter({2: 1, 1: 1})
    assert (seen.remote_payments, seen.by_name["PAYMENT"], seen.lookups) == (1, 1, [(3, 4, "BARBAR")])
    assert (seen.lines, seen.remote_lines) == (1, 1)
