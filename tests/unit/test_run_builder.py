"""One place builds a RunResult (harness/model/measurement.py), from who a run is and what was measured:
measured runs, every import and the store's rows go through it."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.factories import make_testbed

from harness.model import LatencyBucket, Metrics, OperationStats, Probes, Totals
from harness.model.measurement import Measurement, RunIdentity, build_run

HARNESS = Path(__file__).resolve().parents[2] / "harness"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
WHO = RunIdentity(
    run_id="r1",
    server="s",
    flavour="mariadb",
    provider="local",
    scenario="oltp_point_select",
    scenario_hash="h",
    profile="quick",
    script="oltp_point_select",
    threads=2,
    repetition=1,
    warmup_s=1.0,
    time_s=3.0,
    testbed=make_testbed(cpu_model="cpu", memory_gb=4.0, disk="ssd", hostname=""),
)
TOTALS = Totals(3.0, 300, 300, 0, 0, 0, 0, 0.1, 0.5, 2.0, 0.9)
HISTOGRAM = (LatencyBucket(0.5, 200), LatencyBucket(0.9, 100))
OPERATIONS = (OperationStats(type="READ", count=300, errors=0, retries=0, latency_sum_ms=150.0, seconds=3.0),)


def test_runresult_is_constructed_in_one_module_of_harness() -> None:
    built = sorted(
        str(path.relative_to(HARNESS.parent))
        for path in HARNESS.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "RunResult")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "RunResult")
        )
    )
    assert built == ["harness/model/measurement.py"]


def test_an_ok_run_derives_its_metrics_unless_given() -> None:
    probes = Probes(server_cpu_s=0.3)
    run = build_run(WHO, Measurement(NOW, NOW, totals=TOTALS, histogram=HISTOGRAM, probes=probes))
    assert run.status == "ok" and not run.failure
    assert run.metrics == Metrics.derive(TOTALS, HISTOGRAM, probes)
    assert run.metrics.tps == pytest.approx(100.0) and run.metrics.cpu_per_txn == pytest.approx(1000.0)
    given = Metrics(tps=1.0)
    assert build_run(WHO, Measurement(NOW, NOW, totals=TOTALS, metrics=given)).metrics == given


def test_a_failed_run_keeps_its_intervals_never_its_figures() -> None:
    measured = Measurement(
        NOW, NOW, failure="server died", totals=TOTALS, metrics=Metrics(tps=1.0), operations=OPERATIONS
    )
    run = build_run(WHO, measured)
    assert (run.status, run.failure) == ("failed", "server died")
    assert (run.totals, run.metrics, run.operations) == (None, Metrics(), ())


def test_identity_and_measurement_are_the_whole_record() -> None:
    """Every RunResult field comes from one of the two halves (status is the builder's own)."""
    from dataclasses import fields

    from harness.model import RunResult

    halves = {f.name for f in fields(RunIdentity)} | {f.name for f in fields(Measurement)}
    assert {f.name for f in fields(RunResult)} - halves == {"status"}
    assert not {f.name for f in fields(RunIdentity)} & {f.name for f in fields(Measurement)}
