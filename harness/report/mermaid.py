"""Charts as Mermaid ``xychart-beta`` blocks: what a GitHub job summary can show (docs/reports.md).

A job summary renders GitHub-flavoured Markdown, but an image there needs an absolute URL: a relative
path to an artifact file does not resolve, ``data:`` URIs are stripped, and inline SVG is sanitised
away. GitHub draws fenced ``mermaid`` blocks wherever it renders Markdown, job summaries included, so
the summary's charts are Mermaid bar charts written from the verdicts:

* one per judged metric: each scenario x threads (x kind) comparison's change, % (head against base; a
  count's own change, per transaction where its base is below its floor: :mod:`harness.report.change_cells`);
  a metric with no estimate gets no chart, and the metrics that did not move at all (0.00 % everywhere:
  most server counters) are named in one line, so no chart is ever empty;
* one per differential flame graph where a frame moved: the frames whose own instructions per
  transaction moved most (when none moved, the flame graph's section says so and draws no chart).

Mermaid draws a bar from the bottom of the plot, not from zero, so when a chart has a negative value
its axis starts below it, a line marks zero, and every category's label carries its signed value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.model import Verdict
from harness.model.flame_graph import FlameGraph, top_changes
from harness.report.flame_svg import file_name, markdown_lines
from harness.report.verdicts import metric_label

_UNSAFE = re.compile(r'["\[\]\n`;#]')
LABEL_MAX = 40
TITLE_MAX = 90
UNCHANGED_PCT = 0.005
"""A metric whose every change is under this (shown as 0.00 %) is named in a line, not charted."""


def _label(text: str, limit: int = LABEL_MAX) -> str:
    """A category or title Mermaid can read: no quotes, brackets, semicolons, ``#``, ``%%`` or backticks; short."""
    clean = _UNSAFE.sub(" ", text).replace("%%", "%").strip()
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def _number(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"


def bar_chart(title: str, y_title: str, bars: Sequence[tuple[str, float]], unit: str = "") -> list[str]:
    """A fenced ``xychart-beta`` bar chart (categories and their values), or nothing without a bar."""
    if not bars:
        return []
    values = [v for _, v in bars]
    low, high = min(0.0, *values), max(0.0, *values)
    pad = max((high - low) * 0.1, 0.1)
    categories = ", ".join(f'"{_label(name)}: {value:+.2f}{unit}"' for name, value in bars)
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{_label(title, TITLE_MAX)}"',
        f"    x-axis [{categories}]",
        f'    y-axis "{_label(y_title)}" {_number(low - pad if low < 0 else 0)} --> {_number(high + pad)}',
        f"    bar [{', '.join(_number(v) for v in values)}]",
    ]
    if low < 0:
        lines.append(f"    line [{', '.join('0' for _ in values)}]")
    return [*lines, "```"]


def metric_charts(verdicts: Sequence[Verdict]) -> list[str]:
    """Per judged metric, a bar chart of its change in every comparison that estimated one."""
    by_metric: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for v in sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.kind)):
        for m in v.metrics:
            shown = m.shown_change()  # a count's own change: per transaction where its base is below its floor
            if shown.value is None:
                continue
            case = f"{v.scenario} {v.threads_label}t" + (" cost" if v.kind == "cost" else "")
            by_metric.setdefault((m.metric, shown.unit), []).append((case, shown.value))
    lines: list[str] = []
    unchanged = []
    for (metric, unit), bars in by_metric.items():
        if all(abs(value) < UNCHANGED_PCT for _, value in bars):
            unchanged.append(metric_label(metric))  # a chart of zero-height bars would look empty
            continue
        if unit == "/txn":
            title = f"{metric_label(metric)}: change per transaction from a base of 0, head against base"
            lines += [*bar_chart(title, "change per transaction", bars, " /txn"), ""]
            continue
        title = f"{metric_label(metric)}: change, head against base"
        lines += [*bar_chart(title, "change, %", bars, " %"), ""]
    if unchanged:
        lines += [f"Unchanged (0.00 %) in every comparison: {', '.join(unchanged)}.", ""]
    return lines


def flame_chart(graph: FlameGraph, top: int = 8) -> list[str]:
    """The frames whose own instructions per transaction moved most (head minus base), as bars."""
    bars = [(frame.name, frame.self_delta) for _, frame in top_changes(graph, top)]
    title = f"{graph.scenario} {graph.threads}t: frames that moved most"
    return bar_chart(title, "own instructions per txn, head - base", bars)


def summary_charts(verdicts: Sequence[Verdict], flames: Sequence[FlameGraph], trend_charts: int = 0) -> list[str]:
    """The job summary's charts, in Markdown a job summary renders (no image: see the module's note).

    A chart per judged metric; per flame graph its table of the frames that moved most, their chart and
    the SVG's name in the ``perf-results`` artifact; where the trend charts are.
    """
    lines = metric_charts(verdicts)
    if lines:
        lines = ["### Charts", "", *lines]
    if flames:
        lines += markdown_lines(flames, link=False)
        for graph in flames:
            lines += [*flame_chart(graph), ""]
        names = ", ".join(f"`{file_name(g)}`" for g in flames)
        lines += [f"The flame graphs (SVG, a tooltip per frame): {names} in the `perf-results` artifact.", ""]
    if trend_charts:
        lines.append(f"The trend charts: {trend_charts} PNG image(s) in `site/png/` of the `perf-results` artifact.")
    return lines
