"""Scales and legends of the trend charts: which axes are zoomed to the data and how far, and legends whose
labels are never cut (:mod:`harness.report.charts` builds the charts with them)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import altair as alt

from harness.model.history import TrendData

_WIDTH = 520  # the widest chart's plot (harness.report.charts); a phone's is about 270 px

#: Metrics whose axes are zoomed to the data: a cost count moves by tenths of a percent, and an axis from
#: 0 draws a 0.5 % change as a flat line (issue 34). Timing axes keep 0, where a change reads as its size.
ZOOMED = frozenset({"instr_per_txn"})


#: A zoomed axis spans at least this share of its values' middle: a 0.5 % change (the cost minimum effect)
#: fills a quarter of it, while run-to-run noise of 0.01 % stays a flat line (docs/reports.md).
MIN_SPAN = 0.02


def y_scale(metric: str) -> Any:
    """The y scale of a metric's charts: zoomed to the selected scenario's values, at least :data:`MIN_SPAN`
    of their middle (:data:`ZOOMED`, the ``zoom`` param), else Vega-Lite's default (from 0)."""
    if metric not in ZOOMED:
        return alt.Undefined
    return alt.Scale(zero=False, nice=False, domain={"expr": f"zoom['{metric}|' + sel_scenario] || [0, 1]"})


def zoom_domains(data: TrendData) -> dict[str, list[float]]:
    """``metric|scenario`` -> the y domain of a zoomed metric's charts: every value any chart of the scenario
    draws (all servers, commits and versions), widened to :data:`MIN_SPAN` of its middle, with 5 % room."""
    found: dict[str, list[float]] = {}
    for metric in ZOOMED:
        values: dict[str, list[float]] = {}
        for table, columns in (
            (data.points, (metric, f"{metric}_min", f"{metric}_max")),
            (data.versions, (metric, f"{metric}_min", f"{metric}_max")),
            (data.scaling, (metric, f"{metric}_q1", f"{metric}_q3")),
        ):
            names = [c for c in columns if c in table.column_names]
            for row in table.select(["scenario", *names]).to_pylist() if names and table.num_rows else ():
                values.setdefault(str(row["scenario"]), []).extend(float(row[c]) for c in names if row[c] is not None)
        for scenario, seen in values.items():
            if not seen:
                continue
            lo, hi = min(seen), max(seen)
            middle, span = (lo + hi) / 2.0, max(hi - lo, abs(lo + hi) / 2.0 * MIN_SPAN)
            found[f"{metric}|{scenario}"] = [middle - span * 0.55, middle + span * 0.55]
    return found


#: Legend labels are never cut: a label wider than this wraps onto more lines (Vega draws a list as lines);
#: 44 characters of 11 px text (about 270 px) fit the narrowest chart, a phone's (harness.report.site_page).
_LABEL_CHARS = 44
_CHAR_PX = 6.2  # about the width of one character of a legend label (11 px sans-serif)
_SYMBOL_PX = 40  # a legend entry's symbol and the gap to the next column


def wrap_label(label: str, width: int = _LABEL_CHARS) -> list[str]:
    """A legend label in lines of at most ``width`` characters, broken after a space or a comma (a run of
    variables ``a=1,b=2``), a word longer than a line cut where it must; the lines join back to ``label``."""
    lines: list[str] = []
    line = ""
    for word in re.split(r"(?<=[ ,])", label):
        rest = word
        while len(rest) > width:  # one word longer than a line
            if line:
                lines.append(line)
                line = ""
            lines.append(rest[:width])
            rest = rest[width:]
        if line and len(line) + len(rest.rstrip()) > width:
            lines.append(line)
            line = ""
        line += rest
    return [*lines, line] if line or not lines else lines


def legend(domain: Sequence[str], title: str) -> alt.Legend:
    """A legend below the chart whose labels are never cut: no pixel limit on a label, long ones wrapped
    onto several lines, and as many columns as the longest label leaves room for (one when it is long)."""
    longest = max((min(len(name), _LABEL_CHARS) for name in domain), default=1)
    columns = max(1, min(4, int(_WIDTH // (longest * _CHAR_PX + _SYMBOL_PX))))
    wrapped = {name: wrap_label(name) for name in domain if len(name) > _LABEL_CHARS}
    expr = f"{json.dumps(wrapped, ensure_ascii=False)}[datum.label] || datum.label" if wrapped else alt.Undefined
    return alt.Legend(
        orient="bottom", direction="vertical", columns=columns, labelLimit=0, titleLimit=0, labelExpr=expr, title=title
    )
