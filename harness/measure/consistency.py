"""Post-run checks a scenario declares (``check = "tpcc"``): the workload proves its own writes correct.

After a timing run's measured window, on the run's own server (still up, sysbench gone), the check
reads the tables back; a violation fails the run with one line naming what broke and where. Cost runs
skip it: their server runs under callgrind and the count is what they are for; the same Lua writes
the same rows in both kinds of run, so the timing runs' check covers the workload.

The checks are SQL run from Python (pymysql) rather than a Lua command through sysbench: the result
comes back as rows, not as text to parse out of sysbench's output, the message is built and tested
here, and a check needs no client process or script folder of its own.

``tpcc``: the TPC-C consistency conditions 1-4 (TPC-C 5.11, clause 3.3.2):

1. ``W_YTD = sum(D_YTD)`` for each warehouse;
2. ``D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)`` for each district (max(NO_O_ID) only where the
   district has undelivered orders);
3. ``max(NO_O_ID) - min(NO_O_ID) + 1`` = the number of NEW-ORDER rows, for each district;
4. ``sum(O_OL_CNT)`` = the number of ORDER-LINE rows, for each district.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import pymysql

from harness.errors import ServerError
from harness.model.endpoint import Endpoint
from harness.servers.provider import connect

_Rows = tuple[tuple[Any, ...], ...]


def _query(cur: Any, sql: str) -> _Rows:
    cur.execute(sql)
    return tuple(tuple(r) for r in cur.fetchall())


def _violation(condition: int, what: str, warehouse: object, district: object | None = None) -> str:
    where = f"warehouse {warehouse}" + (f", district {district}" if district is not None else "")
    return (
        f"TPC-C consistency condition {condition} violated at {where}: {what}; the workload or the server "
        "lost or duplicated a write (see scenarios/README.md, tpcc)"
    )


def _condition_1(cur: Any) -> str | None:
    for w_id, w_ytd, d_ytd in _query(
        cur,
        "SELECT w_id, w_ytd, SUM(d_ytd) FROM warehouse JOIN district ON d_w_id = w_id "
        "GROUP BY w_id, w_ytd HAVING w_ytd <> SUM(d_ytd) ORDER BY w_id",
    ):
        return _violation(1, f"W_YTD {w_ytd} != sum(D_YTD) {d_ytd}", w_id)
    return None


def _by_district(rows: _Rows) -> dict[tuple[int, int], Any]:
    return {(int(r[0]), int(r[1])): r[2] for r in rows}


def _condition_2_3(cur: Any) -> str | None:
    districts = _query(cur, "SELECT d_w_id, d_id, d_next_o_id FROM district ORDER BY d_w_id, d_id")
    max_o = _by_district(_query(cur, "SELECT o_w_id, o_d_id, MAX(o_id) FROM orders GROUP BY o_w_id, o_d_id"))
    new_orders = {
        (int(w), int(d)): (lo, hi, n)
        for w, d, lo, hi, n in _query(
            cur,
            "SELECT no_w_id, no_d_id, MIN(no_o_id), MAX(no_o_id), COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id",
        )
    }
    for w_id, d_id, next_o in districts:
        key = (int(w_id), int(d_id))
        last = int(next_o) - 1
        if max_o.get(key) != last:
            return _violation(2, f"D_NEXT_O_ID - 1 = {last} but max(O_ID) = {max_o.get(key)}", w_id, d_id)
        if key in new_orders:
            lo, hi, n = new_orders[key]
            if hi != last:
                return _violation(2, f"D_NEXT_O_ID - 1 = {last} but max(NO_O_ID) = {hi}", w_id, d_id)
            if hi - lo + 1 != n:
                return _violation(
                    3, f"max(NO_O_ID) - min(NO_O_ID) + 1 = {hi - lo + 1} but {n} NEW-ORDER rows", w_id, d_id
                )
    return None


def _condition_4(cur: Any) -> str | None:
    ordered = _by_district(_query(cur, "SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id"))
    lines = _by_district(_query(cur, "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id"))
    for w_id, d_id in sorted(set(ordered) | set(lines)):
        want, have = ordered.get((w_id, d_id), Decimal(0)), lines.get((w_id, d_id), 0)
        if int(want) != int(have):
            return _violation(4, f"sum(O_OL_CNT) = {int(want)} but {int(have)} ORDER-LINE rows", w_id, d_id)
    return None


def check_tpcc(endpoint: Endpoint) -> str | None:
    """The first violated TPC-C consistency condition (1-4), in one line, or None when all hold."""
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, endpoint.database, timeout=30)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to check the TPC-C consistency conditions: {exc}") from exc
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            for condition in (_condition_1, _condition_2_3, _condition_4):
                found = condition(cur)
                if found:
                    return found
            cur.execute("COMMIT")
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"the TPC-C consistency check could not read the tables: {exc}") from exc
    finally:
        conn.close()
    return None


#: The checks a scenario can declare, by name (``check = "tpcc"``).
CHECKS: Mapping[str, Callable[[Endpoint], str | None]] = {"tpcc": check_tpcc}


def run_check(name: str, endpoint: Endpoint) -> str | None:
    """Run the scenario's declared check; a violation as one line, or None."""
    return CHECKS[name](endpoint)
