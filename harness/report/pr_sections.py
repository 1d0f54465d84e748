"""The sections that lead a pull request's comment and report: the change under test, the worst verdict of
each scenario, and the functions behind each regressed cost comparison.

Both renderers of the comment (:mod:`harness.report.comment`, on the run's side and, from the checked
``verdicts.json``, in the trusted job) and the Markdown report use these, so what a reviewer reads first
is the same everywhere (every name a pull request wrote is inert: in a code span or through
:func:`harness.report.mdtable.inert`): *what changed* (file, setting, old → new, and the servers'
versions), *what it did* (one row per scenario: its worst metric) and *where* (three functions per
regressed cost comparison, with their share of the change).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.model import DefinitionChange, FunctionDelta, MetricVerdict, Verdict
from harness.report.mdtable import cell, code, inert
from harness.report.verdicts import (
    OUTCOME_ORDER,
    comparison_label,
    comparison_outcome,
    needs_attention,
    several_comparisons,
    verdict_rows,
)

#: Functions listed per regressed cost comparison in the comment.
CULPRITS = 3
#: The line that sums the functions a binary does not name (harness.judge.explain.UNNAMED; the judge
#: layer is above this one, so the name is repeated here and a unit test keeps them equal).
UNNAMED = "(unnamed functions)"


def _where(change: DefinitionChange) -> str:
    at = f"{code(change.file)} line {change.line}" if change.line else code(change.file)
    section = f", [{inert(change.section)}]" if change.section and change.section != "variables" else ""
    return at + section


def change_line(change: DefinitionChange) -> str:
    """``innodb_flush_log_at_trx_commit: 1 → 2 (servers/conf/mariadb.cnf line 7, [mysqld])``, as Markdown."""
    name = code(change.name)
    if change.status == "added":
        what = f"{name} = {code(change.new)} added" if change.new else f"{name} added"
        what += f" (before: {code(change.old)}, dbperf's pin)" if change.old else ""
    elif change.status == "removed":
        what = f"{name} removed" + (f" (was {code(change.old)})" if change.old else "")
    else:
        what = (
            f"{name}: {code(change.old) if change.old else '(unset)'} → {code(change.new) if change.new else '(unset)'}"
        )
    return f"{what} ({_where(change)})"


def server_pairs(verdicts: Sequence[Verdict]) -> list[tuple[str, str, str]]:
    """Each compared pair once, sorted: its mode and both servers as `name` (version)."""
    seen = sorted({(v.mode, v.base, v.base_version, v.head, v.head_version) for v in verdicts})
    return [
        (mode, code(base) + (f" ({inert(bv)})" if bv else ""), code(head) + (f" ({inert(hv)})" if hv else ""))
        for mode, base, bv, head, hv in seen
    ]


def versions_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """One line per compared pair of servers, with the versions they reported."""
    return [
        f"- {b} → {h}" if mode == "ab" else f"- {h} against the stored baseline"
        for mode, b, h in server_pairs(verdicts)
    ]


def change_section(changes: Sequence[DefinitionChange], verdicts: Sequence[Verdict], shown: int) -> list[str]:
    """**Change under test**: the first ``shown`` settings that changed, then the servers compared (only
    **Compared** when no setting is known to have changed: a baseline gate, an A/A check, an older file)."""
    unique = list(dict.fromkeys((c.file, c.section, c.name, c.old, c.new, c.status, c.line) for c in changes))
    by_key = {(c.file, c.section, c.name, c.old, c.new, c.status, c.line): c for c in changes}
    lines = [f"- {change_line(by_key[k])}" for k in unique[:shown]]
    if len(unique) > shown:
        lines.append(f"- and {len(unique) - shown} more change(s): see `plan.json` in the full report")
    lines += versions_lines(verdicts)
    heading = "**Change under test**" if changes else "**Compared**"
    return [heading, "", *lines, ""] if lines else []


def _worst_key(row: tuple[Verdict, MetricVerdict]) -> tuple[int, int, float]:
    _, mv = row
    rank = OUTCOME_ORDER.index(mv.outcome) if mv.outcome in OUTCOME_ORDER else len(OUTCOME_ORDER)
    return (0 if needs_attention(mv) else 1, rank, -abs(mv.estimate_pct or 0.0))


def worst_rows(verdicts: Sequence[Verdict]) -> list[tuple[Verdict, MetricVerdict]]:
    """Each scenario's worst row (per compared pair when there are several): a row that needs attention
    before one that does not, then the worse outcome, then the larger change."""
    several = several_comparisons(verdicts)
    groups: dict[tuple[str, str], list[tuple[Verdict, MetricVerdict]]] = {}
    for verdict, mv in verdict_rows(verdicts):
        groups.setdefault((comparison_label(verdict) if several else "", verdict.scenario), []).append((verdict, mv))
    return [min(rows, key=_worst_key) for rows in groups.values()]


def regressed_explained(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The cost comparisons that regressed and know which functions moved."""
    return [
        v
        for v in sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.base, v.head))
        if v.explanation and comparison_outcome(v) == "regression"
    ]


def culprits(verdict: Verdict, top: int = CULPRITS) -> list[FunctionDelta]:
    """The ``top`` named functions whose instructions per transaction moved most, then the line of the
    functions the binary does not name (their sum: the part no symbol explains), when there is one."""
    named = [d for d in verdict.explanation if d.name != UNNAMED]
    unnamed = [d for d in verdict.explanation if d.name == UNNAMED and d.delta]
    return [*sorted(named, key=lambda d: (-abs(d.delta), d.name))[:top], *unnamed]


def culprit_section(verdicts: Sequence[Verdict], shown: int) -> list[str]:
    """**Where the instructions went**: three functions per regressed cost comparison (the first ``shown``
    comparisons) and the unnamed rest, with the change per transaction and its share of all the movement."""
    regressed = regressed_explained(verdicts)
    if not regressed:
        return []
    several = several_comparisons(verdicts)
    lines = [
        "**Where the instructions went** (the functions that moved most per regressed cost comparison; "
        "share: part of all the change in self instructions per transaction, up and down)",
        "",
        "| scenario | threads | function | base | head | change | share |",
        "| :--- | ---: | :--- | ---: | ---: | ---: | ---: |",
    ]
    for verdict in regressed[:shown]:
        scenario = cell(inert((f"{comparison_label(verdict)}: " if several else "") + verdict.scenario))
        for d in culprits(verdict):
            cells = (
                scenario,
                verdict.threads_label,
                code(d.name).replace("|", "\\|"),
                f"{d.base:,.0f}",
                f"{d.head:,.0f}",
                f"{d.delta:+,.0f}",
                f"{d.share * 100:+.0f} %",
            )
            lines.append("| " + " | ".join(cells) + " |")
    if len(regressed) > shown:
        lines.append(f"\n{len(regressed) - shown} more regressed comparison(s): see the full report.")
    return [*lines, ""]
