"""Chart data and chart specifications for the trend site (Altair / Vega-Lite; rendered offline).

Data (aggregated in DuckDB over :meth:`harness.store.local.Store.metrics_table`, never row by row in Python):

* **points**: one per scenario x server target x threads x *commit* (the run's ``git_sha``; runs
  without one are grouped by UTC day), at the time of its first run: the median and the min-max range
  of the repetitions for QPS and p95, with the server versions, config hashes, testbeds and commits
  behind it for the tooltips.
* **versions**: one per scenario x target x threads x server version: quartiles and range.
* **scaling**: one per scenario x target x config x threads, over the runs of the newest server
  version of that target and config: QPS and p95 against thread count, one line per target (and
  config, when a target was run with several).
* **change points**: E-divisive means (:mod:`harness.judge.changepoints`) over each series of per-commit
  medians, for QPS and p95.

Specs: :func:`dashboard_spec` is the interactive page (dropdowns for scenario, server and threads
bound to Vega-Lite params); :func:`image_specs` builds the same charts with a fixed selection per
scenario for the PNG export. Data goes into named top-level datasets so
Altair never validates (or hashes) the rows.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import altair as alt
import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.errors import HarnessError
from harness.judge.changepoints import detect_change_points
from harness.model import METRIC_LABELS, METRICS
from harness.report.verdicts import fmt_value

TREND_METRICS: tuple[str, ...] = ("qps", "p95_ms")
"""Metrics the trend site charts."""

_ALL = "all"


@dataclass(frozen=True)
class ChangeMark:
    """A change point of one series, located at the commit where the new level starts."""

    scenario: str
    target: str
    threads: int
    metric: str
    index: int
    at: str
    point: str
    before: float
    after: float
    change_pct: float
    p_value: float
    confidence: float
    series_length: int

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (non-finite numbers become None, so the JSON stays valid)."""
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}

    def describe(self) -> str:
        unit = " ms" if self.metric.endswith("_ms") else ""
        return (
            f"{self.scenario} {self.target} {self.threads}t {METRIC_LABELS.get(self.metric, self.metric)}: "
            f"{fmt_value(self.before)}{unit} -> {fmt_value(self.after)}{unit} ({self.change_pct:+.1f} %) at point "
            f"{self.index + 1}/{self.series_length} ({self.point}, {self.at}); "
            f"p = {self.p_value:.3f}, confidence {self.confidence * 100:.1f} %"
        )


