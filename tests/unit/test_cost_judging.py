"""Cost verdicts from synthetic cost runs: baselines that travel, say what differs, and explain changes."""

from __future__ import annotations

import json
from pathlib import Path

from support.factories import cost_run, make_testbed, scenario

from harness.judge.baseline_writer import write_baseline
from harness.judge.baselines import find_baseline, load_baseline
from harness.judge.explain import UNNAMED, explain, per_transaction
from harness.judge.gate import BaselineCase, PairedCase, judge_against_baselines, judge_pairs


def sc():
    return scenario(min_effects={"instr_per_txn": 0.005}, profile="ci")


def test_cost_baseline_is_not_per_testbed_and_keeps_profile_and_variables(tmp_path: Path):
    runs = [cost_run(42_000 + i) for i in range(3)]
    path = write_baseline(tmp_path, runs)
    assert path == tmp_path / "cost" / "mariadb-local" / "oltp_point_select" / "ci" / "1t.json"
    doc = json.loads(path.read_text())
    assert doc["kind"] == "cost" and doc["cost"]["tool"] == "valgrind-3.19.0"
    assert doc["functions"]["mysql_select"] > 0
    assert UNNAMED in doc["functions"]
    assert doc["variables"] == {"max_statement_time": "0.000000"}  # the port is per instance
    other_machine = make_testbed(kernel="6.18", hostname="elsewhere")
    assert find_baseline(tmp_path, other_machine, "mariadb-local", "oltp_point_select", "ci", 1, "cost") is not None


def _judge(baseline_runs, runs):
    return judge_against_baselines([BaselineCase(sc(), 1, "mariadb-local", baseline_runs, runs, "cost")])[0]


def test_a_new_build_is_not_judged_by_the_old_builds_baseline(tmp_path: Path):
    """A new build is compared side by side (dbperf compare), not against a file recorded on another build."""
    baseline = load_baseline(write_baseline(tmp_path, [cost_run(42_000 + i) for i in range(3)]))
    verdict = _judge(baseline, [cost_run(42_500 + i, build_id="build-b") for i in range(3)])
    assert verdict.outcome == "no_baseline"
    assert "compare" in verdict.metrics[0].reason and "build-b" in verdict.metrics[0].reason


def test_a_new_configuration_is_compared_and_the_variables_named(tmp_path: Path):
    baseline = load_baseline(write_baseline(tmp_path, [cost_run(42_000 + i) for i in range(3)]))
    changed = {"max_statement_time": "1000.000000"}
    runs = [cost_run(42_460 + i, requested_hash="req-b", variables=changed) for i in range(3)]
    verdict = _judge(baseline, runs)
    assert verdict.metrics[0].outcome == "regression"
    assert any("max_statement_time 0.000000 → 1000.000000" in w for w in verdict.warnings)
    assert any("--cost" in w for w in verdict.warnings)  # how to record the new normal


def test_another_valgrind_is_not_comparable(tmp_path: Path):
    baseline = load_baseline(write_baseline(tmp_path, [cost_run(42_000 + i) for i in range(3)]))
    verdict = _judge(baseline, [cost_run(42_000 + i, tool="valgrind-3.24.0") for i in range(3)])
    assert verdict.outcome == "no_baseline"
    assert "valgrind-3.24.0" in verdict.metrics[0].reason


def test_ab_cost_explanation_lines_up_overloads_and_sums_unnamed():
    base = [cost_run(1000.0, functions={"f(int)": 600.0, "0xa": 400.0}) for _ in range(3)]
    head = [cost_run(1012.0, functions={"f(long)": 602.0, "0xb": 390.0, "timer": 20.0}) for _ in range(3)]
    verdict = judge_pairs([PairedCase(sc(), 1, "base", "head", list(zip(base, head, strict=True)), "cost")])[0]
    assert verdict.metrics[0].outcome == "regression"
    by = {d.name: d for d in verdict.explanation}
    assert by["timer"].delta == 20.0
    assert by["f"].delta == 2.0  # the overload lines up with itself
    assert by[UNNAMED].delta == -10.0
    assert sum(abs(d.share) for d in verdict.explanation) == 1.0
    assert verdict.explanation[-1].name == UNNAMED


def test_explain_is_empty_without_profiles():
    assert explain({}, {"a": 1.0}) == ()
    assert per_transaction([]) == {}


def test_a_regression_against_the_committed_baseline_names_its_functions(tmp_path: Path):
    """The baseline keeps the profile, so a gate on a fresh machine (no A/B) lists the culprits too."""
    base = {"mysql_select": 25_000.0, "timer_queue": 0.0, "0xa": 17_000.0}
    baseline = load_baseline(write_baseline(tmp_path, [cost_run(42_000 + i, functions=base) for i in range(3)]))
    head = {"mysql_select": 25_000.0, "timer_queue": 460.0, "0xa": 17_000.0}
    changed = {"max_statement_time": "1000.000000"}
    runs = [cost_run(42_460 + i, functions=head, requested_hash="req-b", variables=changed) for i in range(3)]
    verdict = _judge(baseline, runs)
    assert verdict.metrics[0].outcome == "regression"
    assert verdict.explanation and verdict.explanation[0].name == "timer_queue"
    assert verdict.explanation[0].delta == 460.0 and verdict.explanation[0].share > 0.9
