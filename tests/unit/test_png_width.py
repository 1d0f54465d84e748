"""No PNG dbperf writes is wider than 2,000 px (issue 34: a thread-pool comparison's changes.png was
8,629 x 409 px). Every PNG writer goes through harness.report.png.render_png, which is checked on a chart
laid out far wider; changes.png of a comparison with many metrics is rendered for real."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import altair as alt
from support.reports import CASES

from harness.report.png import MAX_WIDTH_PX, png_size, render_png
from harness.report.release import chart_spec

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def test_only_the_png_module_calls_the_png_renderer():
    callers = []
    for path in HARNESS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in {"vegalite_to_png", "vega_to_png", "savefig"}:
                callers.append(str(path.relative_to(HARNESS)))
    assert callers == ["report/png.py", "report/png.py"], callers  # its first render and its narrower one


def test_a_chart_laid_out_wider_than_the_cap_is_rendered_at_the_cap():
    panels = [
        alt.Chart(alt.Data(values=[{"x": i, "y": i}])).mark_point().encode(x="x:Q", y="y:Q").properties(width=400)  # type: ignore[no-untyped-call]
        for i in range(8)
    ]
    spec = alt.hconcat(*panels).to_dict()
    wide = render_png(spec, scale=1.0, max_width=100_000)
    assert png_size(wide)[0] > 3000  # the chart itself is that wide
    width, height = png_size(render_png(spec, scale=1.5))
    assert MAX_WIDTH_PX - 10 <= width <= MAX_WIDTH_PX and height > 50


def test_changes_png_of_a_comparison_with_many_metrics_fits():
    verdicts, _ = CASES["regression"]
    (verdict,) = verdicts
    names = ("qps", "p95_ms", "p99_ms", "cpu_per_txn", "capacity_clients", "capacity_qps", "READ.p99_ms")
    many = tuple(replace(verdict.metrics[0], metric=name) for name in names)
    spec = chart_spec([replace(verdict, scenario="threadpool_read_write", metrics=many)], "pool")
    assert spec is not None
    width, _ = png_size(render_png(spec, scale=1.5, max_width=100_000))  # as laid out, before any shrinking
    assert width <= MAX_WIDTH_PX, width
