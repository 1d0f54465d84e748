"""The trend site's PNG images: the charts of :mod:`harness.report.charts` with a fixed selection per
scenario, for pull-request comments and READMEs (``dbperf trend`` writes them to ``OUT/png/``, at most
2,000 px wide: :mod:`harness.report.png`)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import altair as alt
import pyarrow.compute as pc

from harness.model.history import TrendData
from harness.model.metrics import TREND_METRICS
from harness.report.chart_scales import legend
from harness.report.charts import (
    IMAGE_KINDS,
    Selection,
    _datasets,
    _Filters,
    _param_defs,
    _scaling_chart,
    _trend_chart,
    _versions_chart,
)

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
