"""The trend charts' layout, checked on what Vega really draws (vl-convert's scenegraph and SVG): legends
are never cut and stay inside the figure, and one thread count sits in the middle of the scaling chart."""

from __future__ import annotations

import dataclasses
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
import vl_convert
from support.factories import find_nodes, run

from harness.model import RunResult
from harness.model.history import TrendData, one_off_note
from harness.pipeline import history
from harness.report.chart_scales import legend, wrap_label
from harness.report.charts import Selection, dashboard_spec
from harness.report.trend_images import image_specs
from harness.store.rows import arrow_tables
from harness.store.schema import METRIC_COLUMNS, METRICS_TABLE_KEYS

LONG = "mariadb-local-with-a-rather-long-server-name"
VARIABLES = {"innodb_buffer_pool_size": "268435456", "innodb_flush_log_at_trx_commit": "1"}


def _history(servers: dict[str, tuple[str, ...]], threads: tuple[int, ...] = (1,)) -> TrendData:
    """Three commits of oltp_point_select per server (its runs' notes given) and thread count."""
    runs: list[RunResult] = []
    for c in range(3):
        for server, notes in servers.items():
            for t in threads:
                r = run(1000.0 * t, server=server, threads=t)
                runs.append(
                    dataclasses.replace(
                        r,
                        run_id=f"{server}-{c}-{t}",
                        git_sha=f"{c:040x}",
                        started_at=r.started_at.replace(day=1 + c),
                        notes=notes,
                    )
                )
    table: pa.Table = arrow_tables(runs)["runs"].select([*METRICS_TABLE_KEYS, *METRIC_COLUMNS])
    return history(table)


def _image(data: TrendData, kind: str, threads: int = 1) -> dict[str, Any]:
    return next(spec for _, k, spec in image_specs(data, [Selection("oltp_point_select", threads)]) if k == kind)


def test_wrapped_labels_join_back_and_fit() -> None:
    label = f"{LONG} · one-off: " + ",".join(f"{k}={v}" for k, v in VARIABLES.items())
    lines = wrap_label(label, 40)
    assert "".join(lines) == label
    assert all(len(line.rstrip()) <= 40 for line in lines) and len(lines) == 4
    assert wrap_label("x" * 90, 40) == ["x" * 40, "x" * 40, "x" * 10]  # one word longer than a line
    assert wrap_label("short") == ["short"] and wrap_label("") == [""]
    spec = legend(["a", "b"], "server").to_dict()
    assert spec["labelLimit"] == 0 and spec["orient"] == "bottom" and "labelExpr" not in spec


@pytest.mark.parametrize("kind", ["trend", "versions", "scaling"])
def test_a_long_legend_label_is_drawn_whole_inside_the_figure(kind: str) -> None:
    head = f"{LONG}+" + ",".join(f"{k}={v}" for k, v in sorted(VARIABLES.items()))
    data = _history({"mariadb-local": (), LONG: (), head: (one_off_note(VARIABLES),)})
    spec = _image(data, kind)
    svg = vl_convert.vegalite_to_svg(spec)
    assert "…" not in svg  # Vega's ellipsis: a label cut at its pixel limit
    long_line = f"{LONG} · one-off: innodb_buffer_pool_size=268435456,innodb_flush_log_at_trx_commit=1"
    for line in wrap_label(long_line):
        assert line.strip() in svg
    graph = vl_convert.vegalite_to_scenegraph(spec)
    width, height, (ox, oy) = graph["width"], graph["height"], graph["origin"]
    legends = [item for node in find_nodes(graph["scenegraph"], "role", "legend") for item in node["items"]]
    assert legends
    for box in legends:  # every legend inside the figure (the scenegraph's positions are from the origin)
        assert ox + box["x"] >= 0 and ox + box["x"] + box["width"] <= width, (box, width)
        assert oy + box["y"] >= 0 and oy + box["y"] + box["height"] <= height, (box, height)


def test_many_series_wrap_into_columns_no_wider_than_the_chart() -> None:
    data = _history({f"mariadb-11.{i}-threadpool": () for i in range(12)})
    graph = vl_convert.vegalite_to_scenegraph(_image(data, "trend"))
    legends = [item for node in find_nodes(graph["scenegraph"], "role", "legend") for item in node["items"]]
    assert legends and all(box["width"] <= 520 for box in legends), [box["width"] for box in legends]
    assert all(box["height"] > 3 * 12 for box in legends)  # several rows, not one row off to the side


def test_an_image_legend_lists_only_the_lines_it_draws() -> None:
    data = _history({"mariadb-local": (), "mysql-9.7": ()})
    other = pc.equal(data.points.column("server"), "mysql-9.7")  # mysql-9.7 ran another scenario
    scenario = pc.if_else(other, "oltp_read_only", data.points.column("scenario"))
    data = dataclasses.replace(data, points=data.points.set_column(0, "scenario", scenario))
    assert data.points.column_names[0] == "scenario" and data.scenarios == ["oltp_point_select", "oltp_read_only"]
    page = dashboard_spec(data, Selection("oltp_point_select", 1), validate=False)
    assert ["mariadb-local", "mysql-9.7"] in [
        c["scale"]["domain"] for c in find_nodes(page, "field", "line") if "scale" in c
    ]
    domains = [
        c["scale"]["domain"] for c in find_nodes(_image(data, "trend")["hconcat"], "field", "line") if "scale" in c
    ]
    assert domains and all(domain == ["mariadb-local"] for domain in domains)


def _symbol_x(spec: dict[str, Any]) -> list[float]:
    graph = vl_convert.vegalite_to_scenegraph(spec)
    marks = [m for m in find_nodes(graph["scenegraph"], "marktype", "symbol") if m.get("role") == "mark"]
    return [float(item["x"]) for mark in marks for item in mark["items"]]


def test_one_thread_count_sits_in_the_middle_of_the_scaling_chart() -> None:
    data = _history({"mariadb-local": ()}, threads=(8,))
    assert dashboard_spec(data, Selection("oltp_point_select", 8), validate=False)["params"][4]["value"] == {
        "oltp_point_select": [4.0, 16.0]
    }
    xs = _symbol_x(_image(data, "scaling", 8))
    assert xs and all(abs(x - 520 / 2) < 1 for x in xs), xs  # the plot is 520 px wide


def test_several_thread_counts_keep_off_the_edges() -> None:
    data = _history({"mariadb-local": ()}, threads=(1, 4, 16))
    xs = sorted(set(_symbol_x(_image(data, "scaling", 16))))
    assert len(xs) == 3 and xs[0] > 20 and xs[-1] < 500, xs
    assert abs((xs[1] - xs[0]) - (xs[2] - xs[1])) < 1  # still a log scale: 1, 4, 16 evenly spaced
