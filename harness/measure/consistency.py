"""Post-run checks a scenario declares (``check = "tpcc"``): the workload proves its own writes correct.

After a timing run's measured window, on the run's own server (still up, sysbench gone), the check
reads the tables back; a violation fails the run with one line naming what broke and where. Cost runs
skip it: their server runs under callgrind and the count is what they are for; the same Lua writes
the same rows in both kinds of run, so the timing runs' check covers the workload.

The checks are SQL run from Python (pymysql) rather than a Lua command through sysbench: the result
comes back as rows, not as text to parse out of sysbench's output, the message is built and tested
here, and a check needs no client process or script folder of its own.

``tpcc``: the TPC-C consistency conditions go-tpc checks after a run, 1-10 and 12 (TPC-C 5.11,
clause 3.3.2; 11 holds only before the first Delivery):

1. ``W_YTD = sum(D_YTD)`` for each warehouse;
2. ``D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)`` for each district (max(NO_O_ID) only where the
   district has undelivered orders);
3. ``max(NO_O_ID) - min(NO_O_ID) + 1`` = the number of NEW-ORDER rows, for each district;
4. ``sum(O_OL_CNT)`` = the number of ORDER-LINE rows, for each district;
5. an order has a NEW-ORDER row exactly when its ``O_CARRIER_ID`` is null;
6. ``O_OL_CNT`` = the number of its ORDER-LINE rows, for each order;
7. an order line's ``OL_DELIVERY_D`` is null exactly when its order's ``O_CARRIER_ID`` is;
8. ``W_YTD = sum(H_AMOUNT)`` of the warehouse's history rows (``H_W_ID``);
9. ``D_YTD = sum(H_AMOUNT)`` of the district's history rows (``H_W_ID``, ``H_D_ID``);
10. ``C_BALANCE = sum(OL_AMOUNT of its delivered order lines) - sum(H_AMOUNT of its history rows)``,
    for each customer;
12. ``C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of its delivered order lines)``, for each customer.

Every violated condition is named in the one line (its first violation, where it is); the loader
writes totals that hold all of them from the start (scenarios/README.md, tpcc).
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


_Found = list[tuple[int, str]]  # (condition, "what, at where"): the first violation of each condition


def _at(warehouse: object, district: object | None = None, what: str = "") -> str:
    where = f"warehouse {warehouse}" + (f", district {district}" if district is not None else "")
    return f"{where}: {what}"


def _first(
    cur: Any, condition: int, sql: str, describe: Callable[[tuple[Any, ...]], str], *, run: bool = True
) -> _Found:
    """The condition's first violation: ``sql`` selects the violating rows (LIMIT 1); nothing when not ``run``."""
    if not run:
        return []
    rows = _query(cur, sql)
    return [(condition, describe(rows[0]))] if rows else []


def _condition_1(cur: Any) -> _Found:
    return _first(
        cur,
        1,
        "SELECT w_id, w_ytd, SUM(d_ytd) FROM warehouse JOIN district ON d_w_id = w_id "
        "GROUP BY w_id, w_ytd HAVING w_ytd <> SUM(d_ytd) ORDER BY w_id LIMIT 1",
        lambda r: _at(r[0], None, f"W_YTD {r[1]} != sum(D_YTD) {r[2]}"),
    )


def _by_district(rows: _Rows) -> dict[tuple[int, int], Any]:
    return {(int(r[0]), int(r[1])): r[2] for r in rows}


def _condition_2_3(cur: Any) -> _Found:
    districts = _query(cur, "SELECT d_w_id, d_id, d_next_o_id FROM district ORDER BY d_w_id, d_id")
    max_o = _by_district(_query(cur, "SELECT o_w_id, o_d_id, MAX(o_id) FROM orders GROUP BY o_w_id, o_d_id"))
    new_orders = {
        (int(w), int(d)): (lo, hi, n)
        for w, d, lo, hi, n in _query(
            cur,
            "SELECT no_w_id, no_d_id, MIN(no_o_id), MAX(no_o_id), COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id",
        )
    }
    found: dict[int, str] = {}
    for w_id, d_id, next_o in districts:
        key = (int(w_id), int(d_id))
        last = int(next_o) - 1
        if max_o.get(key) != last:
            found.setdefault(2, _at(w_id, d_id, f"D_NEXT_O_ID - 1 = {last} but max(O_ID) = {max_o.get(key)}"))
        if key in new_orders:
            lo, hi, n = new_orders[key]
            if hi != last:
                found.setdefault(2, _at(w_id, d_id, f"D_NEXT_O_ID - 1 = {last} but max(NO_O_ID) = {hi}"))
            if hi - lo + 1 != n:
                what = f"max(NO_O_ID) - min(NO_O_ID) + 1 = {hi - lo + 1} but {n} NEW-ORDER rows"
                found.setdefault(3, _at(w_id, d_id, what))
    return sorted(found.items())


