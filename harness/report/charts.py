"""Chart specifications for the trend site (Altair / Vega-Lite; rendered offline).

The charts draw a :class:`~harness.model.history.TrendData` handed to them (aggregated by
:mod:`harness.store.trend_queries`, change points from :mod:`harness.judge.changepoint_series`); nothing here
queries or computes statistics. :func:`dashboard_spec` is the interactive page (dropdowns for
scenario, server and threads bound to Vega-Lite params); :func:`image_specs` builds the same charts
with a fixed selection per scenario for the PNG export. Data goes into named top-level datasets so
Altair never validates (or hashes) the rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import pyarrow as pa
import pyarrow.compute as pc

from harness.model import metrics as catalogue
from harness.model.history import TrendData
from harness.model.metrics import TREND_METRICS
from harness.report.chart_scales import ZOOMED, legend, y_scale, zoom_domains

_ALL = "all"
#: The thread count a cost metric's charts show: the scenario's cost runs', else the selection's.
THREADS_OF = "(cost_threads[sel_scenario] || sel_threads)"


# -- chart specifications -------------------------------------------------------------------------

_WIDTH = 520
_HEIGHT = 240


def _quartile_tooltips(metric: str, label: str, fmt: str) -> list[alt.Tooltip]:
    """The median and quartiles of ``metric`` over the runs behind one point."""
    return [
        alt.Tooltip(f"{metric}:Q", title=f"{label} median", format=fmt),
        alt.Tooltip(f"{metric}_q1:Q", title="25th percentile", format=fmt),
        alt.Tooltip(f"{metric}_q3:Q", title="75th percentile", format=fmt),
    ]


@dataclass(frozen=True)
class Selection:
    """The initial (or, for images, fixed) selection of scenario, server and threads."""

    scenario: str
    threads: int
    server: str | None = None


class _Filters:
    """Vega-Lite params (bound to dropdowns when interactive) and the filter expressions on them."""

    def __init__(self, data: TrendData, selection: Selection, *, interactive: bool) -> None:
        def bind(options: list[Any], label: str, labels: list[str] | None = None) -> Any:
            if not interactive:
                return alt.Undefined
            return alt.binding_select(
                options=options, labels=labels or [str(o) for o in options], name=label, element="#filters"
            )

        servers = data.servers
        self.scenario = alt.param(name="sel_scenario", value=selection.scenario, bind=bind(data.scenarios, "scenario "))
        self.server = alt.param(
            name="sel_server",
            value=selection.server or _ALL,
            bind=bind([_ALL, *servers], "server ", ["all servers", *servers]),
        )
        self.threads = alt.param(name="sel_threads", value=selection.threads, bind=bind(data.threads, "threads "))
        self.extents = alt.param(name="time_extents", value=data.time_extents)
        counts = _thread_counts(data)
        self.thread_domains = alt.param(name="thread_domains", value={k: _thread_domain(v) for k, v in counts.items()})
        self.thread_ticks = alt.param(name="thread_ticks", value=counts)
        # cost runs count at their own thread count (usually 1): their charts follow it, not the selection's
        cost = {
            s: data.default_threads(s, "instr_per_txn") for s in data.scenarios if data.measured("instr_per_txn", s)
        }
        self.cost_threads = alt.param(name="cost_threads", value=cost)
        self.zoom = alt.param(name="zoom", value=zoom_domains(data))
        self.params = (
            self.scenario, self.server, self.threads, self.extents, self.thread_domains, self.thread_ticks,
            self.cost_threads, self.zoom,
        )  # fmt: skip

    @staticmethod
    def expr(
        *, threads: bool = True, metric: str | None = None, one_off: bool | None = None, cost: bool = False
    ) -> str:
        """The filter of a layer: the selection, a metric's change points, and (``one_off``) only the
        runs of the committed configuration (False) or only the others (True); a cost metric's charts
        (``cost``) take the thread count of the scenario's cost runs."""
        parts = ["datum.scenario === sel_scenario", "(sel_server === 'all' || datum.server === sel_server)"]
        if threads:
            parts.append(f"datum.threads === toNumber({THREADS_OF if cost else 'sel_threads'})")
        if metric is not None:
            parts.append(f"datum.metric === '{metric}'")
        if one_off is not None:
            parts.append(f"(datum.oneoff || '') {'!==' if one_off else '==='} ''")
        return " && ".join(parts)


