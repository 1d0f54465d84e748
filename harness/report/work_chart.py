"""The trend site's work-vector chart: what a transaction made the server do, per commit, one small chart
per component (fsyncs, page reads, rows read, handler calls, system calls by kind: docs/work-vector.md).

Each component has its own y axis zoomed to its values (a count that moves from 3.00 to 3.02 per
transaction is a visible step, not a flat line at the top of an axis from 0), but never narrower than
twice the component's floor (the smallest change per transaction that matters: docs/work-vector.md) or
:data:`~harness.report.charts.MIN_SPAN` of its values: a change too small to matter stays a flat line.
The chart follows the page's scenario and server selection (the params of
:func:`harness.report.charts.dashboard_spec`); it draws every thread count its cost runs were counted at
(usually 1), not the timing runs' selection.
"""

from __future__ import annotations

from typing import Any

import altair as alt

from harness.model.history import TrendData
from harness.model.work import WORK
from harness.report.chart_scales import MIN_SPAN, legend
from harness.report.charts import _ALL, Selection

#: Small multiples per row before the page's script fits them to the window.
WORK_COLUMNS = 4


def measured(data: TrendData) -> bool:
    """Whether any cost run kept a work vector (otherwise no chart is drawn)."""
    return data.work.num_rows > 0 and "label" in data.work.column_names


def _pads(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two invisible rows per scenario x component that widen its axis to the span that matters."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["scenario"]), str(row["component"])), []).append(row)
    pads = []
    for (scenario, component), found in groups.items():
        values = [float(v) for r in found for v in (r["value_min"], r["value_max"]) if v is not None]
        lo, hi = min(values), max(values)
        middle = (lo + hi) / 2.0
        floor = WORK[component].floor if component in WORK else 0.0
        span = max(hi - lo, 2.0 * floor, abs(middle) * MIN_SPAN)
        ats = sorted(str(r["at"]) for r in found)
        for value, at in ((middle - span * 0.55, ats[0]), (middle + span * 0.55, ats[-1])):
            pads.append(
                {"scenario": scenario, "component": component, "label": found[0]["label"], "at": at,
                 "value": max(value, 0.0) if lo >= 0 else value, "pad": True}
            )  # fmt: skip
    return pads


def work_spec(data: TrendData, selection: Selection) -> dict[str, Any] | None:
    """Vega-Lite for the work vector over commits, or None when no cost run kept one."""
    if not measured(data):
        return None
    lines = sorted(set(data.work.column("line").to_pylist()))
    order = [w.label for w in WORK.values()]
    colour = alt.Color("line:N", title="server", scale=alt.Scale(domain=lines), legend=legend(lines, "server"))
    tooltip = [
        alt.Tooltip("label:N", title="count"),
        alt.Tooltip("server:N", title="server"),
        alt.Tooltip("oneoff:N", title="apart because"),
        alt.Tooltip("versions:N", title="server version"),
        alt.Tooltip("threads:Q", title="threads"),
        alt.Tooltip("point:N", title="commit / day"),
        alt.Tooltip("at:T", title="first run", format="%Y-%m-%d %H:%M"),
        alt.Tooltip("value:Q", title="per transaction, median", format=",.4~g"),
        alt.Tooltip("value_min:Q", title="min", format=",.4~g"),
        alt.Tooltip("value_max:Q", title="max", format=",.4~g"),
        alt.Tooltip("n:Q", title="cost runs"),
    ]
    dashed = alt.condition("(datum.oneoff || '') !== ''", alt.value([4, 3]), alt.value([1, 0]))
    x = alt.X("at:T", title=None, axis=alt.Axis(labelAngle=0, tickCount=3, labelOverlap=True))
    y = alt.Y("value:Q", title=None, scale=alt.Scale(zero=False, nice=False), axis=alt.Axis(format=",.4~r"))
    lines = (
        alt.Chart()
        .mark_line(point=alt.OverlayMarkDef(size=30), strokeWidth=1.6)
        .encode(x=x, y=y, color=colour, detail="threads:N", strokeDash=dashed, tooltip=tooltip)
        .transform_filter("!datum.pad")
    )
    pads = alt.Chart().mark_point(opacity=0).encode(x=x, y=y).transform_filter("datum.pad === true")
    cell = alt.layer(lines, pads).properties(width=200, height=120)
    where = (
        "datum.scenario === sel_scenario && (datum.pad === true || sel_server === 'all' || datum.server === sel_server)"
    )
    chart = (
        cell.facet(
            facet=alt.Facet("label:N", title=None, sort=order, header=alt.Header(labelLimit=0, labelFontSize=12)),
            columns=WORK_COLUMNS,
            data=alt.Data(name="work"),  # type: ignore[no-untyped-call]
        )
        .transform_filter(where)
        .resolve_scale(y="independent", x="independent")
        .properties(
            title=alt.TitleParams(
                "Work vector per transaction across commits (cost runs)",
                subtitle=["median of repetitions; each count on its own axis, zoomed to its values"],
                anchor="start",
            )
        )
    )
    spec: dict[str, Any] = chart.to_dict(validate=False)
    spec["params"] = [
        {"name": "sel_scenario", "value": selection.scenario},
        {"name": "sel_server", "value": selection.server or _ALL},
        {"name": "sel_threads", "value": selection.threads},
    ]
    rows = data.work.to_pylist()
    spec["datasets"] = {"work": rows + _pads(rows)}
    return spec
