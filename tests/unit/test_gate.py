"""Baselines and verdicts from synthetic repetitions (the statistics are tested in test_stats.py)."""

import json
import random
from pathlib import Path

import pytest
from support.factories import TESTBED, run, scenario

from harness.errors import BaselineError
from harness.judge.baseline_writer import write_baseline
from harness.judge.baselines import find_baseline, load_baseline
from harness.judge.gate import BaselineCase, PairedCase, failed_verdict, judge_against_baselines, judge_pairs
from harness.model import exit_code
from harness.pipeline.ab import balanced_orders


def _noisy(center: float, n: int, cv: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [center * rng.lognormvariate(0, cv) for _ in range(n)]


def test_baseline_round_trip(tmp_path: Path):
    runs = [run(q, p95=1.0 + i / 100) for i, q in enumerate(_noisy(10000, 6, 0.05, 1))]
    path = write_baseline(tmp_path, runs)
    assert path == tmp_path / TESTBED.fingerprint / "mariadb-local" / "oltp_point_select" / "ci" / "8t.json"
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 3 and doc["samples"]["instr_per_txn"] is None and "work" not in doc
    baseline = load_baseline(path)
    assert baseline.values("qps") == tuple(r.metrics.qps for r in runs)
    assert find_baseline(tmp_path, TESTBED, "mariadb-local", "oltp_point_select", "ci", 8) == baseline
    assert find_baseline(tmp_path, TESTBED, "mariadb-local", "oltp_point_select", "ci", 16) is None
    assert find_baseline(tmp_path, TESTBED, "mariadb-local", "oltp_point_select", "quick", 8) is None


def test_version_1_baselines_still_load(tmp_path: Path):
    """Format 1 called the server "target"; it is read as format 2, samples unchanged."""
    path = write_baseline(tmp_path, [run(100.0), run(101.0)])
    doc = json.loads(path.read_text())
    doc["format_version"] = 1
    doc["target"] = doc.pop("server")
    path.write_text(json.dumps(doc))
    baseline = load_baseline(path)
    assert baseline.server == "mariadb-local"
    assert baseline.values("qps") == (100.0, 101.0)


def test_recording_refuses_failed_runs(tmp_path: Path):
    with pytest.raises(BaselineError, match="refusing to record"):
        write_baseline(tmp_path, [run(100.0), run(0, status="failed")])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: "{not json", "not valid JSON"),
        (lambda d: {**d, "format_version": 0}, "older than this dbperf reads"),
        (lambda d: {**d, "format_version": 9}, "newer than this dbperf"),
        (lambda d: {**d, "format": "other"}, "not a dbperf baseline"),
        (lambda d: {**d, "threads": "many"}, "threads: input should be a valid integer"),
        (lambda d: {**d, "samples": {**d["samples"], "qps": []}}, "field 'samples.qps' is an empty list"),
        (lambda d: {**d, "samples": {k: v for k, v in d["samples"].items() if k != "qps"}}, "'samples.qps' is missing"),
        (lambda d: {**d, "samples": {**d["samples"], "p95_ms": [1.0, float("nan")]}}, "'samples.p95_ms[1]' is nan"),
        (lambda d: {**d, "samples": {**d["samples"], "qps": [float("inf"), 1.0]}}, "'samples.qps[0]' is inf"),
        (lambda d: {**d, "samples": {**d["samples"], "qps": [0, 1.0]}}, "'samples.qps[0]' is 0"),
        (lambda d: {**d, "samples": {**d["samples"], "cpu_per_txn": [-3.0, 1.0]}}, "'samples.cpu_per_txn[0]' is -3.0"),
    ],
)
def test_malformed_baselines_name_file_and_fix(tmp_path: Path, mutate, message: str):
    path = write_baseline(tmp_path, [run(100.0), run(101.0)])
    doc = mutate(json.loads(path.read_text()))
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_no_baseline_passes_and_says_how_to_record():
    sc = scenario()
    verdict = judge_against_baselines([BaselineCase(sc, 8, "mariadb-local", None, [run(100.0)])])[0]
    assert verdict.outcome == "no_baseline"
    assert "dbperf baseline record --scenario oltp_point_select --server mariadb-local" in verdict.metrics[0].reason
    assert exit_code([verdict]) == 0


def test_incomparable_baseline_is_never_compared(tmp_path: Path):
    baseline = load_baseline(write_baseline(tmp_path, [run(100.0), run(101.0), run(99.0)]))
    candidate = [run(50.0, config_hash="other")] * 3
    verdict = judge_against_baselines([BaselineCase(scenario(), 8, "mariadb-local", baseline, candidate)])[0]
    assert verdict.outcome == "no_baseline"
    assert "server configuration changed" in verdict.metrics[0].reason