def _thread_counts(data: TrendData) -> dict[str, list[int]]:
    """The thread counts each scenario was measured at (the scaling chart's axis ticks)."""
    counts: dict[str, set[int]] = {}
    for row in data.scaling.select(["scenario", "threads"]).to_pylist() if data.scaling.num_rows else ():
        counts.setdefault(str(row["scenario"]), set()).add(int(row["threads"]))
    return {scenario: sorted(threads) for scenario, threads in counts.items()}


#: Room left on either side of the scaling chart's thread counts, as a factor on the log axis.
_THREAD_PAD = 2**0.35


def _thread_domain(threads: Sequence[int]) -> list[float]:
    """The scaling chart's x domain: the thread counts with some room on either side (log scale), so no
    point sits on the frame; a single thread count lands in the middle, one doubling from either edge."""
    lo, hi = min(threads), max(threads)
    if lo == hi:
        return [lo / 2, hi * 2]
    return [lo / _THREAD_PAD, hi * _THREAD_PAD]


def _color(domain: list[str], field: str = "server", title: str = "server") -> alt.Color:
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=domain), legend=legend(domain, title))


def _has_one_off(table: pa.Table) -> bool:
    """Whether any row is a one-off configuration or an uncommitted tree (drawn apart, faint)."""
    return "oneoff" in table.column_names and any(table.column("oneoff").to_pylist())


#: Subtitle lines stay under about 44 characters, so a title is never wider than a phone's chart (the
#: page's "Reading the charts" section says the rest).
_ONE_OFF_NOTE = ["faint, dashed: a one-off configuration,", "an uncommitted tree or an @base side"]
_APART = "(datum.oneoff || '') !== ''"
#: A one-off configuration's or an uncommitted tree's series: dashed (each is its own series, never
#: joined to the committed one's line; see harness.store.trend_queries).
_DASHED = alt.condition(_APART, alt.value([4, 3]), alt.value([1, 0]))


#: The ring around points measured under load, and what the charts say about it.
LOAD_COLOUR = "#1f2328"  # black: no server line is drawn in it (Tableau 10)
LOAD_NOTE = "black ring: some of the point's runs were measured under load (a load warning in their notes)"
_LOAD_LINE = "black ring: runs measured under load"
_LOAD_TIPS = [
    alt.Tooltip("loaded_n:Q", title="runs measured under load"),
    alt.Tooltip("load_note:N", title="load warning"),
]


def _has_load(table: pa.Table) -> bool:
    """Whether any point has a run measured under load."""
    return "loaded_n" in table.column_names and any(table.column("loaded_n").to_pylist())


def _faint(main: float, apart: float) -> Any:
    """An opacity: ``apart`` for the runs of a one-off configuration or an uncommitted tree."""
    return alt.condition(_APART, alt.value(apart), alt.value(main))


def _named(name: str) -> Any:
    """A reference to a top-level named dataset (filled in by :func:`_datasets`)."""
    return alt.Data(name=name)  # type: ignore[no-untyped-call]


Layered = alt.LayerChart | alt.FacetChart


def _lines(table: pa.Table) -> list[str]:
    """The colour domain: one line per server (and per testbed when runs come from several)."""
    return sorted(set(table.column("line").to_pylist())) if "line" in table.column_names else []


