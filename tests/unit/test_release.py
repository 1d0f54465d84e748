"""The release report (``dbperf compare --out``): the scenario x threads x metric table, the chart."""

from __future__ import annotations

from pathlib import Path

from support.reports import CASES, check_golden, many_rows

from harness.model import Outcome
from harness.model.verdict_document import document_of, read_document
from harness.report.release import change_rows, chart_spec, pivot_table, write_release


def test_release_report_golden_and_chart(tmp_path: Path) -> None:
    verdicts, runs = many_rows()
    outcome = Outcome(tuple(runs), tuple(verdicts), exit_code=1, pairs=10, looks=1, group_id="g")
    report = write_release(tmp_path / "release", outcome, seconds=3600.0)
    text = report.read_text()
    check_golden("release_many_rows.md", text)
    png = (tmp_path / "release" / "changes.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    assert (tmp_path / "release" / "verdicts.json").is_file()
    assert "![change of every metric" in text


def test_release_verdicts_json_round_trips_through_the_one_reader(tmp_path: Path) -> None:
    verdicts, runs = many_rows()
    outcome = Outcome(tuple(runs), tuple(verdicts), exit_code=1, pairs=10, looks=1, group_id="g")
    write_release(tmp_path / "release", outcome, seconds=3600.0)
    document = read_document((tmp_path / "release" / "verdicts.json").read_text())
    assert document == document_of(outcome)


def test_pivot_has_one_row_per_scenario_and_threads() -> None:
    verdicts, _ = many_rows()
    table = pivot_table(verdicts)
    assert table[0] == "| scenario × threads | QPS | p95 (ms) |"
    assert len(table) == 2 + 15
    row = next(line for line in table if line.startswith("| oltp_read_write 16t |"))
    assert "🔴 -6.2 % [-8.8, -5.1] %" in row


def test_chart_has_a_panel_per_metric_and_a_point_per_case() -> None:
    verdicts, _ = CASES["regression"]
    rows = change_rows(verdicts)
    assert [(r["case"], r["metric"], r["outcome"]) for r in rows] == [
        ("oltp_read_only 8t", "QPS", "regression"),
        ("oltp_read_only 8t", "p95 (ms)", "regression"),
        ("oltp_read_only 8t", "CPU µs/txn", "pass"),
    ]
    spec = chart_spec(verdicts, "10.11 → 11.8")
    assert spec is not None and spec["facet"]["field"] == "metric" and spec["columns"] == 3
    assert chart_spec([], "x") is None


def test_a_workloads_per_type_metrics_get_their_columns() -> None:
    """tpcc gates on NEW_ORDER.ops_per_min (NOPM) and NEW_ORDER.p95_ms: the release table shows them."""
    from dataclasses import replace

    verdicts, _ = CASES["regression"]
    (verdict,) = verdicts
    names = ("ops_per_min", "p95_ms")
    per_type = [replace(m, metric=f"NEW_ORDER.{name}") for m, name in zip(verdict.metrics[:2], names, strict=True)]
    table = pivot_table([replace(verdict, scenario="tpcc", metrics=(*verdict.metrics, *per_type))])
    assert table[0].endswith("| NEW_ORDER.ops_per_min | NEW_ORDER.p95_ms |"), table[0]
    spec = chart_spec([replace(verdict, scenario="tpcc", metrics=tuple(per_type))], "t")
    assert spec is not None and "NEW_ORDER.ops_per_min" in str(spec)
