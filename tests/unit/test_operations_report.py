"""Per-operation statistics beyond the parser: store round trip, reports, BMF, gate metrics and baselines.

The operations come from real sysbench output (tests/data/sysbench/ops_protocol_probe.out); seeded
synthetic histograms give the gate a change and no change. Regenerate the golden file with
``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_operations_report.py``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from support.factories import run, scenario
from support.reports import check_golden, synthetic

from harness.errors import ConfigError
from harness.judge.baseline_writer import write_baseline
from harness.judge.baselines import load_baseline
from harness.judge.gate import PairedCase, judge_pairs
from harness.model import OperationStats, RunResult
from harness.report.bmf import to_bmf, validate_bmf
from harness.report.operation_tables import operation_rows
from harness.report.runs_markdown import render_runs_markdown
from harness.store.duckdb_file import Store
from harness.sysbench.ops_protocol import parse_operations

DATA = Path(__file__).resolve().parents[1] / "data"
PROBE = parse_operations((DATA / "sysbench" / "ops_protocol_probe.out").read_text().splitlines(), 3.0)
REFERENCE_SCHEMA = DATA / "reference" / "bmf.schema.json"


def ycsb_run(ops: tuple[OperationStats, ...] = PROBE, **kwargs: object) -> RunResult:
    base = run(2000.0, **kwargs)  # type: ignore[arg-type]
    return replace(base, scenario="ycsb_a", script="lua/ycsb_a.lua", operations=ops)


def test_store_round_trip_with_and_without_samples(tmp_path: Path) -> None:
    store = Store(tmp_path / "dbperf.duckdb")
    with_ops, without = ycsb_run(), run(100.0)
    store.save(with_ops)
    store.save(without)
    assert store.get(with_ops.run_id).operations == PROBE
    light = {r.run_id: r for r in store.runs()}
    assert light[with_ops.run_id].operations == PROBE  # the gate and exports read runs without samples
    assert light[without.run_id].operations == ()
    assert (store.runs_dir / with_ops.run_id / "operations.parquet").is_file()
    assert not (store.runs_dir / without.run_id / "operations.parquet").exists()  # no empty file per run


def test_read_misses_are_stored_and_shown(tmp_path: Path) -> None:
    """A read that found no row is counted per type, kept by the store and in run --json (issue 37)."""
    missed = tuple(replace(o, misses=3) if o.type == "READ" else o for o in PROBE)
    store = Store(tmp_path / "dbperf.duckdb")
    result = ycsb_run(missed)
    store.save(result)
    assert {o.type: o.misses for o in store.get(result.run_id).operations} == {"READ": 3, "UPDATE": 0}
    doc = result.summary_dict()
    assert [o["misses"] for o in doc["operations"]] == [3, 0]  # type: ignore[union-attr]
    assert [r.misses for r in operation_rows([result])] == [3, 0]


def test_rows_merge_repetitions_and_leave_cost_runs_out() -> None:
    runs = [ycsb_run(), ycsb_run(), replace(ycsb_run(), kind="cost"), run(10.0)]
    rows = operation_rows(runs)
    assert [(r.type, r.runs) for r in rows] == [("READ", 2), ("UPDATE", 2)]
    assert sum(r.share for r in rows) == pytest.approx(1.0)
    assert rows[0].count == PROBE[0].count and rows[0].ops_per_s == PROBE[0].ops_per_s


def test_markdown_per_type_table_golden() -> None:
    runs = [
        replace(ycsb_run((synthetic("READ", 0.2, 1), synthetic("UPDATE", 0.9, 2))), repetition=1, run_id="r1"),
        replace(ycsb_run((synthetic("READ", 0.21, 3), synthetic("UPDATE", 1.0, 4))), repetition=2, run_id="r2"),
    ]
    text = render_runs_markdown(runs, title="dbperf: ycsb_a")
    check_golden("operations_runs.md", text)
    assert "### Per operation type" in text
    assert "### Per operation type" not in render_runs_markdown([run(100.0)])


def test_bmf_one_benchmark_per_type_valid_against_benchers_schema() -> None:
    doc = to_bmf([ycsb_run(), ycsb_run(), replace(ycsb_run(), kind="cost", metrics=run(1.0, instr=5e4).metrics)])
    jsonschema.validate(doc, json.loads(REFERENCE_SCHEMA.read_text()))
    validate_bmf(doc)
    base = "mariadb-local/ycsb_a/ci/8t"
    assert {k for k in doc if "/op/" in k} == {f"{base}/op/READ", f"{base}/op/UPDATE"}  # none for cost runs
    read = doc[f"{base}/op/READ"]
    assert read["throughput"]["value"] == pytest.approx(PROBE[0].count / 3.0, abs=1e-6)
    assert set(read) == {"throughput", "p95-latency", "p99-latency"}


def _pairs(head_read_ms: float) -> list[tuple[RunResult, RunResult]]:
    return [
        (
            ycsb_run((synthetic("READ", 0.2, 10 + i), synthetic("UPDATE", 1.0, 20 + i))),
            ycsb_run((synthetic("READ", head_read_ms, 30 + i), synthetic("UPDATE", 1.0, 40 + i))),
        )
        for i in range(10)
    ]


def test_gate_judges_a_per_type_metric_with_and_without_a_change() -> None:
    sc = scenario(
        "ycsb_a",
        gate_metrics=("ops_per_s", "READ.p99_ms"),
        min_effects={"ops_per_s": 0.05, "READ.p99_ms": 0.10},
    )
    slower = judge_pairs([PairedCase(sc, 8, "base", "head", _pairs(0.4))])[0]
    by_metric = {m.metric: m for m in slower.metrics}
    assert by_metric["READ.p99_ms"].outcome == "regression" and by_metric["READ.p99_ms"].gating
    assert by_metric["READ.p99_ms"].higher_is_worse
    assert by_metric["ops_per_s"].outcome != "regression" and not by_metric["ops_per_s"].higher_is_worse
    same = judge_pairs([PairedCase(sc, 8, "base", "head", _pairs(0.2))])[0]
    assert {m.metric: m.outcome for m in same.metrics}["READ.p99_ms"] != "regression"


def test_baseline_keeps_per_operation_samples(tmp_path: Path) -> None:
    runs = [ycsb_run((synthetic("READ", 0.2, i), synthetic("UPDATE", 1.0, 50 + i))) for i in range(3)]
    path = write_baseline(tmp_path, runs)
    loaded = load_baseline(path)
    assert loaded.values("READ.p99_ms") == tuple(r.metric("READ.p99_ms") for r in runs)
    assert len(loaded.values("ops_per_s")) == 3 and loaded.values("UPDATE.ops_per_min")


def test_scenario_files_take_per_operation_metric_names(tmp_path: Path) -> None:
    from harness.config.scenarios import load_scenario_file

    source = (Path(__file__).resolve().parents[2] / "scenarios" / "ycsb_a.toml").read_text()
    (tmp_path / "lua").mkdir()
    for lua in ("ycsb_a.lua", "ycsb_common.lua", "dbperf_ops.lua"):
        (tmp_path / "lua" / lua).write_text(
            (Path(__file__).resolve().parents[2] / "scenarios" / "lua" / lua).read_text()
        )
    (tmp_path / "ycsb_a.toml").write_text(source)
    loaded = load_scenario_file(tmp_path / "ycsb_a.toml", "quick")
    assert loaded.gate_metrics == ("ops_per_s", "READ.p99_ms", "instr_per_txn")
    assert loaded.created_tables == ("usertable", "ycsb_meta")
    before = loaded.definition_hash
    common = tmp_path / "lua" / "ycsb_common.lua"
    common.write_text(common.read_text() + "\n-- changed\n")
    assert load_scenario_file(tmp_path / "ycsb_a.toml", "quick").definition_hash != before  # modules count
    (tmp_path / "ycsb_a.toml").write_text(source.replace('"READ.p99_ms", "instr', '"READ.p99", "instr'))
    with pytest.raises(ConfigError, match=r"READ\.p99"):
        load_scenario_file(tmp_path / "ycsb_a.toml", "quick")


def test_json_summary_lists_the_operation_types() -> None:
    doc = ycsb_run().summary_dict()
    assert doc["ops_per_s"] == pytest.approx(sum(o.count for o in PROBE) / 3.0)
    assert [o["type"] for o in doc["operations"]] == ["READ", "UPDATE"]  # type: ignore[union-attr]
    assert run(10.0).summary_dict()["operations"] == [] and run(10.0).summary_dict()["ops_per_s"] is None
    json.dumps(doc, default=str)


def test_a_declared_headline_leads_the_per_type_sections() -> None:
    """tpcc's NOPM is its headline: the reports lead with it, beside the TPS of the whole mix."""
    from harness.report.operation_tables import headlines, operations_markdown, operations_table

    new_order = synthetic("NEW_ORDER", 50.0, seed=1, count=600, seconds=60.0)  # 600 per minute
    tpcc = [
        replace(
            run(25.0, threads=4),
            scenario="tpcc",
            operations=(new_order, synthetic("PAYMENT", 15.0, seed=2)),
            options={"headline": "NEW_ORDER.ops_per_min", "headline_label": "NOPM (tpmC-like, unaudited)"},
        )
        for _ in range(2)
    ]
    lines = headlines([*tpcc, ycsb_run()])  # a workload without a headline adds none
    assert lines == [
        f"NOPM (tpmC-like, unaudited): {new_order.ops_per_min:,.1f} (tpcc on mariadb-local, 4 threads; "
        "the whole mix 25.00 TPS)"
    ]
    markdown = "\n".join(operations_markdown(tpcc))
    assert markdown.index("**NOPM (tpmC-like, unaudited)**: ") < markdown.index("| scenario |")
    table = operations_table(tpcc)
    assert table is not None and str(table.title).startswith("NOPM (tpmC-like, unaudited): ")
    assert headlines([ycsb_run()]) == []
