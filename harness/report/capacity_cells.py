"""Base and head cells of a verdict row, with a capacity figure marked for what it is.

A capacity at the SLO (:mod:`harness.judge.capacity`) is measured only where a side's p95 crossed the
objective between two client counts of its sweep. Where every sweep of the side missed the objective at
its first client count, the figure is extrapolated below the measured range; where every sweep met it at
every count, it is the sweep's top, a lower bound. Every renderer (terminal, report.md, the comment, the
capacity PNG) shows the same marks, so a reviewer never reads an extrapolation as a measurement
(docs/reports.md, "Capacity at the SLO").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from harness.model import MetricVerdict, Verdict
from harness.model.verdict import CAPACITY_METRICS, mark
from harness.report.tables import fmt_value

#: Under a table with a marked capacity figure: what the marks mean.
LEGEND = (
    "Capacity at the SLO: 'extrapolated' marks a figure below the sweep's first client count (the side "
    "missed the SLO at every client count, in every sweep or in the sweeps counted), '≥' a lower bound at "
    "the sweep's top (the side met the SLO at every client count); unmarked figures were measured between "
    "two client counts."
)


def side_mark(verdict: Verdict, metric: str, side: Literal["base", "head"]) -> str:
    """The mark of one side's figure of a capacity metric ("" for any other metric or a measured figure)."""
    if metric not in CAPACITY_METRICS or not verdict.curves:
        return ""
    return mark([c for c in verdict.curves if c.side == side])


def side_cell(verdict: Verdict, mv: MetricVerdict, side: Literal["base", "head"]) -> str:
    """``4.82 extrapolated``, ``≥ 128``, ``96.1 (extrapolated in 3 of 11 sweeps)`` or the plain value."""
    text = fmt_value(mv.base_median if side == "base" else mv.head_median)
    found = side_mark(verdict, mv.metric, side)
    if not found:
        return text
    if found == "at least":
        return f"≥ {text}"
    if found == "extrapolated":
        return f"{text} extrapolated"
    return f"{text} ({found})"


def marked(verdicts: Sequence[Verdict]) -> bool:
    """Whether any capacity figure of these verdicts carries a mark (then :data:`LEGEND` is shown)."""
    return any(side_mark(v, mv.metric, side) for v in verdicts for mv in v.metrics for side in ("base", "head"))