@dataclass(frozen=True)
class TrendData:
    """Everything the site draws, as Arrow tables plus the change points."""

    runs: int
    points: pa.Table
    versions: pa.Table
    scaling: pa.Table
    changes: tuple[ChangeMark, ...]
    time_extents: dict[str, list[int]]

    @property
    def scenarios(self) -> list[str]:
        return sorted(set(self.points.column("scenario").to_pylist()))

    @property
    def targets(self) -> list[str]:
        return sorted(set(self.points.column("target").to_pylist()))

    @property
    def threads(self) -> list[int]:
        return sorted(set(self.points.column("threads").to_pylist()))

    def default_threads(self, scenario: str | None = None) -> int:
        """The thread count with the most commits (ties: the highest), optionally within a scenario."""
        table = self.points
        if scenario is not None:
            table = table.filter(pc.equal(table.column("scenario"), scenario))
        counts = table.group_by("threads").aggregate([("threads", "count")]).to_pylist()
        if not counts:
            return 1
        best = max(counts, key=lambda r: (r["threads_count"], r["threads"]))
        return int(best["threads"])


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """A natural sort key: ``9.7.0`` < ``10.11.6`` < ``11.8.1``."""
    parts = re.findall(r"\d+|[^\d]+", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def _check_metrics(metrics: Sequence[str]) -> None:
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise HarnessError(f"unknown metric {', '.join(unknown)}: choose from {', '.join(METRICS)}")


def _connect(table: pa.Table) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("runs", table)
    return con


def _stats(metric: str, *, quartiles: bool) -> str:
    cols = [
        f'median("{metric}") AS "{metric}"',
        f'min("{metric}") AS "{metric}_min"',
        f'max("{metric}") AS "{metric}_max"',
    ]
    if quartiles:
        cols += [
            f'quantile_cont("{metric}", 0.25) AS "{metric}_q1"',
            f'quantile_cont("{metric}", 0.75) AS "{metric}_q3"',
        ]
    return ", ".join(cols)


_POINT_KEY = "coalesce(nullif(git_sha, ''), strftime(started_at, '%Y-%m-%d'))"
_ISO = "'%Y-%m-%dT%H:%M:%SZ'"


def commit_points(table: pa.Table, metrics: Sequence[str] = TREND_METRICS) -> pa.Table:
    """Per scenario x target x threads x commit: medians and ranges, ordered by series then time.

    Adds ``series`` (a number per scenario x target x threads, in order) so callers can cut the
    sorted table into series without grouping in Python.
    """
    _check_metrics(metrics)
    stats = ", ".join(_stats(m, quartiles=False) for m in metrics)
    con = _connect(table)
    try:
        return con.sql(
            f"""
            SELECT scenario, target, threads, {_POINT_KEY} AS point,
                   strftime(min(started_at), {_ISO}) AS at, count(*) AS n, {stats},
                   string_agg(DISTINCT server_version, ', ' ORDER BY server_version) AS versions,
                   string_agg(DISTINCT config_hash, ', ' ORDER BY config_hash) AS configs,
                   string_agg(DISTINCT testbed_fingerprint, ', ' ORDER BY testbed_fingerprint) AS testbeds,
                   dense_rank() OVER (ORDER BY scenario, target, threads) - 1 AS series
            FROM runs WHERE status = 'ok'
            GROUP BY scenario, target, threads, point
            ORDER BY scenario, target, threads, min(started_at), point
            """
        ).to_arrow_table()
    finally:
        con.close()


def _versions(con: duckdb.DuckDBPyConnection) -> pa.Table:
    stats = ", ".join(_stats(m, quartiles=True) for m in TREND_METRICS)
    return con.sql(
        f"""
        SELECT scenario, target, threads, coalesce(nullif(server_version, ''), '?') AS server_version,
               count(*) AS n, count(DISTINCT {_POINT_KEY}) AS commits, {stats},
               string_agg(DISTINCT config_hash, ', ' ORDER BY config_hash) AS configs,
               string_agg(DISTINCT testbed_fingerprint, ', ' ORDER BY testbed_fingerprint) AS testbeds,
               strftime(min(started_at), {_ISO}) AS first_at, strftime(max(started_at), {_ISO}) AS last_at
        FROM runs WHERE status = 'ok'
        GROUP BY ALL ORDER BY scenario, target, threads, server_version
        """
    ).to_arrow_table()


def _scaling(con: duckdb.DuckDBPyConnection) -> pa.Table:
    stats = ", ".join(_stats(m, quartiles=True) for m in TREND_METRICS)
    return con.sql(
        f"""
        WITH ok AS (SELECT * FROM runs WHERE status = 'ok'),
        latest AS (
            SELECT scenario, target, config_hash, arg_max(server_version, started_at) AS server_version
            FROM ok GROUP BY ALL
        ),
        agg AS (
            SELECT scenario, target, config_hash, server_version, threads, count(*) AS n,
                   count(DISTINCT {_POINT_KEY}) AS commits, {stats},
                   string_agg(DISTINCT testbed_fingerprint, ', ' ORDER BY testbed_fingerprint) AS testbeds
            FROM ok JOIN latest USING (scenario, target, config_hash, server_version)
            GROUP BY ALL
        )
        SELECT *, CASE WHEN count(DISTINCT config_hash) OVER (PARTITION BY scenario, target) > 1
                       THEN target || ' · ' || left(config_hash, 8) ELSE target END AS line
        FROM agg ORDER BY scenario, line, threads
        """
    ).to_arrow_table()


def change_marks(
    points: pa.Table,
    metrics: Sequence[str] = TREND_METRICS,
    *,
    alpha: float = 0.01,
    permutations: int = 199,
    min_size: int = 3,
    seed: int = 0,
) -> tuple[ChangeMark, ...]:
    """Change points of every series in ``points`` (as built by :func:`commit_points`)."""
    if points.num_rows == 0:
        return ()
    series = points.column("series").to_numpy()
    starts = np.flatnonzero(np.r_[True, series[1:] != series[:-1]])
    ends = np.r_[starts[1:], series.size]
    scenario = points.column("scenario").to_pylist()
    target = points.column("target").to_pylist()
    threads = points.column("threads").to_pylist()
    at = points.column("at").to_pylist()
    point = points.column("point").to_pylist()
    marks: list[ChangeMark] = []
    for metric in metrics:
        values = points.column(metric).to_numpy(zero_copy_only=False).astype(np.float64)
        for start, end in zip((int(i) for i in starts), (int(i) for i in ends), strict=True):
            chunk = values[start:end]
            keep = np.flatnonzero(np.isfinite(chunk))
            if keep.size < 2 * min_size:
                continue
            found = detect_change_points(
                chunk[keep], alpha=alpha, permutations=permutations, min_size=min_size, seed=seed
            )
            for cp in found:
                row = start + int(keep[cp.index])
                marks.append(
                    ChangeMark(
                        scenario=scenario[row],
                        target=target[row],
                        threads=int(threads[row]),
                        metric=metric,
                        index=cp.index,
                        at=at[row],
                        point=point[row],
                        before=cp.before_mean,
                        after=cp.after_mean,
                        change_pct=cp.change_pct,
                        p_value=cp.p_value,
                        confidence=cp.confidence,
                        series_length=int(keep.size),
                    )
                )
    marks.sort(key=lambda m: (m.scenario, m.target, m.threads, m.metric, m.index))
    return tuple(marks)


def trend_data(
    table: pa.Table,
    *,
    alpha: float = 0.01,
    permutations: int = 199,
    min_size: int = 3,
    seed: int = 0,
) -> TrendData:
    """Aggregate a metrics table (from :meth:`Store.metrics_table`) into what the site draws."""
    ok_runs = int(pc.sum(pc.equal(table.column("status"), "ok")).as_py() or 0) if table.num_rows else 0
    if ok_runs == 0:
        raise HarnessError(
            f"no ok runs to chart ({table.num_rows} run(s) selected): run a scenario first "
            "(dbperf run --scenario oltp_point_select) or loosen the filters"
        )
    points = commit_points(table)
    con = _connect(table)
    try:
        versions = _versions(con)
        scaling = _scaling(con)
    finally:
        con.close()
    order = sorted(set(versions.column("server_version").to_pylist()), key=version_key)
    rank = {v: i for i, v in enumerate(order)}
    ranks = pa.array([rank[v] for v in versions.column("server_version").to_pylist()], pa.int32())
    versions = versions.append_column("version_rank", ranks).sort_by(
        [("version_rank", "ascending"), ("scenario", "ascending"), ("target", "ascending"), ("threads", "ascending")]
    )
    changes = change_marks(points, alpha=alpha, permutations=permutations, min_size=min_size, seed=seed)
    return TrendData(ok_runs, points, versions, scaling, changes, _time_extents(points))


def _time_extents(points: pa.Table) -> dict[str, list[int]]:
    """``scenario|target|threads`` (and ``scenario|all|threads``) -> [first, last] commit time in ms.

    The trend charts take their time axis from this (a Vega-Lite param) rather than from a union of
    the layers' data, which would warn about an empty extent whenever a selection has no change point.
    """
    con = duckdb.connect()
    try:
        con.register("points", points.select(["scenario", "target", "threads", "at"]))
        rows = con.sql(
            """
            WITH p AS (SELECT scenario, target, threads, epoch_ms(CAST("at" AS TIMESTAMPTZ)) AS ms FROM points)
            SELECT scenario || '|' || target || '|' || threads AS key, min(ms), max(ms) FROM p GROUP BY ALL
            UNION ALL
            SELECT scenario || '|all|' || threads, min(ms), max(ms) FROM p GROUP BY scenario, threads
            """
        ).fetchall()
    finally:
        con.close()
    half_day = 12 * 3600 * 1000
    return {
        str(key): [int(lo), int(hi)] if hi > lo else [int(lo) - half_day, int(hi) + half_day] for key, lo, hi in rows
    }


# -- chart specifications -------------------------------------------------------------------------

_FMT = {"qps": ",.0f", "p95_ms": ".3f"}
_TITLES = {"qps": "QPS", "p95_ms": "p95 latency (ms)"}
_WIDTH = 520
_HEIGHT = 240


@dataclass(frozen=True)
class Selection:
    """The initial (or, for images, fixed) selection of scenario, server target and threads."""

    scenario: str
    threads: int
    target: str | None = None


class _Filters:
    """Vega-Lite params (bound to dropdowns when interactive) and the filter expressions on them."""

    def __init__(self, data: TrendData, selection: Selection, *, interactive: bool) -> None:
        def bind(options: list[Any], label: str, labels: list[str] | None = None) -> Any:
            if not interactive:
                return alt.Undefined
            return alt.binding_select(
                options=options, labels=labels or [str(o) for o in options], name=label, element="#filters"
            )

        targets = data.targets
        self.scenario = alt.param(name="sel_scenario", value=selection.scenario, bind=bind(data.scenarios, "scenario "))
        self.target = alt.param(
            name="sel_server",
            value=selection.target or _ALL,
            bind=bind([_ALL, *targets], "server ", ["all servers", *targets]),
        )
        self.threads = alt.param(name="sel_threads", value=selection.threads, bind=bind(data.threads, "threads "))
        self.extents = alt.param(name="time_extents", value=data.time_extents)
        self.params = (self.scenario, self.target, self.threads, self.extents)

    @staticmethod
    def expr(*, threads: bool = True, metric: str | None = None) -> str:
        parts = ["datum.scenario === sel_scenario", "(sel_server === 'all' || datum.target === sel_server)"]
        if threads:
            parts.append("datum.threads === toNumber(sel_threads)")
        if metric is not None:
            parts.append(f"datum.metric === '{metric}'")
        return " && ".join(parts)


def _color(domain: list[str], field: str = "target", title: str = "server") -> alt.Color:
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=domain), legend=alt.Legend(orient="bottom"))