def _trend_chart(metric: str, data: TrendData, *, points: bool = True) -> Layered:
    fmt, label = catalogue.metric(metric).chart_format, catalogue.metric(metric).chart_title
    color = _color(_lines(data.points), field="line", title="server")
    threads = THREADS_OF if metric in ZOOMED else "sel_threads"
    domain = {"expr": f"time_extents[sel_scenario + '|' + sel_server + '|' + {threads}] || [0, 1]"}
    x = alt.X("at:T", title="first run of the commit (UTC)", scale=alt.Scale(domain=domain))
    base = alt.Chart()
    band = base.mark_area().encode(
        x=x,
        y=alt.Y(f"{metric}_min:Q", title=f"{label}, median of repetitions", scale=y_scale(metric)),
        y2=f"{metric}_max:Q",
        color=color,
        opacity=_faint(0.18, 0.07),
    )
    tip = [
        alt.Tooltip("server:N", title="server"),
        alt.Tooltip("oneoff:N", title="apart because"),
        alt.Tooltip("testbed:N", title="testbed"),
        alt.Tooltip("versions:N", title="server version"),
        alt.Tooltip("point:N", title="commit / day"),
        alt.Tooltip("at:T", title="first run", format="%Y-%m-%d %H:%M"),
        alt.Tooltip(f"{metric}:Q", title=f"{label} median", format=fmt),
        alt.Tooltip(f"{metric}_min:Q", title="min", format=fmt),
        alt.Tooltip(f"{metric}_max:Q", title="max", format=fmt),
        alt.Tooltip("n:Q", title="repetitions"),
        alt.Tooltip("configs:N", title="config hash"),
        alt.Tooltip("testbeds:N", title="testbed fingerprint"),
    ]
    line = base.mark_line(point=alt.OverlayMarkDef(size=28) if points else False, strokeWidth=1.6).encode(
        x=x, y=alt.Y(f"{metric}:Q", scale=y_scale(metric)), color=color, opacity=_faint(1.0, 0.55),
        strokeDash=_DASHED, tooltip=tip,
    )  # fmt: skip
    loaded = (
        [  # a ring around a point any of whose runs was measured under load (harness.testbed.preflight)
            base.mark_point(shape="circle", filled=False, size=170, strokeWidth=1.8, color=LOAD_COLOUR)
            .encode(x=x, y=alt.Y(f"{metric}:Q", scale=y_scale(metric)), tooltip=[*tip, *_LOAD_TIPS])
            .transform_filter("datum.loaded_n > 0")
        ]
        if _has_load(data.points)
        else []
    )
    changes = alt.Chart()
    change_tooltip = [
        alt.Tooltip("server:N", title="server"),
        alt.Tooltip("testbed:N", title="testbed"),
        alt.Tooltip("point:N", title="change at commit / day"),
        alt.Tooltip("at:T", title="first run", format="%Y-%m-%d %H:%M"),
        alt.Tooltip("change_pct:Q", title="change %", format="+.1f"),
        alt.Tooltip("before:Q", title="mean before", format=fmt),
        alt.Tooltip("after:Q", title="mean after", format=fmt),
        alt.Tooltip("confidence:Q", title="confidence", format=".1%"),
    ]
    rules = changes.mark_rule(strokeDash=[5, 3], strokeWidth=2).encode(x="at:T", color=color, tooltip=change_tooltip)
    labels = changes.mark_text(align="left", dx=4, dy=-4, baseline="top", fontSize=11).encode(
        x="at:T", y=alt.value(0), text=alt.Text("change_pct:Q", format="+.1f"), color=color, tooltip=change_tooltip
    )
    cost = metric in ZOOMED
    series = alt.layer(band, line, *loaded, data=_named("points")).transform_filter(_Filters.expr(cost=cost))
    marks = alt.layer(rules, labels, data=_named("changes")).transform_filter(_Filters.expr(metric=metric, cost=cost))
    layers: list[Any] = [series, marks]
    subtitle = ["line: median of repetitions, band: min-max", "dashed rule: change point (+/- %)"]
    if loaded:
        subtitle.append(_LOAD_LINE)
    if _has_one_off(data.points):
        subtitle += _ONE_OFF_NOTE
        if not points:  # a picture of a long history: a lone one-off point needs a mark of its own
            apart = base.mark_point(filled=False, size=40, opacity=0.7).encode(x=x, y=f"{metric}:Q", color=color)
            only = _Filters.expr(one_off=True, cost=cost) + f" && isValid(datum['{metric}'])"
            layers.insert(1, alt.layer(apart, data=_named("points")).transform_filter(only))
    return alt.layer(*layers).properties(
        title=alt.TitleParams(f"{label} across commits", subtitle=subtitle),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _versions_chart(metric: str, data: TrendData) -> Layered:
    fmt, label = catalogue.metric(metric).chart_format, catalogue.metric(metric).chart_title
    lines = _lines(data.versions)
    color = _color(lines, field="line", title="server")
    x = alt.X(
        "server_version:N",
        title="server version",
        sort=None,  # the rows come in natural version order (a sort field would warn in layers)
        # one line per part of a version (10.11.19 / MariaDB / 0+deb12u1): no label reaches past the chart
        axis=alt.Axis(labelAngle=0, labelExpr="split(datum.label, '-')", labelLimit=0),
    )
    base = alt.Chart()
    offset = alt.XOffset("line:N", scale=alt.Scale(domain=lines))  # one domain: no union warning
    tooltip = [
        alt.Tooltip("server:N", title="server"),
        alt.Tooltip("testbed:N", title="testbed"),
        alt.Tooltip("server_version:N", title="server version"),
        alt.Tooltip("oneoff:N", title="apart because"),
        *_quartile_tooltips(metric, label, fmt),
        alt.Tooltip(f"{metric}_min:Q", title="min", format=fmt),
        alt.Tooltip(f"{metric}_max:Q", title="max", format=fmt),
        alt.Tooltip("n:Q", title="runs"),
        alt.Tooltip("commits:Q", title="commits"),
        alt.Tooltip("configs:N", title="config hash"),
        alt.Tooltip("testbeds:N", title="testbed fingerprint"),
        *(_LOAD_TIPS[:1] if _has_load(data.versions) else []),
    ]
    whisker = base.mark_rule().encode(
        x=x, xOffset=offset, y=alt.Y(f"{metric}_min:Q", title=f"{label}, all runs", scale=y_scale(metric)),
        y2=f"{metric}_max:Q", color=color, tooltip=tooltip,
    )  # fmt: skip
    box = base.mark_bar(size=14).encode(
        x=x, xOffset=offset, y=f"{metric}_q1:Q", y2=f"{metric}_q3:Q", color=color, opacity=_faint(0.55, 0.2),
        tooltip=tooltip,
    )  # fmt: skip
    median = base.mark_tick(thickness=2.5, size=16, color="black").encode(
        x=x, xOffset=offset, y=f"{metric}:Q", tooltip=tooltip
    )
    layered = alt.layer(whisker, box, median, data=_named("versions")).transform_filter(
        _Filters.expr(cost=metric in ZOOMED)
    )
    subtitle = ["box: 25th-75th percentile, whiskers: min-max"]
    if _has_one_off(data.versions):
        subtitle += ["faint: a one-off configuration,", "an uncommitted tree or an @base side"]
    return layered.properties(
        title=alt.TitleParams(f"{label} by server version", subtitle=subtitle),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _scaling_chart(metric: str, data: TrendData) -> Layered:
    fmt, label = catalogue.metric(metric).chart_format, catalogue.metric(metric).chart_title
    lines = sorted(set(data.scaling.column("line").to_pylist()))
    several = "testbed" in data.points.column_names and len(set(data.points.column("testbed").to_pylist())) > 1
    title = "server / config / testbed" if several else "server / config"
    color = _color(lines, field="line", title=title)
    x = alt.X(  # the domain and ticks follow the scenario: one thread count sits in the middle, not on an edge
        "threads:Q",
        title="threads (log scale)",
        scale=alt.Scale(type="log", base=2, domain={"expr": "thread_domains[sel_scenario] || [0.5, 2]"}, nice=False),
        axis=alt.Axis(values={"expr": "thread_ticks[sel_scenario] || [1]"}),
    )
    base = alt.Chart()
    tooltip = [
        alt.Tooltip("line:N", title=title),
        alt.Tooltip("server_version:N", title="server version"),
        alt.Tooltip("config_hash:N", title="config hash"),
        alt.Tooltip("oneoff:N", title="apart because"),
        alt.Tooltip("threads:Q", title="threads"),
        *_quartile_tooltips(metric, label, fmt),
        alt.Tooltip("n:Q", title="runs"),
        alt.Tooltip("testbed:N", title="testbed"),
    ]
    spread = base.mark_rule(strokeWidth=3).encode(
        x=x,
        y=alt.Y(f"{metric}_q1:Q", title=f"{label}, median", scale=y_scale(metric)),
        y2=f"{metric}_q3:Q",
        color=color,
        opacity=_faint(0.5, 0.2),
    )
    line = base.mark_line(point=alt.OverlayMarkDef(size=40)).encode(
        x=x, y=f"{metric}:Q", color=color, opacity=_faint(1.0, 0.55), strokeDash=_DASHED, tooltip=tooltip
    )
    layers: list[Any] = [alt.layer(spread, line, data=_named("scaling")).transform_filter(_Filters.expr(threads=False))]
    subtitle = ["newest version per server and config", "bars: 25th-75th percentile"]
    if _has_one_off(data.scaling):
        subtitle += _ONE_OFF_NOTE
    return alt.layer(*layers).properties(
        title=alt.TitleParams(f"{label} vs threads", subtitle=subtitle),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    if "oneoff" in table.column_names and not _has_one_off(table):  # the usual case: the charts read a
        table = table.drop_columns(["oneoff"])  # missing field as "" (a smaller page)
    return table.to_pylist()  # type: ignore[no-any-return]


_DATASETS = {"trend": ("points", "changes"), "versions": ("versions",), "scaling": ("scaling",)}


def _datasets(data: TrendData, fixed: Selection | None, kind: str | None) -> dict[str, list[dict[str, Any]]]:
    """The named datasets of a spec: all rows, or for an image (``fixed``) only the datasets its
    ``kind`` draws, cut to the selection (the less JSON vl-convert parses, the faster it renders)."""
    names = _DATASETS[kind] if kind is not None else ("points", "versions", "scaling", "changes")

    def rows(table: pa.Table, *, by_threads: bool = True) -> list[dict[str, Any]]:
        if fixed is not None:
            keep = pc.equal(table.column("scenario"), fixed.scenario)
            if by_threads:
                keep = pc.and_(keep, pc.equal(table.column("threads"), fixed.threads))
            table = table.filter(keep)
        return _rows(table)

    datasets: dict[str, list[dict[str, Any]]] = {name: [] for name in ("points", "versions", "scaling", "changes")}
    if "points" in names:
        datasets["points"] = rows(data.points.drop_columns(["series"]))
    if "versions" in names:
        datasets["versions"] = rows(data.versions)
    if "scaling" in names:
        datasets["scaling"] = rows(data.scaling, by_threads=False)
    if "changes" in names:
        datasets["changes"] = [
            m.as_dict()
            for m in data.changes
            if fixed is None or (m.scenario == fixed.scenario and m.threads == fixed.threads)
        ]
    return datasets


def _param_defs(filters: _Filters) -> list[alt.VariableParameter]:
    defs = []
    for p in filters.params:
        param = p.param
        if not isinstance(param, alt.VariableParameter):
            raise TypeError(f"unexpected param {param!r}")
        defs.append(param)
    return defs


def dashboard_spec(data: TrendData, selection: Selection, *, validate: bool = True) -> dict[str, Any]:
    """The interactive page: trends, versions and scaling for every charted metric anyone measured
    (QPS and p95 from timing runs, instructions per transaction from cost runs), with dropdown filters.

    ``validate`` checks the spec against the Vega-Lite schema (Altair; about 0.5 s the first time).
    """
    filters = _Filters(data, selection, interactive=True)
    metrics = [m for m in TREND_METRICS if data.measured(m)] or ["qps"]
    charts = [build(m, data) for m in metrics for build in (_trend_chart, _versions_chart, _scaling_chart)]
    # a grid of one row per metric (across commits, by version, against threads); the page's script sets
    # the columns and the charts' widths to the window (harness.report.site_page): 3 wide, 1 on a phone
    chart = alt.concat(*charts, columns=len(IMAGE_KINDS)).resolve_scale(color="independent")
    spec: dict[str, Any] = chart.to_dict(validate=validate)
    spec["params"] = [p.to_dict() for p in _param_defs(filters)]
    spec["datasets"] = _datasets(data, None, None)
    return spec


IMAGE_KINDS: tuple[str, ...] = ("trend", "versions", "scaling")


def spec_json(spec: dict[str, Any]) -> str:
    """JSON safe to inline in an HTML ``<script>`` element (no ``</script>`` can appear)."""
    return json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
