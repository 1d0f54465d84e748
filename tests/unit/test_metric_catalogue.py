"""Adding a metric is one catalogue entry: every table of metric facts is read from harness.model.metrics."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from harness.judge.gate import KIND_METRICS
from harness.model import Metrics, metrics
from harness.model.metrics import CATALOGUE, METRICS, OPERATION_FIELDS, TREND_METRICS, WORK_METRICS
from harness.model.operation_stats import OperationStats
from harness.report import bmf, release, sweep_work
from harness.store.schema import METRIC_COLUMNS, RUN_COLUMNS

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def test_the_catalogue_covers_every_metrics_field_and_every_store_column():
    names = {m.name for m in CATALOGUE}
    assert len(names) == len(CATALOGUE)
    assert {f.name for f in dataclasses.fields(Metrics)} - {"work"} <= names
    assert set(METRIC_COLUMNS) == {m.store_column for m in CATALOGUE if m.store_column}
    # a store column is a DOUBLE of runs; a new one needs its migration (store/schema.py)
    assert all((column, "DOUBLE") in RUN_COLUMNS for column in METRIC_COLUMNS)
    assert set(OPERATION_FIELDS) <= {f.name for f in dataclasses.fields(OperationStats)} | {
        name for name, value in vars(OperationStats).items() if isinstance(value, property)
    }


def test_every_lookup_of_report_judge_store_bmf_and_site_resolves_through_the_catalogue():
    every = [*KIND_METRICS["time"], *KIND_METRICS["cost"], *METRICS, *TREND_METRICS, *release.METRIC_ORDER]
    for name in [*every, *bmf.MEASURES, *sweep_work.LIMITS, "NEW_ORDER.p99_ms", "ops_per_s"]:
        entry = metrics.metric(name)
        assert entry.label and entry.unit, name
    assert set(bmf.MEASURE_UNITS) == set(bmf.MEASURES.values())
    assert all(metrics.metric(m).chart_title and metrics.metric(m).trend for m in TREND_METRICS)
    assert KIND_METRICS["cost"] == ("instr_per_txn", *(w.name for w in WORK_METRICS))


def test_per_operation_names_resolve_to_their_template():
    assert metrics.metric("NEW_ORDER.p99_ms").name == "<TYPE>.p99_ms"
    assert metrics.higher_is_worse("READ.p99_ms") and not metrics.higher_is_worse("READ.ops_per_s")
    assert metrics.label("READ.p99_ms") == "READ.p99_ms"  # shown by its name, as before
    assert metrics.find("read.p99_ms") is None and metrics.find("READ.nope") is None
    with pytest.raises(KeyError):
        metrics.metric("nope")


def test_labels_users_see_are_unchanged():
    assert metrics.label("p95_ms") == "p95 (ms)" and metrics.term("p95_ms") == "p95"
    assert metrics.label("cpu_per_txn") == "CPU µs/txn" and metrics.term("cpu_per_txn") == "CPU/txn"
    assert metrics.label("capacity_clients") == "clients at SLO"
    assert metrics.term("capacity_clients") == "clients at the SLO"
    assert metrics.label("sys_fsync") == metrics.term("sys_fsync") == "fsync+fdatasync/txn"


def _metric_keyed_dicts(path: Path, names: set[str]) -> list[str]:
    """Dict literals whose keys are mostly catalogue metric names (a table of metric facts)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Dict) or None in node.keys:
            continue
        keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        hits = [k for k in keys if k in names]
        if hits and len(hits) * 2 > len(node.keys):
            found.append(f"{path.relative_to(HARNESS.parent)}:{node.lineno} {hits}")
    return found


def test_no_other_module_defines_a_dict_keyed_by_metric_names():
    names = {m.name for m in CATALOGUE} | set(OPERATION_FIELDS)
    found = [
        hit
        for path in sorted(HARNESS.rglob("*.py"))
        if path != HARNESS / "model" / "metrics.py"
        for hit in _metric_keyed_dicts(path, names)
    ]
    assert found == []
