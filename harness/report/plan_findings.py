"""Plan findings of A/B comparisons: the two plans of each changed statement, side by side.

Records in (:class:`harness.model.query_plan.PlanCheck`), text out: a section for the terminal, the
Markdown report and the pull-request comment. A changed plan is information beside the verdicts,
never one of them; a comparison whose plans all agree gets one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from rich.text import Text

from harness.model.query_plan import PlanCheck, QueryPlan, StatementPlans, TableAccess
from harness.report.mdtable import cell, code, inert, table
from harness.report.tables import new_table, show
from harness.report.terminal import console

HEADER = ("table", "base type", "base key", "base rows", "head type", "head key", "head rows")
ALIGN = ("l", "l", "l", "r", "l", "l", "r")


def plan_rows(statement: StatementPlans) -> list[tuple[str, ...]]:
    """One row per table (in the base's join order, then tables only head reads), and one for sorting
    when either side sorts or builds a temporary table."""
    base = statement.base.tables if statement.base else ()
    head = statement.head.tables if statement.head else ()
    names = list(dict.fromkeys([t.table for t in base] + [t.table for t in head]))
    rows: list[tuple[str, ...]] = []
    for name in names:
        b = next((t for t in base if t.table == name), None)
        h = next((t for t in head if t.table == name), None)
        rows.append(
            (name, *_side(b, statement.base, statement.base_error), *_side(h, statement.head, statement.head_error))
        )
    sorting = (_sorting(statement.base), _sorting(statement.head))
    if any(sorting):
        rows.append(("(sort)", sorting[0] or "-", "", "", sorting[1] or "-", "", ""))
    return rows


def plans_summary(check: PlanCheck) -> str:
    """One line: what was compared and how many plans changed (or why nothing was)."""
    where = f"{check.scenario}: {check.base} vs {check.head}"
    if not check.statements:
        return f"{where}: {check.note or 'no statement to EXPLAIN'}"
    changed = len(check.changed)
    line = f"{where}: {len(check.statements)} statement template(s) EXPLAINed, "
    line += f"{changed} plan(s) changed" if changed else "every plan the same"
    return line + (f" ({check.note})" if check.note else "")


def plans_markdown(checks: Sequence[PlanCheck]) -> list[str]:
    """The Markdown section (empty when no comparison was checked)."""
    if not checks:
        return []
    lines = ["### Query plans", ""]
    lines += [f"- {_md(plans_summary(c))}" for c in checks]
    lines.append("")
    for check in checks:
        for statement in check.changed:
            lines += [f"**Plan changed** ({_md(check.scenario)}): {code(statement.template)}", ""]
            lines += [f"{_md('; '.join(statement.changes))}", ""]
            lines += [*_md_table(statement), ""]
    lines.append(
        "<sub>A changed plan is not a verdict and never fails a check: it explains a cost or timing change.</sub>"
    )
    return [*lines, ""]


def print_plans(checks: Sequence[PlanCheck], stream: TextIO | None = None) -> None:
    """The terminal section: one line per comparison, and both plans of each changed statement."""
    if not checks:
        return
    out = console(stream)
    for check in checks:
        style = "yellow" if check.changed else ""
        out.print(Text(f"plans: {plans_summary(check)}", style=style))
        for statement in check.changed:
            title = f"plan changed: {statement.template}\n{'; '.join(statement.changes)}"
            grid = new_table(title, [(h, "right" if a == "r" else "left") for h, a in zip(HEADER, ALIGN, strict=True)])
            for row in plan_rows(statement):
                grid.add_row(*row)
            show(out, grid)


def _side(access: TableAccess | None, plan: QueryPlan | None, error: str) -> tuple[str, str, str]:
    if plan is None:
        return ("EXPLAIN refused: " + error if error else "-", "", "")
    if access is None:
        return ("-", "", "")
    rows = "" if access.rows is None else f"{access.rows:,.0f}"
    return (access.access_type or "-", access.key or "-", rows)


def _sorting(plan: QueryPlan | None) -> str:
    if plan is None:
        return ""
    return ", ".join(w for w, on in (("filesort", plan.filesort), ("temporary", plan.temporary)) if on)


def plans_comment(checks: Sequence[PlanCheck], shown: int) -> list[str]:
    """The comment's section: a line per comparison with a changed plan, and the first ``shown`` changed
    statements' plans folded (the comment shortens this first when it is too long)."""
    changed = [(c, s) for c in checks for s in c.changed]
    if not changed:
        return []
    lines = [f"🔀 {_md(plans_summary(c))}" for c in checks if c.changed]
    body: list[str] = []
    for check, statement in changed[:shown]:
        body += [f"{code(statement.template)} ({_md(check.scenario)}): {_md('; '.join(statement.changes))}", ""]
        body += [*_md_table(statement), ""]
    if len(changed) > shown:
        body += [f"{len(changed) - shown} more changed plan(s) in the full report.", ""]
    summary = "both plans of each changed statement (information, not a verdict)"
    return [*lines, "", "<details>", f"<summary>{summary}</summary>", "", *body, "</details>", ""]


def _md_table(statement: StatementPlans) -> list[str]:
    return table(HEADER, ALIGN, [tuple(_md(c) for c in row) for row in plan_rows(statement)])


def _md(text: str) -> str:
    """Text for Markdown outside code: a cell's escaping, ``<subquery2>`` shown rather than taken for HTML, and
    names inert (:func:`harness.report.mdtable.inert`: no mention, reference or link)."""
    return inert(cell(text).replace("<", "&lt;").replace(">", "&gt;"))
