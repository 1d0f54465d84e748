"""What changed between the base and head plans of one statement, in words.

A plan changed when the tables are read in another order, or a table is read another way (its access
type or key), or its rows estimate moved by at least :data:`ROWS_FACTOR` (and one side estimates at
least :data:`ROWS_FLOOR` rows), or a filesort or temporary table came or went.

Why a factor of 2 for rows: on the same data the estimates repeat exactly (the dataset is restored
from one snapshot, InnoDB's persistent statistics come with it, and a range's estimate is a dive
into the same pages), so anything below 2x between two versions is their estimators rounding and
sampling differently (MariaDB 10.11 and 11.8 estimate a 100-row primary-key range as 100 and 99 rows),
while a plan that expects twice the rows expects twice the work. The floor keeps 1 -> 3 rows on a
primary-key lookup from counting as a change.

A changed plan is not a verdict: it never moves the exit code. It explains a verdict (a cost or
timing change beside it) or tells where to look when there is none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from harness.model.query_plan import QueryPlan, StatementPlans, TableAccess

ROWS_FACTOR: Final = 2.0
ROWS_FLOOR: Final = 10.0


def differences(base: QueryPlan, head: QueryPlan) -> tuple[str, ...]:
    """Each difference between two plans of the same statement, in words ("" never; empty: the same)."""
    found: list[str] = []
    base_order = [t.table for t in base.tables]
    head_order = [t.table for t in head.tables]
    if base_order != head_order:
        if sorted(base_order) == sorted(head_order):
            found.append(f"join order {_names(base_order)} → {_names(head_order)}")
        else:
            found.append(f"tables {_names(base_order)} → {_names(head_order)}")
    heads = _by_name(head.tables)
    for name, table in _by_name(base.tables).items():
        other = heads.get(name)
        if other is not None:
            found += _table_differences(name[0], table, other)
    for what, before, after in (
        ("filesort", base.filesort, head.filesort),
        ("temporary table", base.temporary, head.temporary),
    ):
        if before != after:
            found.append(f"{what} {'removed' if before else 'added'}")
    return tuple(found)


def compare_statement(
    template: str,
    example: str,
    base: QueryPlan | str,
    head: QueryPlan | str,
) -> StatementPlans:
    """One template's plans on both sides (a string is that side's refusal to EXPLAIN it)."""
    base_plan = base if isinstance(base, QueryPlan) else None
    head_plan = head if isinstance(head, QueryPlan) else None
    if base_plan is not None and head_plan is not None:
        changes = differences(base_plan, head_plan)
    elif (base_plan is None) != (head_plan is None):
        changes = ("EXPLAIN refused on " + ("base" if base_plan is None else "head"),)
    else:
        changes = ()
    return StatementPlans(
        template,
        example,
        base_plan,
        head_plan,
        changes,
        base_error=base if isinstance(base, str) else "",
        head_error=head if isinstance(head, str) else "",
    )


def rows_changed(before: float | None, after: float | None) -> bool:
    """Whether a rows estimate moved by :data:`ROWS_FACTOR` or more (one side at :data:`ROWS_FLOOR` or more)."""
    if before is None or after is None or max(before, after) < ROWS_FLOOR:
        return False
    low, high = sorted((max(before, 1.0), max(after, 1.0)))
    return high / low >= ROWS_FACTOR


def _table_differences(name: str, base: TableAccess, head: TableAccess) -> list[str]:
    found = []
    if base.access_type != head.access_type:
        found.append(f"{name}: access {base.access_type or '-'} → {head.access_type or '-'}")
    if base.key != head.key:
        found.append(f"{name}: key {base.key or 'none'} → {head.key or 'none'}")
    if base.rows is not None and head.rows is not None and rows_changed(base.rows, head.rows):
        ratio = max(head.rows, 1.0) / max(base.rows, 1.0)
        how = f"{ratio:.1f}x" if ratio >= 1 else f"{1 / ratio:.1f}x fewer"
        found.append(f"{name}: rows {base.rows:,.0f} → {head.rows:,.0f} ({how})")
    return found


def _by_name(tables: tuple[TableAccess, ...]) -> Mapping[tuple[str, int], TableAccess]:
    """Tables keyed by name and occurrence (a self-join reads the same name twice)."""
    seen: dict[str, int] = {}
    out: dict[tuple[str, int], TableAccess] = {}
    for table in tables:
        seen[table.table] = seen.get(table.table, 0) + 1
        out[(table.table, seen[table.table])] = table
    return out


def _names(order: list[str]) -> str:
    return ", ".join(order) if order else "(none)"