def _condition_4(cur: Any) -> _Found:
    ordered = _by_district(_query(cur, "SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id"))
    lines = _by_district(_query(cur, "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id"))
    for w_id, d_id in sorted(set(ordered) | set(lines)):
        want, have = ordered.get((w_id, d_id), Decimal(0)), lines.get((w_id, d_id), 0)
        if int(want) != int(have):
            return [(4, _at(w_id, d_id, f"sum(O_OL_CNT) = {int(want)} but {int(have)} ORDER-LINE rows"))]
    return []


_ORDER_KEY = "ORDER BY o_w_id, o_d_id, o_id LIMIT 1"


#: each order's order-line count and delivered lines, one pass over order_line for conditions 5-7
_ORDER_LINES = (
    "FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id "
    "LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS n, COUNT(ol_delivery_d) AS delivered FROM order_line "
    "GROUP BY ol_w_id, ol_d_id, ol_o_id) l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id"
)


def _violating(cur: Any, sql: str) -> tuple[int, ...]:
    """How many rows violate each condition, counted in one pass (the details are read only when some do)."""
    return tuple(int(n or 0) for n in _query(cur, sql)[0])


def _conditions_5_6_7(cur: Any) -> _Found:
    n5, n6, n7 = _violating(
        cur,
        "SELECT SUM((o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)), SUM(o_ol_cnt <> COALESCE(l.n, 0)), "
        "SUM(IF(o_carrier_id IS NULL, COALESCE(l.delivered, 0) > 0, COALESCE(l.delivered, 0) < COALESCE(l.n, 0))) "
        + _ORDER_LINES,
    )
    return [
        *_first(
            cur,
            5,
            "SELECT o_w_id, o_d_id, o_id, o_carrier_id, no_o_id IS NOT NULL FROM orders LEFT JOIN new_order "
            "ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id "
            f"WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL) {_ORDER_KEY}",
            lambda r: _at(
                r[0], r[1], f"order {r[2]} has O_CARRIER_ID {r[3]} and {'a' if r[4] else 'no'} NEW-ORDER row"
            ),
            run=n5 > 0,
        ),
        *_first(
            cur,
            6,
            "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, COALESCE(l.n, 0) FROM orders LEFT JOIN "
            "(SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l "
            "ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id "
            f"WHERE o_ol_cnt <> COALESCE(l.n, 0) {_ORDER_KEY}",
            lambda r: _at(r[0], r[1], f"order {r[2]} has O_OL_CNT {r[3]} but {r[4]} ORDER-LINE rows"),
            run=n6 > 0,
        ),
        *_first(
            cur,
            7,
            "SELECT o_w_id, o_d_id, o_id, ol_number, o_carrier_id, ol_delivery_d FROM orders JOIN order_line "
            "ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id "
            f"WHERE (o_carrier_id IS NULL) <> (ol_delivery_d IS NULL) {_ORDER_KEY}",
            lambda r: _at(r[0], r[1], f"order {r[2]} has O_CARRIER_ID {r[4]} but line {r[3]} OL_DELIVERY_D {r[5]}"),
            run=n7 > 0,
        ),
    ]


def _conditions_8_9(cur: Any) -> _Found:
    return [
        *_first(
            cur,
            8,
            "SELECT w_id, w_ytd, COALESCE(h.s, 0) FROM warehouse LEFT JOIN "
            "(SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h ON h.h_w_id = w_id "
            "WHERE w_ytd <> COALESCE(h.s, 0) ORDER BY w_id LIMIT 1",
            lambda r: _at(r[0], None, f"W_YTD {r[1]} != sum(H_AMOUNT) {r[2]}"),
        ),
        *_first(
            cur,
            9,
            "SELECT d_w_id, d_id, d_ytd, COALESCE(h.s, 0) FROM district LEFT JOIN "
            "(SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id, h_d_id) h "
            "ON h.h_w_id = d_w_id AND h.h_d_id = d_id WHERE d_ytd <> COALESCE(h.s, 0) ORDER BY d_w_id, d_id LIMIT 1",
            lambda r: _at(r[0], r[1], f"D_YTD {r[2]} != sum(H_AMOUNT) {r[3]}"),
        ),
    ]


