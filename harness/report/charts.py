"""Chart specifications for the trend site (Altair / Vega-Lite; rendered offline).

The charts draw a :class:`~harness.model.history.TrendData` handed to them (aggregated by
:mod:`harness.store.trend_queries`, change points from :mod:`harness.judge.changes`); nothing here
queries or computes statistics. :func:`dashboard_spec` is the interactive page (dropdowns for
scenario, server and threads bound to Vega-Lite params); :func:`image_specs` builds the same charts
with a fixed selection per scenario for the PNG export. Data goes into named top-level datasets so
Altair never validates (or hashes) the rows.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import pyarrow as pa
import pyarrow.compute as pc

from harness.model.history import TREND_METRICS, TrendData

_ALL = "all"


# -- chart specifications -------------------------------------------------------------------------

_FMT = {"qps": ",.0f", "p95_ms": ".3f", "instr_per_txn": ",.0f"}
_TITLES = {"qps": "QPS", "p95_ms": "p95 latency (ms)", "instr_per_txn": "instructions/txn (cost runs)"}
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
        self.params = (self.scenario, self.server, self.threads, self.extents, self.thread_domains, self.thread_ticks)

    @staticmethod
    def expr(*, threads: bool = True, metric: str | None = None, one_off: bool | None = None) -> str:
        """The filter of a layer: the selection, a metric's change points, and (``one_off``) only the
        runs of the committed configuration (False) or only the others (True)."""
        parts = ["datum.scenario === sel_scenario", "(sel_server === 'all' || datum.server === sel_server)"]
        if threads:
            parts.append("datum.threads === toNumber(sel_threads)")
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


#: Legend labels are never cut: a label wider than this wraps onto more lines (Vega draws a list as lines).
_LABEL_CHARS = 72
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


def _color(domain: list[str], field: str = "server", title: str = "server") -> alt.Color:
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=domain), legend=legend(domain, title))


def _has_one_off(table: pa.Table) -> bool:
    """Whether any row is a one-off configuration or an uncommitted tree (drawn apart, faint)."""
    return "oneoff" in table.column_names and any(table.column("oneoff").to_pylist())


_ONE_OFF_NOTE = "faint, dashed: a one-off configuration or an uncommitted tree, apart from the series"
_APART = "(datum.oneoff || '') !== ''"
#: A one-off configuration's or an uncommitted tree's series: dashed (each is its own series, never
#: joined to the committed one's line; see harness.store.trend_queries).
_DASHED = alt.condition(_APART, alt.value([4, 3]), alt.value([1, 0]))


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
    fmt, label = _FMT[metric], _TITLES[metric]
    color = _color(_lines(data.points), field="line", title="server")
    domain = {"expr": "time_extents[sel_scenario + '|' + sel_server + '|' + sel_threads] || [0, 1]"}
    x = alt.X("at:T", title="first run of the commit (UTC)", scale=alt.Scale(domain=domain))
    base = alt.Chart()
    band = base.mark_area().encode(
        x=x,
        y=alt.Y(f"{metric}_min:Q", title=f"{label}, median of repetitions"),
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
        x=x, y=alt.Y(f"{metric}:Q"), color=color, opacity=_faint(1.0, 0.55), strokeDash=_DASHED, tooltip=tip
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
    series = alt.layer(band, line, data=_named("points")).transform_filter(_Filters.expr())
    marks = alt.layer(rules, labels, data=_named("changes")).transform_filter(_Filters.expr(metric=metric))
    layers: list[Any] = [series, marks]
    subtitle = ["line: median of repetitions; band: min-max; dashed: change point (+/- %)"]
    if _has_one_off(data.points):
        subtitle.append(_ONE_OFF_NOTE)
        if not points:  # a picture of a long history: a lone one-off point needs a mark of its own
            apart = base.mark_point(filled=False, size=40, opacity=0.7).encode(x=x, y=f"{metric}:Q", color=color)
            only = _Filters.expr(one_off=True) + f" && isValid(datum['{metric}'])"
            layers.insert(1, alt.layer(apart, data=_named("points")).transform_filter(only))
    return alt.layer(*layers).properties(
        title=alt.TitleParams(f"{label} across commits", subtitle=subtitle),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _versions_chart(metric: str, data: TrendData) -> Layered:
    fmt, label = _FMT[metric], _TITLES[metric]
    lines = _lines(data.versions)
    color = _color(lines, field="line", title="server")
    x = alt.X(
        "server_version:N",
        title="server version",
        sort=None,  # the rows come in natural version order (a sort field would warn in layers)
        axis=alt.Axis(labelAngle=-30),
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
    ]
    whisker = base.mark_rule().encode(
        x=x, xOffset=offset, y=alt.Y(f"{metric}_min:Q", title=f"{label}, all runs"), y2=f"{metric}_max:Q",
        color=color, tooltip=tooltip,
    )  # fmt: skip
    box = base.mark_bar(size=14).encode(
        x=x, xOffset=offset, y=f"{metric}_q1:Q", y2=f"{metric}_q3:Q", color=color, opacity=_faint(0.55, 0.2),
        tooltip=tooltip,
    )  # fmt: skip
    median = base.mark_tick(thickness=2.5, size=16, color="black").encode(
        x=x, xOffset=offset, y=f"{metric}:Q", tooltip=tooltip
    )
    layered = alt.layer(whisker, box, median, data=_named("versions")).transform_filter(_Filters.expr())
    subtitle = ["box: 25th-75th percentile; whiskers: min-max"]
    if _has_one_off(data.versions):
        subtitle.append("faint: a one-off configuration or an uncommitted tree, apart from the series")
    return layered.properties(
        title=alt.TitleParams(f"{label} by server version", subtitle=subtitle),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _scaling_chart(metric: str, data: TrendData) -> Layered:
    fmt, label = _FMT[metric], _TITLES[metric]
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
        y=alt.Y(f"{metric}_q1:Q", title=f"{label}, median"),
        y2=f"{metric}_q3:Q",
        color=color,
        opacity=_faint(0.5, 0.2),
    )
    line = base.mark_line(point=alt.OverlayMarkDef(size=40)).encode(
        x=x, y=f"{metric}:Q", color=color, opacity=_faint(1.0, 0.55), strokeDash=_DASHED, tooltip=tooltip
    )
    layers: list[Any] = [alt.layer(spread, line, data=_named("scaling")).transform_filter(_Filters.expr(threads=False))]
    subtitle = ["newest server version per server and config; bars: 25th-75th percentile"]
    if _has_one_off(data.scaling):
        subtitle.append(_ONE_OFF_NOTE)
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
    chart = alt.vconcat(
        alt.hconcat(*(_trend_chart(m, data) for m in metrics)),
        alt.hconcat(*(_versions_chart(m, data) for m in metrics)),
        alt.hconcat(*(_scaling_chart(m, data) for m in metrics)),
    ).resolve_scale(color="independent")
    spec: dict[str, Any] = chart.to_dict(validate=validate)
    spec["params"] = [p.to_dict() for p in _param_defs(filters)]
    spec["datasets"] = _datasets(data, None, None)
    return spec


IMAGE_KINDS: tuple[str, ...] = ("trend", "versions", "scaling")


#: Image trend charts mark each commit's point up to this many commits per series.
_IMAGE_POINTS = 60


def _longest_series(data: TrendData) -> int:
    """The most commit points of any one series."""
    if data.points.num_rows == 0 or "series" not in data.points.column_names:
        return 0
    counts = data.points.group_by("series").aggregate([("series", "count")])
    return int(pc.max(counts.column("series_count")).as_py() or 0)


def _cut_legends(spec: Any, drawn: set[str]) -> None:
    """Every colour legend of an image cut to the lines it draws (an image shows one scenario; the
    charts were built with the lines of all), in place."""
    if isinstance(spec, list):
        for item in spec:
            _cut_legends(item, drawn)
        return
    if not isinstance(spec, dict):
        return
    color = spec.get("color")
    if isinstance(color, dict) and isinstance(color.get("scale"), dict) and "domain" in color["scale"]:
        kept = [line for line in color["scale"]["domain"] if line in drawn]
        if kept:
            color["scale"]["domain"] = kept
            color["legend"] = legend(kept, str(color.get("title", ""))).to_dict()
    for value in spec.values():
        _cut_legends(value, drawn)


def _image_template(kind: str, data: TrendData, metrics: tuple[str, ...]) -> dict[str, Any]:
    """The Vega-Lite dict of one kind of image for these metrics, without params and data (filled per scenario)."""
    if kind == "trend":  # point marks only on short series: hundreds of commits rasterise slowly and add
        # nothing in a picture, but a series of one commit is nothing but its point
        charts = [_trend_chart(m, data, points=_longest_series(data) <= _IMAGE_POINTS) for m in metrics]
    else:
        build = {"versions": _versions_chart, "scaling": _scaling_chart}[kind]
        charts = [build(m, data) for m in metrics]
    chart = alt.hconcat(*charts).properties(title=alt.TitleParams("", anchor="start", fontSize=15))
    spec: dict[str, Any] = chart.to_dict(validate=False)  # the builders are validated by dashboard_spec
    return spec


def image_plan(data: TrendData) -> list[tuple[Selection, str, tuple[str, ...]]]:
    """``(selection, kind, metrics)`` of every image worth drawing, per scenario.

    A metric is drawn only where it was measured (a cost-only scenario gets no empty QPS and p95 axes),
    at the thread count with the most commits among its own runs (cost runs count at 1 thread, timing
    runs often at more: each gets its own image then); a metric is in the scaling image only when it was
    measured at two thread counts or more (one point would sit against the axis's edge).
    """
    plan: list[tuple[Selection, str, tuple[str, ...]]] = []
    for scenario in data.scenarios:
        by_threads: dict[int, list[str]] = {}
        for metric in TREND_METRICS:
            if data.measured(metric, scenario):
                by_threads.setdefault(data.default_threads(scenario, metric), []).append(metric)
        for threads, metrics in sorted(by_threads.items()):
            plan += [(Selection(scenario, threads), kind, tuple(metrics)) for kind in ("trend", "versions")]
        scaled = tuple(m for m in TREND_METRICS if sum(data.measured(m, scenario, t) for t in data.threads) >= 2)
        if scaled:
            plan.append((Selection(scenario, data.default_threads(scenario)), "scaling", scaled))
    return plan


def image_specs(
    data: TrendData, selections: Sequence[Selection] | None = None
) -> list[tuple[Selection, str, dict[str, Any]]]:
    """``(selection, kind, spec)`` for every image of :func:`image_plan` (or of the given selections).

    Each kind and metric set is built with Altair once and then filled in per scenario (building charts
    is the slow part of Altair); the selection is fixed in the params and the datasets are cut to it.
    """
    if selections is None:
        plan = image_plan(data)
    else:
        every = tuple(m for m in TREND_METRICS if data.measured(m)) or ("qps",)
        plan = [(s, kind, every) for s in selections for kind in IMAGE_KINDS]
    templates: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    out = []
    for selection, kind, metrics in plan:
        template = templates.get((kind, metrics))
        if template is None:
            template = templates[(kind, metrics)] = _image_template(kind, data, metrics)
        filters = _Filters(data, selection, interactive=False)
        spec = copy.deepcopy(template)
        spec["title"] = {
            **template["title"],
            "text": selection.scenario + ("" if kind == "scaling" else f" · {selection.threads} threads"),
        }
        spec["params"] = [p.to_dict() for p in _param_defs(filters)]
        spec["datasets"] = _datasets(data, selection, kind)
        _cut_legends(spec["hconcat"], {str(row["line"]) for rows in spec["datasets"].values() for row in rows})
        out.append((selection, kind, spec))
    return out


def spec_json(spec: dict[str, Any]) -> str:
    """JSON safe to inline in an HTML ``<script>`` element (no ``</script>`` can appear)."""
    return json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