@pytest.mark.parametrize(("field", "value"), [("server_version", "11.8.3-MariaDB"), ("build_id", "another-build")])
def test_a_baseline_of_another_build_is_not_comparable(tmp_path: Path, field: str, value: str):
    """A baseline edited (or recorded) on another server version or build id is never judged."""
    from dataclasses import replace

    baseline = load_baseline(write_baseline(tmp_path, [replace(run(q), build_id="build-a") for q in (100, 101, 99)]))
    candidate = [replace(run(50.0), **{"build_id": "build-a", field: value})] * 3
    verdict = judge_against_baselines([BaselineCase(scenario(), 8, "mariadb-local", baseline, candidate)])[0]
    assert verdict.outcome == "no_baseline"
    assert "recorded on server" in verdict.metrics[0].reason and "dbperf compare" in verdict.metrics[0].reason


def test_baseline_mode_finds_a_real_drop_and_passes_no_change(tmp_path: Path):
    baseline = load_baseline(write_baseline(tmp_path, [run(q) for q in _noisy(10000, 10, 0.03, 2)]))
    same = [run(q) for q in _noisy(10000, 10, 0.03, 3)]
    slower = [run(q) for q in _noisy(8000, 10, 0.03, 4)]
    sc = scenario()
    same_v, slow_v = judge_against_baselines(
        [BaselineCase(sc, 8, "mariadb-local", baseline, same), BaselineCase(sc, 8, "mariadb-local", baseline, slower)]
    )
    by = {m.metric: m for m in slow_v.metrics}
    assert by["qps"].outcome == "regression"
    assert by["qps"].estimate_pct == pytest.approx(-20, abs=4)
    assert by["qps"].ci_low_pct < by["qps"].estimate_pct < by["qps"].ci_high_pct
    assert {m.metric: m for m in same_v.metrics}["qps"].outcome in {"pass", "inconclusive"}
    assert exit_code([same_v, slow_v]) == 1


def test_ab_mode_detects_regression_and_reports_missing_metrics():
    sc = scenario()
    base = _noisy(10000, 10, 0.04, 5)
    pairs = [(run(b, cpu=20.0 + i % 3), run(b * 0.85, cpu=24.0 + i % 3)) for i, b in enumerate(base)]
    verdict = judge_pairs([PairedCase(sc, 8, "base", "head", pairs)])[0]
    by = {m.metric: m for m in verdict.metrics}
    assert by["qps"].outcome == "regression"
    assert by["cpu_per_txn"].outcome == "regression"
    assert by["qps"].p_adjusted is not None and by["qps"].p_adjusted >= by["qps"].p_value
    assert any("instr_per_txn" in w for w in verdict.warnings)
    assert verdict.outcome == "regression"


def test_ab_mode_with_too_few_pairs_is_inconclusive_not_regression():
    sc = scenario()
    pairs = [(run(10000.0), run(8000.0)), (run(9000.0), run(7000.0))]
    verdict = judge_pairs([PairedCase(sc, 8, "base", "head", pairs)])[0]
    by = {m.metric: m for m in verdict.metrics}
    assert by["qps"].outcome == "inconclusive"
    assert by["qps"].repetitions_needed is not None
    assert exit_code([verdict]) == 0
    assert exit_code([verdict], strict=True) == 1


def test_failed_runs_fail_the_verdict():
    sc = scenario()
    verdict = judge_pairs([PairedCase(sc, 8, "base", "head", [(run(1.0), run(0, status="failed"))])])[0]
    assert verdict.outcome == "failed"
    assert exit_code([verdict]) == 2


def test_failed_baseline_runs_are_reported_in_baseline_mode():
    verdict = judge_against_baselines([BaselineCase(scenario(), 8, "mariadb-local", None, [run(0, status="failed")])])[
        0
    ]
    assert verdict.mode == "baseline"
    assert verdict.outcome == "failed"
    assert verdict.metrics[0].reason.startswith("run failed: ")


@pytest.mark.parametrize("mode", ["ab", "baseline"])
def test_failed_verdict_keeps_the_mode_it_was_asked_in(mode: str):
    verdict = failed_verdict(mode, scenario(), 8, "base", "head", "run failed: boom")  # type: ignore[arg-type]
    assert verdict.mode == mode
    assert verdict.outcome == "failed"
    assert [m.metric for m in verdict.metrics] == ["run"]
    assert exit_code([verdict]) == 2


def test_a_failed_run_beside_a_clean_verdict_is_an_error():
    sc = scenario()
    verdict = judge_pairs([PairedCase(sc, 8, "base", "head", [(run(100.0), run(100.0)), (run(101.0), run(100.0))])])[0]
    assert exit_code([verdict], [run(0, status="failed")]) == 2


@pytest.mark.parametrize("pairs", [2, 5, 8, 11])
def test_balanced_orders(pairs: int):
    orders = balanced_orders(pairs, random.Random(pairs))
    assert len(orders) == pairs
    assert sum(orders) - (pairs - sum(orders)) in {0, 1}