#: each customer's delivered order-line amounts (``ol``) and history amounts (``h``), by customer
_CUSTOMER_SUMS = (
    "FROM customer LEFT JOIN (SELECT o_w_id AS w, o_d_id AS d, o_c_id AS c, SUM(ol_amount) AS s FROM orders "
    "JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL "
    "GROUP BY o_w_id, o_d_id, o_c_id) ol ON ol.w = c_w_id AND ol.d = c_d_id AND ol.c = c_id "
)
_HISTORY_SUMS = (
    "LEFT JOIN (SELECT h_c_w_id AS w, h_c_d_id AS d, h_c_id AS c, SUM(h_amount) AS s FROM history "
    "GROUP BY h_c_w_id, h_c_d_id, h_c_id) h ON h.w = c_w_id AND h.d = c_d_id AND h.c = c_id "
)
_CUSTOMER_KEY = "ORDER BY c_w_id, c_d_id, c_id LIMIT 1"


def _conditions_10_12(cur: Any) -> _Found:
    n10, n12 = _violating(
        cur,
        "SELECT SUM(c_balance <> COALESCE(ol.s, 0) - COALESCE(h.s, 0)), "
        f"SUM(c_balance + c_ytd_payment <> COALESCE(ol.s, 0)) {_CUSTOMER_SUMS}{_HISTORY_SUMS}",
    )
    return [
        *_first(
            cur,
            10,
            "SELECT c_w_id, c_d_id, c_id, c_balance, COALESCE(ol.s, 0), COALESCE(h.s, 0) "
            f"{_CUSTOMER_SUMS}{_HISTORY_SUMS}WHERE c_balance <> COALESCE(ol.s, 0) - COALESCE(h.s, 0) {_CUSTOMER_KEY}",
            lambda r: _at(
                r[0], r[1], f"customer {r[2]} has C_BALANCE {r[3]} but delivered OL_AMOUNT {r[4]} - H_AMOUNT {r[5]}"
            ),
            run=n10 > 0,
        ),
        *_first(
            cur,
            12,
            "SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, COALESCE(ol.s, 0) "
            f"{_CUSTOMER_SUMS}WHERE c_balance + c_ytd_payment <> COALESCE(ol.s, 0) {_CUSTOMER_KEY}",
            lambda r: _at(
                r[0], r[1], f"customer {r[2]} has C_BALANCE {r[3]} + C_YTD_PAYMENT {r[4]} != delivered OL_AMOUNT {r[5]}"
            ),
            run=n12 > 0,
        ),
    ]


_CONDITIONS = (_condition_1, _condition_2_3, _condition_4, _conditions_5_6_7, _conditions_8_9, _conditions_10_12)


def violations_line(found: _Found) -> str:
    """One line naming every violated condition with its first violation."""
    named = "; ".join(f"condition {condition} violated at {where}" for condition, where in found)
    return (
        f"TPC-C consistency {named}; the workload or the server lost or duplicated a write "
        "(see scenarios/README.md, tpcc)"
    )


def check_tpcc(endpoint: Endpoint) -> str | None:
    """Every violated TPC-C consistency condition (1-10, 12), in one line, or None when all hold."""
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, endpoint.database, timeout=30)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to check the TPC-C consistency conditions: {exc}") from exc
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            found = [violation for condition in _CONDITIONS for violation in condition(cur)]
            cur.execute("COMMIT")
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"the TPC-C consistency check could not read the tables: {exc}") from exc
    finally:
        conn.close()
    return violations_line(found) if found else None


#: The checks a scenario can declare, by name (``check = "tpcc"``).
CHECKS: Mapping[str, Callable[[Endpoint], str | None]] = {"tpcc": check_tpcc}


def run_check(name: str, endpoint: Endpoint) -> str | None:
    """Run the scenario's declared check; a violation as one line, or None."""
    return CHECKS[name](endpoint)
