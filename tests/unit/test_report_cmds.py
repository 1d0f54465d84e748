"""Trend data, change points over stored history, and the report / trend / changes / export commands."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from support.reports import T0, make_run

from harness.cli import main
from harness.judge.changepoint_series import change_marks
from harness.model import Metrics, RunResult
from harness.pipeline import history as trend_data
from harness.report.charts import Selection, dashboard_spec
from harness.report.site import build_site
from harness.store import Store
from harness.store.trend_queries import commit_points, version_key

STEP_AT = 15
COMMITS = 30


def history(seed: int = 7) -> list[RunResult]:
    """oltp_read_only on mariadb-11.8: 30 commits x 3 repetitions at 4 and 8 threads.

    At 8 threads QPS drops 12 % from commit 15 on (p95 rises 12 %); 4 threads stay flat.
    """
    rng = np.random.default_rng(seed)
    runs = []
    for c in range(COMMITS):
        for threads in (4, 8):
            level = 0.88 if threads == 8 and c >= STEP_AT else 1.0
            for rep in range(3):
                base = make_run(rep, threads=threads)
                qps = 20000.0 * level * float(rng.lognormal(0.0, 0.015))
                runs.append(
                    replace(
                        base,
                        run_id=f"h-{c:02d}-{threads}-{rep}",
                        started_at=T0 + timedelta(hours=c, minutes=threads + rep),
                        git_sha=f"{c:02d}" + "ab" * 19,
                        group_id=f"commit-{c:02d}",
                        server_version="11.8.1-MariaDB" if c < 20 else "11.8.2-MariaDB",
                        metrics=Metrics(qps=qps, tps=qps / 14, p95_ms=4.0 / level * float(rng.lognormal(0, 0.015))),
                    )
                )
    return runs


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    s = Store(tmp_path_factory.mktemp("store") / "dbperf.duckdb")
    s.save_many(history())
    failed = make_run(9, threads=8, failure="FATAL: error 2013")
    s.save(replace(failed, started_at=T0 + timedelta(days=2)))  # the newest group: "pr-123"
    return s


def run_cli(capsys: pytest.CaptureFixture[str], store: Store, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--store", str(store.path)])
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_commit_points_aggregate_repetitions(store: Store) -> None:
    points = commit_points(store.metrics_table())
    assert points.num_rows == COMMITS * 2  # the failed run adds no point
    first = points.slice(0, 1).to_pylist()[0]
    assert (first["threads"], first["n"], first["point"][:2]) == (4, 3, "00")
    assert first["qps_min"] <= first["qps"] <= first["qps_max"]
    assert first["at"] == "2026-03-02T09:04:00Z"


def test_seeded_step_is_found_where_it_is_and_nowhere_else(store: Store) -> None:
    marks = change_marks(commit_points(store.metrics_table()))
    assert [(m.threads, m.metric, m.index) for m in marks] == [(8, "p95_ms", STEP_AT), (8, "qps", STEP_AT)]
    qps = next(m for m in marks if m.metric == "qps")
    assert qps.change_pct == pytest.approx(-12.0, abs=1.5)
    assert qps.confidence >= 0.99
    assert qps.point.startswith(f"{STEP_AT:02d}")
    assert qps.series_length == COMMITS


def test_no_change_points_in_a_flat_series() -> None:
    flat = [r for r in history() if r.threads == 4]
    table_marks = change_marks(commit_points(_table(flat)))
    assert table_marks == ()


def _table(runs: list[RunResult]):
    import pyarrow as pa

    from harness.store.rows import arrow_tables
    from harness.store.schema import METRIC_COLUMNS, METRICS_TABLE_KEYS

    table: pa.Table = arrow_tables(runs)["runs"]
    return table.select([*METRICS_TABLE_KEYS, *METRIC_COLUMNS])


def test_versions_sort_naturally() -> None:
    versions = ["11.8.1-MariaDB", "9.7.0", "10.11.10-MariaDB", "10.11.9-MariaDB"]
    assert sorted(versions, key=version_key) == ["9.7.0", "10.11.9-MariaDB", "10.11.10-MariaDB", "11.8.1-MariaDB"]


def test_dashboard_spec_binds_filters_and_inlines_data(store: Store) -> None:
    data = trend_data(store.metrics_table())
    spec = dashboard_spec(data, Selection("oltp_read_only", 8))
    params = {p["name"]: p for p in spec["params"]}
    assert params["sel_scenario"]["bind"]["options"] == ["oltp_read_only"]
    assert params["sel_server"]["bind"]["options"] == ["all", "mariadb-11.8"]
    assert params["sel_threads"]["bind"]["options"] == [4, 8]
    assert params["sel_threads"]["value"] == 8
    assert len(spec["datasets"]["points"]) == COMMITS * 2
    assert [v["server_version"] for v in spec["datasets"]["versions"]][:2] == ["11.8.1-MariaDB", "11.8.1-MariaDB"]
    assert len(spec["datasets"]["changes"]) == 2
    assert "time_extents" in params


def test_build_site_without_images(store: Store, tmp_path: Path) -> None:
    result = build_site(trend_data(store.metrics_table()), tmp_path / "site", images=False)
    page = result.index.read_text()
    assert '<script src="vega-bundle.js"></script>' in page
    assert "http://" not in page.split("<script type=", 1)[0] and "https://cdn" not in page
    assert (tmp_path / "site" / "vega-bundle.js").stat().st_size > 500_000
    spec = json.loads(re.search(r'<script type="application/json" id="dbperf-spec">(.*?)</script>', page, re.S)[1])
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/v6")
    changes = json.loads((tmp_path / "site" / "changes.json").read_text())
    assert {c["metric"] for c in changes} == {"qps", "p95_ms"}
    table = page.split("<h2>Change points</h2>", 1)[1].split("</table>", 1)[0]
    assert re.search(r"<td class='num worse'>-1[1-3]\.\d %</td>", table), table


def test_changes_command_prints_size_and_confidence(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, store, "changes", "-s", "oltp_read_only", "--server", "mariadb-11.8")
    assert code == 0
    assert re.search(r"mariadb-11.8 .*oltp_read_only .*ci .* 8 .* 16/30 .* -1[1-3]\.\d % .* 99\.5 %", out), out
    assert "mariadb-11.8 oltp_read_only ci 4t: 30 commit(s), 0 change point(s)" in out
    assert "mariadb-11.8 oltp_read_only ci 8t: 30 commit(s), 1 change point(s)" in out


def test_changes_command_json(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, store, "changes", "-s", "oltp_read_only", "--server", "mariadb-11.8", "--metric", "p95_ms",
        "--threads", "8", "--json",
    )  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    assert doc["metrics"] == ["p95_ms"]
    [series] = doc["series"]
    assert (series["server"], series["scenario"], series["profile"], series["kind"]) == (
        "mariadb-11.8",
        "oltp_read_only",
        "ci",
        "time",
    )
    assert (series["threads"], series["points"]) == (8, COMMITS)
    [change] = series["changes"]
    assert change["index"] == STEP_AT
    assert change["change_pct"] == pytest.approx(13.6, abs=2.0)


def test_changes_of_an_unknown_scenario_is_a_one_line_usage_error(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(capsys, store, "changes", "-s", "oltp_read_onyl", "--server", "mariadb-11.8")
    assert code == 2
    assert err.strip() == (
        "dbperf: error: --scenario oltp_read_onyl: no scenario of that name in the catalogue nor in the store; "
        "did you mean oltp_read_only or oltp_write_only?"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("changes",),
        ("report",),
        ("judge",),
        ("export", "bmf", "--out", "unwritten.json"),
        ("runs",),
        ("trend", "--out", "unwritten-site", "--no-images"),
    ],
)
def test_a_valid_filter_without_runs_says_so_and_exits_0(
    store: Store, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], tmp_path: Path, monkeypatch
) -> None:
    # one rule in every command that filters: real names (a catalogue scenario, a stored server) matching no run
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # outside a project: judge reads baselines there
    code, out, err = run_cli(capsys, store, *args, "-s", "oltp_insert", "--server", "mariadb-11.8")
    assert code == 0, err
    assert err.startswith("dbperf: no ") and "match (scenario oltp_insert; server mariadb-11.8)" in err, err
    assert out == ""
    assert not (tmp_path / "unwritten.json").exists() and not (tmp_path / "unwritten-site").exists()


def test_report_markdown_of_the_newest_group(store: Store, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "summary.md"
    out_file.write_text("# earlier step\n")
    code, _, err = run_cli(capsys, store, "report", "--format", "markdown", "--out", str(out_file), "--append")
    assert code == 0
    assert "using the newest group pr-123" in err
    text = out_file.read_text()
    assert text.startswith("# earlier step\n\n## dbperf: group pr-123")
    assert "### ❌ Failed runs (1)" in text


def test_report_terminal_for_a_group(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, store, "report", "--group", "commit-03")
    assert code == 0
    assert "6 run(s): group commit-03" in out
    assert "scaling (median over repetitions)" in out


def test_export_bmf(store: Store, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bmf.json"
    code, out, _ = run_cli(capsys, store, "export", "bmf", "--out", str(path), "--group", "commit-20")
    assert code == 0
    assert "wrote 2 benchmark(s), 4 measure(s) from 6 ok run(s) of group commit-20" in out
    doc = json.loads(path.read_text())
    assert set(doc) == {"mariadb-11.8/oltp_read_only/ci/4t", "mariadb-11.8/oltp_read_only/ci/8t"}


def test_export_bmf_of_a_failed_group_is_an_error(
    store: Store, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli(capsys, store, "export", "bmf", "--out", str(tmp_path / "b.json"))
    assert code == 2
    assert "nothing to export: none of the 1 run(s) is ok" in err


def test_trend_command(store: Store, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run_cli(capsys, store, "trend", "--out", str(tmp_path / "site"), "--threads", "8", "--no-images")
    assert code == 0
    assert "90 ok runs, 30 commit points, 2 change point(s), 0 image(s)" in out


@pytest.mark.parametrize("command", ["report", "trend", "changes", "export"])
def test_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "Usage: dbperf" in out
    assert "Example" in out or command == "export"


def test_trend_charts_profiles_as_separate_series() -> None:
    import pyarrow as pa

    from harness.cli.report_cmds import _profiles_apart

    mixed = pa.table({"server": ["mariadb-local", "mariadb-local"], "profile": ["ci", "full"]})
    assert _profiles_apart(mixed).column("server").to_pylist() == ["mariadb-local [ci]", "mariadb-local [full]"]
    single = pa.table({"server": ["mariadb-local"], "profile": ["ci"]})
    assert _profiles_apart(single).column("server").to_pylist() == ["mariadb-local"]


def _cost_history(commits: int = 4) -> list[RunResult]:
    """Cost runs only (instructions per transaction at 1 thread), as a cost-only check stores them."""
    runs = []
    for c in range(commits):
        for rep in range(3):
            base = make_run(rep, threads=1)
            runs.append(
                replace(
                    base,
                    run_id=f"c-{c:02d}-{rep}",
                    kind="cost",
                    started_at=T0 + timedelta(hours=c, minutes=rep),
                    git_sha=f"{c:02d}" + "cd" * 19,
                    metrics=Metrics(instr_per_txn=42_000.0 + c),
                )
            )
    return runs


def test_a_cost_only_store_charts_instructions_and_no_empty_axes(tmp_path: Path) -> None:
    """A cost-only report embedded three empty PNGs (QPS and p95 axes, no data): now it charts
    instructions per transaction, and nothing that was not measured (one thread count: no scaling)."""
    from harness.report.trend_images import image_plan

    s = Store(tmp_path / "cost.duckdb")
    s.save_many(_cost_history())
    data = trend_data(s.metrics_table())
    plan = image_plan(data)
    assert [(sel.threads, kind, metrics) for sel, kind, metrics in plan] == [
        (1, "trend", ("instr_per_txn",)),
        (1, "versions", ("instr_per_txn",)),
    ]
    result = build_site(data, tmp_path / "site", images=True)
    assert [p.name for p in result.images] == ["oltp_read_only-trend.png", "oltp_read_only-versions.png"]
    spec = dashboard_spec(data, Selection("oltp_read_only", 1), validate=True)
    titles = json.dumps(spec)
    assert "instructions/txn (cost runs) across commits" in titles and "QPS across commits" not in titles


def test_timing_and_cost_runs_get_their_own_thread_counts(store: Store, tmp_path: Path) -> None:
    """Timing runs at 4 and 8 threads and cost runs at 1: QPS and p95 at 8 threads, instructions at 1, a
    scaling image of what was measured at two thread counts or more (not the instructions)."""
    from harness.report.trend_images import image_plan

    s = Store(tmp_path / "both.duckdb")
    s.save_many([*history(), *_cost_history()])
    data = trend_data(s.metrics_table())
    plan = {(sel.threads, kind): metrics for sel, kind, metrics in image_plan(data)}
    assert plan == {
        (1, "trend"): ("instr_per_txn",),
        (1, "versions"): ("instr_per_txn",),
        (8, "trend"): ("qps", "p95_ms"),
        (8, "versions"): ("qps", "p95_ms"),
        (8, "scaling"): ("qps", "p95_ms"),
    }
    perf_counted = [replace(r, metrics=Metrics(qps=1.0, p95_ms=1.0, instr_per_txn=9e9)) for r in history()[:3]]
    s.save_many(perf_counted)  # a timing run's own instructions (perf) are another count: never charted
    assert max(v for v in trend_data(s.metrics_table()).points.column("instr_per_txn").to_pylist() if v) < 50_000


def test_changes_over_cost_series_name_the_metric_they_lack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A cost series has no QPS: its line says so and names the metric to ask for (issue 34), instead of
    "0 change point(s) in QPS" over a series that cannot have one."""
    s = Store(tmp_path / "dbperf.duckdb")
    cost = [
        replace(
            make_run(rep, threads=1),
            run_id=f"c-{c:02d}-{rep}",
            kind="cost",
            started_at=T0 + timedelta(hours=c, minutes=rep),
            git_sha=f"{c:02d}" + "cd" * 19,
            group_id=f"cost-{c:02d}",
            metrics=Metrics(instr_per_txn=1_000_000.0 + rep),
        )
        for c in range(8)
        for rep in range(2)
    ]
    s.save_many(cost)
    code, out, _ = run_cli(capsys, s, "changes")
    assert code == 0
    assert "mariadb-11.8 oltp_read_only ci/cost 1t: 8 commit(s), no QPS in cost runs" in out, out
    assert out.rstrip().endswith("(QPS: not measured by cost runs; --metric instr_per_txn)"), out
    code, out, _ = run_cli(capsys, s, "changes", "--metric", "instr_per_txn")
    assert "ci/cost 1t: 8 commit(s), 0 change point(s) in instructions/txn" in out, out
