"""Query plans of a scenario's statements on the base and head servers of an A/B comparison.

Before an A/B comparison measures, each side's server runs a few transactions of the scenario with its
general log on; every statement template it issued is then EXPLAINed (``EXPLAIN FORMAT=JSON``) on both
sides (:mod:`harness.measure.plan_capture`), and the two plans are compared table by table
(:mod:`harness.model.plan_changes`). A changed plan is a finding of its own: information that explains a cost
or timing change, never a verdict, so it does not move the exit code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableAccess:
    """How a plan reads one table: the server's access type (``const``, ``eq_ref``, ``ref``, ``range``,
    ``index``, ``ALL``; "" when it gives none, as for an INSERT), the key it uses ("" for none) and its
    estimate of the rows read per scan (None when it gives none)."""

    table: str
    access_type: str = ""
    key: str = ""
    rows: float | None = None


@dataclass(frozen=True)
class QueryPlan:
    """One statement's plan: the tables in the order the server reads them (its join order), and
    whether it sorts with a filesort or builds a temporary table."""

    tables: tuple[TableAccess, ...]
    filesort: bool = False
    temporary: bool = False


@dataclass(frozen=True)
class StatementPlans:
    """One statement template (literals replaced by ``?``), the example EXPLAINed on both sides, each
    side's plan (None when that server refused to EXPLAIN it: ``base_error``/``head_error`` say why),
    and what changed between them in words (empty: the same plan)."""

    template: str
    example: str
    base: QueryPlan | None
    head: QueryPlan | None
    changes: tuple[str, ...] = ()
    base_error: str = ""
    head_error: str = ""


@dataclass(frozen=True)
class PlanCheck:
    """The plans of one A/B comparison's scenario: every template checked, and a note when the check
    was skipped or cut short (an external server, a capture that failed)."""

    scenario: str
    base: str  # the servers' names, as in the verdicts
    head: str
    statements: tuple[StatementPlans, ...] = ()
    base_version: str = ""
    head_version: str = ""
    note: str = ""

    @property
    def changed(self) -> tuple[StatementPlans, ...]:
        """The statements whose plan differs between base and head."""
        return tuple(s for s in self.statements if s.changes)
