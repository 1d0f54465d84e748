"""The trend site's page on seeded history (issue 34, item 7): it fits a wide window and a phone (viewport,
responsive style, a script that lays the charts out to the page's width), zooms cost axes to the data,
draws the work vector, has a release view (server versions side by side, timing and cost), explains its
legend (config hashes included), files a scenario's ``@base`` side with it, and rings runs measured under
load. The page's behaviour in a browser is tests/integration/test_trend_site.py's."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from support.factories import cost_run, find_nodes, run

from harness.model import Probes, RunResult
from harness.pipeline import history
from harness.report.chart_scales import MIN_SPAN
from harness.report.charts import Selection, dashboard_spec
from harness.report.site import build_site
from harness.report.work_chart import work_spec
from harness.store.rows import arrow_tables
from harness.store.schema import METRIC_COLUMNS, METRICS_TABLE_KEYS

LOAD = "load average 9.12 on 2 cores: other work will add noise"
DELTAS = {"innodb_data_fsyncs": 0, "rows_read": 1000, "innodb_buffer_pool_read_requests": 4000}


def _at(r: RunResult, commit: int, server: str, version: str, i: int, **changes: Any) -> RunResult:
    return dataclasses.replace(
        r,
        run_id=f"{server}-{r.kind}-{commit}-{i}-{r.scenario}",
        server=server,
        server_version=version,
        git_sha=f"{commit:040x}",
        started_at=r.started_at + timedelta(days=commit, minutes=i),
        config_hash=f"{commit // 2}{server}"[:12],
        **changes,
    )


def _runs() -> list[RunResult]:
    runs = []
    for commit in range(3):
        for server, version, qps, instr in (
            ("mariadb-local", "10.11.6-MariaDB", 1000.0, 42_418.0),
            ("mariadb-11.8", "11.8.2-MariaDB", 1100.0, 45_100.0),
        ):
            for i in range(2):
                notes = (LOAD,) if (commit, i) == (2, 0) else ()
                runs.append(_at(run(qps + commit, threads=4), commit, server, version, i, notes=notes))
                cost = cost_run(instr + commit * 0.3)  # 0.001 % per commit: noise, never a visible step
                probes = Probes(status_deltas=DELTAS, syscalls={"total": 7200, "fsync": 0, "net": 2000})
                runs.append(_at(cost, commit, server, version, i, probes=probes))
    # a pull request's base side of a changed scenario, as ``dbperf ci run`` names it
    runs += [
        _at(run(900.0, threads=4), 3, "mariadb-local", "10.11.6-MariaDB", i, scenario="oltp_point_select@base")
        for i in range(2)
    ]
    return runs


def _table(runs: list[RunResult]) -> pa.Table:
    return arrow_tables(runs)["runs"].select([*METRICS_TABLE_KEYS, *METRIC_COLUMNS])


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    data = history(_table(_runs()))
    result = build_site(data, tmp_path_factory.mktemp("site"), images=False)
    return result.index.read_text(), data


def _spec(page: str, name: str = "dbperf-spec") -> dict[str, Any]:
    found = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', page, re.S)
    assert found, name
    return json.loads(found[1])  # type: ignore[no-any-return]


def test_the_page_fits_a_wide_window_and_a_phone(page: tuple[str, Any]) -> None:
    html, _ = page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "@media (max-width:600px)" in html and "#vis,#work{width:100%;overflow-x:auto}" in html
    assert ".scroll{overflow-x:auto" in html  # wide tables scroll inside their box, not the page
    spec = _spec(html)
    assert spec["columns"] == 3 and "concat" in spec  # a grid the script re-flows: 3, 2 or 1 columns
    assert "var MIN_PLOT = 240, MAX_PLOT = 520, CHROME = 110;" in html
    assert "window.addEventListener('resize'" in html and "box.scrollWidth - box.clientWidth" in html
    titles = list(re.findall(r'"subtitle":\[(.*?)\]', json.dumps(spec, separators=(",", ":"))))
    assert titles and all(len(line) <= 46 for group in titles for line in json.loads(f"[{group}]")), titles


def test_cost_axes_are_zoomed_to_the_data_never_from_zero(page: tuple[str, Any]) -> None:
    _, data = page
    spec = dashboard_spec(data, Selection("oltp_point_select", 4), validate=True)
    zoom = next(p["value"] for p in spec["params"] if p["name"] == "zoom")
    lo, hi = zoom["instr_per_txn|oltp_point_select"]
    assert 40_000 < lo < 42_418 and 45_100.6 < hi < 47_000  # both servers' values, none near 0
    assert hi - lo >= (lo + hi) / 2 * MIN_SPAN
    fields = find_nodes(spec, "field", "instr_per_txn_min") + find_nodes(spec, "field", "instr_per_txn")
    scales = [y["scale"] for y in fields if "scale" in y]
    assert scales and all(s["zero"] is False and "zoom[" in s["domain"]["expr"] for s in scales)
    qps = [y for y in find_nodes(spec, "field", "qps_min") if "scale" in y]
    assert not qps  # timing axes keep 0


def test_the_work_vector_is_drawn_per_component_with_axes_no_narrower_than_what_matters(page: tuple[str, Any]) -> None:
    html, data = page
    work = _spec(html, "dbperf-work-spec")
    assert work == work_spec(data, Selection("oltp_point_select", 4))
    labels = {row["label"] for row in work["datasets"]["work"] if not row.get("pad")}
    assert labels == {"syscalls/txn", "send+recv/txn", "buffer-pool read requests/txn", "rows read/txn"}
    assert "fsync+fdatasync/txn" not in labels  # 0 everywhere: not drawn
    pads = [r for r in work["datasets"]["work"] if r.get("pad") and r["component"] == "rows_read"]
    assert len(pads) == 2 and pads[1]["value"] - pads[0]["value"] >= 2 * 0.5  # rows read's floor is 0.5 /txn
    assert 'id="work-vector"' in html


def test_the_release_view_puts_server_versions_side_by_side(page: tuple[str, Any]) -> None:
    html, _ = page
    release = html.split('<h2 id="releases">', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r"<th>([^<]*)<br><span class=server>([^<]*)</span></th>", release)
    assert heads == [("10.11.6-MariaDB", "mariadb-local"), ("11.8.2-MariaDB", "mariadb-11.8")]
    rows = re.findall(r"<tr data-scenario='oltp_point_select'>(.*?)</tr>", release)
    qps = next(r for r in rows if "QPS <span class=kind>(timing)</span>" in r)
    assert "+10.0 %" in qps  # 1,101 against 1,001
    assert any("instructions/txn" in r and "(cost)" in r for r in rows)


def test_the_legend_is_explained_config_hashes_included(page: tuple[str, Any]) -> None:
    html, _ = page
    guide = html.split('<h2 id="reading">', 1)[1].split("<h2>", 1)[0]
    assert "config hash" in guide and "effective variables" in guide
    assert "black ring" in guide.lower() and "@base" in guide
    hashes = re.findall(r"<td><code>([0-9a-z-]{8})</code>", guide)
    assert hashes.count("0mariadb") == 2 and hashes.count("1mariadb") == 2  # two configurations of each server


def test_a_scenarios_base_side_is_drawn_with_it_and_loaded_runs_are_ringed(page: tuple[str, Any]) -> None:
    html, data = page
    assert data.scenarios == ["oltp_point_select"]  # no separate "oltp_point_select@base" entry
    lines = set(data.points.column("line").to_pylist())
    assert "mariadb-local · @base (the base tree's scenario)" in lines
    loaded = [p for p in data.points.to_pylist() if p["loaded_n"]]
    assert [(p["server"], p["threads"], p["loaded_n"], p["load_note"]) for p in loaded] == [
        ("mariadb-11.8", 4, 1, LOAD),
        ("mariadb-local", 4, 1, LOAD),
    ]
    assert "datum.loaded_n > 0" in html and "black ring: runs measured under load" in html


def test_no_page_is_built_from_a_missing_folder_on_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(Exception, match="cannot create"):
        build_site(history(_table(_runs()[:4])), blocker / "site", images=False)
