"""The sections that lead a pull request's comment and report: the largest decided change in words, the
change under test, the worst verdict of each scenario, and why each regressed cost comparison moved.

Both renderers of the comment (:mod:`harness.report.comment`, on the run's side and, from the checked
``verdicts.json``, in the trusted job) and the Markdown report use these, so what a reviewer reads first
is the same everywhere (every name a pull request wrote is inert: in a code span or through
:func:`harness.report.mdtable.inert`): *what changed* (file, setting, old → new, and the servers'
versions, and each changed scenario file), *what it did* (the largest decided change, then one row per
scenario: its worst metric) and *why* (per regressed cost comparison the metrics that moved, largest
first, and only where instructions were decided to move, the functions behind them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.model import DefinitionChange, FunctionDelta, MetricVerdict, Verdict
from harness.model.definition_change import CONTENTS
from harness.report.capacity_cells import side_cell
from harness.report.change_cells import fmt_change, fmt_per_txn
from harness.report.mdtable import cell, code, inert
from harness.report.tables import fmt_value
from harness.report.verdicts import (
    OUTCOME_ORDER,
    comparison_label,
    comparison_outcome,
    metric_label,
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
    if change.name == CONTENTS:
        return f"{code(change.file)} changed" + (f" (used by {code(change.scenario)})" if change.scenario else "")
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
    seen = sorted(
        {(v.mode, v.side_label("base"), v.base_version, v.side_label("head"), v.head_version) for v in verdicts}
    )
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


#: Metrics listed per comparison in the comment's "why" (largest change first), before its functions.
MOVED = 4
_DECIDED = ("regression", "improvement")
#: The metric whose interval decides whether functions are named (instructions per transaction).
INSTRUCTIONS = "instr_per_txn"


def _size(mv: MetricVerdict) -> float:
    """How far a metric moved, for ordering: its shown change in % (a count from 0 first: no % exists)."""
    shown = mv.shown_change()
    if shown.value is None:
        return 0.0
    return math.inf if shown.unit == "/txn" else abs(shown.value)


def moved(verdict: Verdict) -> list[MetricVerdict]:
    """The metrics of a comparison whose change was decided (a regression or an improvement, gating or
    not), the largest change first."""
    return sorted((mv for mv in verdict.metrics if mv.outcome in _DECIDED), key=lambda mv: (-_size(mv), mv.metric))


def _noise(verdict: Verdict) -> float | None:
    """The instructions per transaction within which a function's change is noise: the half-width of the
    count's own interval (or its noise), at the base; None when instructions were not decided to move."""
    instr = next((mv for mv in verdict.metrics if mv.metric == INSTRUCTIONS), None)
    if instr is None or instr.outcome not in _DECIDED or not instr.base_median:
        return None
    if instr.ci_low_pct is not None and instr.ci_high_pct is not None:
        half = (instr.ci_high_pct - instr.ci_low_pct) / 2
    else:
        half = instr.noise_pct or 0.0
    return abs(half) / 100 * instr.base_median


def regressed_explained(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The cost comparisons that regressed and decided what moved (metrics, and functions where
    instructions moved)."""
    return [
        v
        for v in sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.base, v.head))
        if v.kind == "cost" and comparison_outcome(v) == "regression" and (moved(v) or v.explanation)
    ]


def culprits(verdict: Verdict, top: int = CULPRITS) -> list[FunctionDelta]:
    """The ``top`` named functions whose instructions per transaction moved most, then the line of the
    functions the binary does not name (their sum: the part no symbol explains), when there is one.
    None when instructions were not decided to move (beyond their minimum effect), and never a function
    whose change is within the count's noise (:func:`_noise`): a cause the count does not show is not
    named by its functions."""
    noise = _noise(verdict)
    if noise is None:
        return []
    named = [d for d in verdict.explanation if d.name != UNNAMED and abs(d.delta) > noise]
    unnamed = [d for d in verdict.explanation if d.name == UNNAMED and abs(d.delta) > noise]
    return [*sorted(named, key=lambda d: (-abs(d.delta), d.name))[:top], *unnamed]


def _moved_cells(mv: MetricVerdict) -> tuple[str, str, str, str]:
    return metric_label(mv.metric), fmt_value(mv.base_median), fmt_value(mv.head_median), fmt_change(mv)


def culprit_section(verdicts: Sequence[Verdict], shown: int) -> list[str]:
    """**Why**: per regressed cost comparison (the first ``shown``), the metrics that moved, largest change
    first (fsyncs, reads, instructions ...), then, only where instructions were decided to move, the
    three functions that moved most and the unnamed rest, with their share of the change."""
    regressed = regressed_explained(verdicts)
    if not regressed:
        return []
    several = several_comparisons(verdicts)
    lines = [
        "**Why** (per regressed cost comparison: what moved, the largest change first; functions only where "
        "instructions were decided to move, with their share of all the change in self instructions, "
        "up and down)",
        "",
        "| scenario | threads | what moved | base | head | change |",
        "| :--- | ---: | :--- | ---: | ---: | ---: |",
    ]
    for verdict in regressed[:shown]:
        scenario = cell(inert((f"{comparison_label(verdict)}: " if several else "") + verdict.scenario))
        rows = [_moved_cells(mv) for mv in moved(verdict)[:MOVED]]
        functions = culprits(verdict)
        for d in functions:
            name = code(d.name).replace("|", "\\|")
            share = f"{d.share * 100:+.0f} % of the change"
            what = name if d.name == UNNAMED else f"function {name}"
            rows.append((f"{what} ({share})", f"{d.base:,.0f}", f"{d.head:,.0f}", f"{d.delta:+,.0f} /txn"))
        if not functions and any(mv.metric == INSTRUCTIONS for mv in verdict.metrics):
            rows.append(("instructions did not move beyond their minimum effect: no function named", "", "", ""))
        lines += ["| " + " | ".join((scenario, verdict.threads_label, *r)) + " |" for r in rows]
    if len(regressed) > shown:
        lines.append(f"\n{len(regressed) - shown} more regressed comparison(s): see the full report.")
    return [*lines, ""]


def largest_change(verdicts: Sequence[Verdict]) -> str:
    """The size and direction of the largest decided change of a gating metric, in plain words: the largest
    regression, or when none the largest improvement (empty when nothing was decided)."""
    rows = [(v, mv) for v in verdicts for mv in v.metrics if mv.gating and mv.outcome in _DECIDED]
    regressions = [r for r in rows if r[1].outcome == "regression"]
    pool = regressions or rows
    if not pool:
        return ""
    verdict, mv = max(pool, key=lambda r: (_size(r[1]), r[0].scenario, r[1].metric))
    shown = mv.shown_change()
    if shown.value is None:
        return ""
    direction = "rose" if shown.value > 0 else "fell"
    size = fmt_per_txn(abs(shown.value)).lstrip("+") if shown.unit == "/txn" else f"{abs(shown.value):.1f} %"
    clients = "1 client" if verdict.threads_label == "1" else f"{verdict.threads_label} clients"
    where = f"{verdict.scenario} at {clients}"
    if several_comparisons(verdicts):
        where += f" ({comparison_label(verdict)})"
    what = "regression" if mv.outcome == "regression" else "improvement"
    return (
        f"Largest {what}: {inert(where)}, {metric_label(mv.metric)} {direction} by **{size}** "
        f"({side_cell(verdict, mv, 'base')} → {side_cell(verdict, mv, 'head')})."
    )