def _named(name: str) -> Any:
    """A reference to a top-level named dataset (filled in by :func:`_datasets`)."""
    return alt.Data(name=name)  # type: ignore[no-untyped-call]


Layered = alt.LayerChart | alt.FacetChart


def _trend_chart(metric: str, data: TrendData, *, points: bool = True) -> Layered:
    fmt, label = _FMT[metric], _TITLES[metric]
    color = _color(data.targets)
    domain = {"expr": "time_extents[sel_scenario + '|' + sel_server + '|' + sel_threads] || [0, 1]"}
    x = alt.X("at:T", title="first run of the commit (UTC)", scale=alt.Scale(domain=domain))
    base = alt.Chart()
    band = base.mark_area(opacity=0.18).encode(
        x=x, y=alt.Y(f"{metric}_min:Q", title=f"{label}, median of repetitions"), y2=f"{metric}_max:Q", color=color
    )
    line = base.mark_line(point=alt.OverlayMarkDef(size=28) if points else False, strokeWidth=1.6).encode(
        x=x,
        y=alt.Y(f"{metric}:Q"),
        color=color,
        tooltip=[
            alt.Tooltip("target:N", title="server"),
            alt.Tooltip("versions:N", title="server version"),
            alt.Tooltip("point:N", title="commit / day"),
            alt.Tooltip("at:T", title="first run", format="%Y-%m-%d %H:%M"),
            alt.Tooltip(f"{metric}:Q", title=f"{label} median", format=fmt),
            alt.Tooltip(f"{metric}_min:Q", title="min", format=fmt),
            alt.Tooltip(f"{metric}_max:Q", title="max", format=fmt),
            alt.Tooltip("n:Q", title="repetitions"),
            alt.Tooltip("configs:N", title="config hash"),
            alt.Tooltip("testbeds:N", title="testbed"),
        ],
    )
    changes = alt.Chart()
    change_tooltip = [
        alt.Tooltip("target:N", title="server"),
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
    return alt.layer(series, marks).properties(
        title=alt.TitleParams(
            f"{label} across commits",
            subtitle="line: median of repetitions; band: min-max; dashed: change point (+/- %)",
        ),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _versions_chart(metric: str, data: TrendData) -> Layered:
    fmt, label = _FMT[metric], _TITLES[metric]
    color = _color(data.targets)
    x = alt.X(
        "server_version:N",
        title="server version",
        sort=None,  # the rows come in natural version order (a sort field would warn in layers)
        axis=alt.Axis(labelAngle=-30),
    )
    base = alt.Chart()
    offset = alt.XOffset("target:N", scale=alt.Scale(domain=data.targets))  # one domain: no union warning
    tooltip = [
        alt.Tooltip("target:N", title="server"),
        alt.Tooltip("server_version:N", title="server version"),
        alt.Tooltip(f"{metric}:Q", title=f"{label} median", format=fmt),
        alt.Tooltip(f"{metric}_q1:Q", title="25th percentile", format=fmt),
        alt.Tooltip(f"{metric}_q3:Q", title="75th percentile", format=fmt),
        alt.Tooltip(f"{metric}_min:Q", title="min", format=fmt),
        alt.Tooltip(f"{metric}_max:Q", title="max", format=fmt),
        alt.Tooltip("n:Q", title="runs"),
        alt.Tooltip("commits:Q", title="commits"),
        alt.Tooltip("configs:N", title="config hash"),
        alt.Tooltip("testbeds:N", title="testbed"),
    ]
    whisker = base.mark_rule().encode(
        x=x, xOffset=offset, y=alt.Y(f"{metric}_min:Q", title=f"{label}, all runs"), y2=f"{metric}_max:Q",
        color=color, tooltip=tooltip,
    )  # fmt: skip
    box = base.mark_bar(size=14, opacity=0.55).encode(
        x=x, xOffset=offset, y=f"{metric}_q1:Q", y2=f"{metric}_q3:Q", color=color, tooltip=tooltip
    )
    median = base.mark_tick(thickness=2.5, size=16, color="black").encode(
        x=x, xOffset=offset, y=f"{metric}:Q", tooltip=tooltip
    )
    layered = alt.layer(whisker, box, median, data=_named("versions")).transform_filter(_Filters.expr())
    return layered.properties(
        title=alt.TitleParams(f"{label} by server version", subtitle="box: 25th-75th percentile; whiskers: min-max"),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _scaling_chart(metric: str, data: TrendData) -> Layered:
    fmt, label = _FMT[metric], _TITLES[metric]
    lines = sorted(set(data.scaling.column("line").to_pylist()))
    color = _color(lines, field="line", title="server / config")
    x = alt.X(
        "threads:Q",
        title="threads (log scale)",
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=data.threads),
    )
    base = alt.Chart()
    tooltip = [
        alt.Tooltip("line:N", title="server / config"),
        alt.Tooltip("server_version:N", title="server version"),
        alt.Tooltip("config_hash:N", title="config hash"),
        alt.Tooltip("threads:Q", title="threads"),
        alt.Tooltip(f"{metric}:Q", title=f"{label} median", format=fmt),
        alt.Tooltip(f"{metric}_q1:Q", title="25th percentile", format=fmt),
        alt.Tooltip(f"{metric}_q3:Q", title="75th percentile", format=fmt),
        alt.Tooltip("n:Q", title="runs"),
        alt.Tooltip("testbeds:N", title="testbed"),
    ]
    spread = base.mark_rule(strokeWidth=3, opacity=0.5).encode(
        x=x, y=alt.Y(f"{metric}_q1:Q", title=f"{label}, median"), y2=f"{metric}_q3:Q", color=color
    )
    line = base.mark_line(point=alt.OverlayMarkDef(size=40)).encode(x=x, y=f"{metric}:Q", color=color, tooltip=tooltip)
    layered = alt.layer(spread, line, data=_named("scaling")).transform_filter(_Filters.expr(threads=False))
    return layered.properties(
        title=alt.TitleParams(
            f"{label} vs threads", subtitle="newest server version per server and config; bars: 25th-75th percentile"
        ),
        width=_WIDTH,
        height=_HEIGHT,
    )


def _rows(table: pa.Table) -> list[dict[str, Any]]:
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
    """The interactive page: trends, versions and scaling for QPS and p95, with dropdown filters.

    ``validate`` checks the spec against the Vega-Lite schema (Altair; about 0.5 s the first time).
    """
    filters = _Filters(data, selection, interactive=True)
    chart = alt.vconcat(
        alt.hconcat(_trend_chart("qps", data), _trend_chart("p95_ms", data)),
        alt.hconcat(_versions_chart("qps", data), _versions_chart("p95_ms", data)),
        alt.hconcat(_scaling_chart("qps", data), _scaling_chart("p95_ms", data)),
    ).resolve_scale(color="independent")
    spec: dict[str, Any] = chart.to_dict(validate=validate)
    spec["params"] = [p.to_dict() for p in _param_defs(filters)]
    spec["datasets"] = _datasets(data, None, None)
    return spec


IMAGE_KINDS: tuple[str, ...] = ("trend", "versions", "scaling")


def _image_template(kind: str, data: TrendData) -> dict[str, Any]:
    """The Vega-Lite dict of one kind of image, without params and data (filled per scenario)."""
    if kind == "trend":  # no point marks: hundreds of commits rasterise slowly and add nothing in a picture
        pair = [_trend_chart(m, data, points=False) for m in TREND_METRICS]
    else:
        build = {"versions": _versions_chart, "scaling": _scaling_chart}[kind]
        pair = [build(m, data) for m in TREND_METRICS]
    chart = alt.hconcat(*pair).properties(title=alt.TitleParams("", anchor="start", fontSize=15))
    spec: dict[str, Any] = chart.to_dict(validate=False)  # the builders are validated by dashboard_spec
    return spec


def image_specs(
    data: TrendData, selections: Sequence[Selection] | None = None
) -> list[tuple[Selection, str, dict[str, Any]]]:
    """``(selection, kind, spec)`` for every image: trend, versions and scaling per scenario.

    Each kind is built with Altair once and then filled in per scenario (building charts is the slow
    part of Altair); the selection is fixed in the params and the datasets are cut to it.
    """
    if selections is None:
        selections = [Selection(s, data.default_threads(s)) for s in data.scenarios]
    templates = {kind: _image_template(kind, data) for kind in IMAGE_KINDS}
    out = []
    for selection in selections:
        filters = _Filters(data, selection, interactive=False)
        params = [p.to_dict() for p in _param_defs(filters)]
        for kind, template in templates.items():
            spec = dict(template)
            spec["title"] = {
                **template["title"],
                "text": selection.scenario + ("" if kind == "scaling" else f" · {selection.threads} threads"),
            }
            spec["params"] = params
            spec["datasets"] = _datasets(data, selection, kind)
            out.append((selection, kind, spec))
    return out


def spec_json(spec: dict[str, Any]) -> str:
    """JSON safe to inline in an HTML ``<script>`` element (no ``</script>`` can appear)."""
    return json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")
