"""Pull-request comment documents for the comment and check-run tests: verdicts, plans, config changes."""

from __future__ import annotations

import dataclasses
import json

from harness.model import DefinitionChange, FunctionDelta, Verdict
from harness.model.plan_changes import compare_statement
from harness.model.query_plan import PlanCheck, QueryPlan, StatementPlans, TableAccess
from harness.model.verdict_document import VerdictDocument, dump_document
from support.reports import mv, verdict

RUN_URL = "https://github.com/acme/dbperf/actions/runs/1001"

SHA = "0123456789abcdef0123456789abcdef01234567"

CHANGE = DefinitionChange(
    "servers/conf/mariadb.cnf", "performance_schema", "", "ON", "added", 8, "mysqld", "mariadb-local@base",
    "mariadb-local",
)  # fmt: skip

FUNCTIONS = (
    FunctionDelta("pfs_start_mutex_wait_v1", 0.0, 9_120.0, 9_120.0, 0.41),
    FunctionDelta("std::vector<PFS_thread*, std::allocator<PFS_thread*> >::push_back", 0.0, 4_010.0, 4_010.0, 0.18),
    FunctionDelta("row_ins_clust_index_entry_low", 51_000.0, 50_600.0, -400.0, -0.02),
    FunctionDelta("pfs_end_table_io_wait_v1", 0.0, 6_300.0, 6_300.0, 0.28),
    FunctionDelta("(unnamed functions)", 120_000.0, 122_400.0, 2_400.0, 0.11),
)


def config_change() -> tuple[list[Verdict], list[DefinitionChange]]:
    """A pull request that turns performance_schema on: a cost regression, timing inconclusive, a read that passes."""
    pair = {"base": "mariadb-local@base", "head": "mariadb-local", "base_version": "10.11.14-MariaDB",
            "head_version": "10.11.14-MariaDB"}  # fmt: skip
    cost = verdict(
        "oltp_insert", 1,
        mv("instr_per_txn", "regression", 12.3, 12.2, 12.4, method="cost", p_adjusted=1e-6),
        kind="cost", explanation=FUNCTIONS, **pair,
    )  # fmt: skip
    timing = verdict(
        "oltp_insert", 8,
        mv("qps", "inconclusive", -3.0, -9.0, 2.0, noise_pct=8.0, repetitions_needed=24),
        mv("p95_ms", "pass", 1.0, -2.0, 4.1), **pair,
    )  # fmt: skip
    read = verdict(
        "oltp_point_select", 1, mv("instr_per_txn", "pass", 0.1, 0.0, 0.2, method="cost"), kind="cost", **pair
    )
    return [cost, timing, read], [CHANGE]


def change_document() -> dict[str, object]:
    """verdicts.json of a pull request that turns performance_schema on (harness/ci/folder.py's shape)."""
    verdicts, changes = config_change()
    return json.loads(dump_document(VerdictDocument(tuple(verdicts), tuple(changes))))


def verdicts_json(checks: list[PlanCheck]) -> str:
    """A verdicts.json as `ci run` writes it (format, verdicts, plans)."""
    return dump_document(VerdictDocument((), plans=tuple(checks)))


def example_check() -> PlanCheck:
    base = QueryPlan((TableAccess("sbtest1", "range", "k_1", 829.0),))
    head = QueryPlan((TableAccess("sbtest1", "range", "k_1", 20.0),))
    statement = compare_statement(
        "SELECT id, k, c, pad FROM sbtest# WHERE k IN (?+)",
        "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (5001, 4999)",
        base,
        head,
    )
    same = StatementPlans("SELECT c FROM sbtest# WHERE id=?", "SELECT c FROM sbtest1 WHERE id=1", base, base)
    return PlanCheck(
        "select_random_points",
        "mariadb-local",
        "mariadb-local+eq_range_index_dive_limit=1",
        (statement, same),
        "10.11.19-MariaDB",
        "10.11.19-MariaDB",
    )


def ci_check() -> PlanCheck:
    """The example as `ci run` names its sides (a server at the base commit and at the head)."""
    return dataclasses.replace(example_check(), base="mariadb-local@base", head="mariadb-local")
