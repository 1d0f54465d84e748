"""Judging the work vector: counts with a minimum effect and an absolute floor, zeros, weighted Holm.

Seeded synthetic cost runs with and without a change (FACTS.md's figures: flush 2 -> 1 on oltp_insert
gives fdatasync 0 -> 1.000 per transaction and total system calls 7.06 -> 8.07 while instructions move
+0.39 %), and reference values for the weighted Holm adjustment.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.factories import scenario
from support.gates import GATE, INSERT, judge, runs, sc

from harness.judge import stats
from harness.model.metrics import WORK_METRICS
from harness.model.work import WORK, work_vector


def by_metric(verdict):
    return {m.metric: m for m in verdict.metrics}


def test_fsync_per_commit_is_a_regression_while_instructions_pass():
    rng = np.random.default_rng(20)
    verdict = judge(runs(rng, 116_350), runs(rng, 116_804, sys_fsync=1.0, sys_total=8.06))
    m = by_metric(verdict)
    assert m["instr_per_txn"].outcome == "pass"  # +0.39 %: under the 0.5 % minimum effect
    assert m["sys_fsync"].outcome == "regression" and m["sys_fsync"].gating
    assert m["sys_total"].outcome == "regression" and not m["sys_total"].gating  # shown, never gating
    assert verdict.outcome == "regression"
    assert "0 -> 1 per transaction" in m["sys_fsync"].reason
    assert "plus 0.25 per transaction" in m["sys_fsync"].reason


def test_near_zero_counts_within_the_floor_pass():
    """0.0009 -> 0.0011 fsyncs per transaction is +22 % but far inside the 0.05 per transaction floor."""
    rng = np.random.default_rng(21)
    base, head = runs(rng, 116_350, data_fsyncs=0.0009), runs(rng, 116_350, data_fsyncs=0.0011)
    m = by_metric(judge(base, head))
    assert m["data_fsyncs"].outcome == "pass"
    assert m["data_fsyncs"].gating


def test_zeros_on_both_sides_are_equal_and_judged():
    rng = np.random.default_rng(22)
    m = by_metric(judge(runs(rng, 116_350), runs(rng, 116_350)))
    for name in ("sys_fsync", "sys_pread", "bp_reads"):
        assert m[name].outcome == "pass"
        assert m[name].estimate_pct == 0.0
        assert m[name].base_median == 0.0 and m[name].head_median == 0.0


def test_zero_to_a_small_real_count_beyond_the_floor_is_a_regression():
    rng = np.random.default_rng(23)
    m = by_metric(judge(runs(rng, 116_350), runs(rng, 116_350, bp_reads=0.2)))
    assert m["bp_reads"].outcome == "regression"


def test_information_only_components_never_gate():
    rng = np.random.default_rng(24)
    verdict = judge(runs(rng, 116_350), runs(rng, 116_350, bp_read_requests=12.0, sys_clock=9.0))
    m = by_metric(verdict)
    assert not m["bp_read_requests"].gating and not m["sys_clock"].gating
    assert m["sys_clock"].outcome == "regression"  # shown, but it does not decide
    assert verdict.outcome == "pass"


def test_no_false_verdicts_in_seeded_aa_comparisons():
    """200 A/A comparisons (3 runs a side) with the whole vector gated: no verdict other than pass."""
    rng = np.random.default_rng(25)
    outcomes = [judge(runs(rng, 116_350), runs(rng, 116_350)).outcome for _ in range(200)]
    assert outcomes.count("pass") == 200


def test_gating_components_are_the_ones_that_repeat():
    gated = {w.name for w in WORK_METRICS if w.gating}
    assert {"sys_fsync", "sys_pread", "sys_pwrite", "data_fsyncs", "bp_reads", "redo_written"} <= gated
    assert not {"sys_total", "sys_clock", "sys_futex", "pages_written", "data_written", "bp_read_requests"} & gated
    assert all(w.floor > 0 and 0 < w.min_effect < 1 for w in WORK.values())


def test_redo_is_the_log_sequence_numbers_movement_where_the_server_has_one():
    """MySQL: the LSN's difference (bytes of redo generated), not the blocks its log writer wrote, whose last
    partial block is written again at each wake-up (the deltas of two fresh mysql-9.7 tpcc runs of 300
    transactions: 961,292 and 962,593 bytes of LSN, 1,127,936 and 1,187,840 written); MariaDB has no such
    variable, and its Innodb_os_log_written is the LSN's movement (mariadb-local tpcc: both 1,664,715)."""
    for lsn, written in ((961_292, 1_127_936), (962_593, 1_187_840)):
        mysql = {"innodb_redo_log_current_lsn": lsn, "innodb_os_log_written": written}
        assert work_vector(300, mysql, {})["redo_written"] == lsn / 300
    mariadb = {"innodb_os_log_written": 1_664_715}
    assert work_vector(300, mariadb, {})["redo_written"] == 5549.05
    assert "redo_written" not in work_vector(300, {"innodb_data_written": 10}, {})  # a server without either


def test_weighted_holm_reference_values():
    p = [0.01, 0.04, 0.03, 0.005]
    assert stats.weighted_holm(p, [1, 1, 1, 1]) == pytest.approx(stats.holm(p))
    # by p/w: 0.005/1, 0.01/1, 0.03/0.5 = 0.06, 0.04/0.5 = 0.08; weights not yet taken 3, 2, 1, 0.5:
    # 0.015, 0.02, 0.06, 0.04 -> made monotone 0.015, 0.02, 0.06, 0.06
    adjusted = stats.weighted_holm(p, [1, 0.5, 0.5, 1])
    assert adjusted == pytest.approx([0.02, 0.06, 0.06, 0.015])
    with pytest.raises(ValueError, match="weight"):
        stats.weighted_holm([0.1], [0.0])


def test_the_work_vector_counts_as_one_test_in_the_family():
    """A comparison's gated work components share a weight of 1: instructions are adjusted by 2, not by 14."""
    rng = np.random.default_rng(26)
    m = by_metric(judge(runs(rng, 116_350), runs(rng, 117_100)))
    instr = m["instr_per_txn"]
    assert instr.outcome == "regression"
    assert instr.family_size == 2
    gated_work = [v for k, v in m.items() if k in WORK and v.gating]
    assert all(v.family_size == 2 * len(gated_work) for v in gated_work)


def test_the_design_check_still_decides_with_the_work_vector_in_the_family():
    """ci's pull-request design (10 pairs timing + 3 cost runs a side, two scenarios): every gating test,
    the work vector's components included, can still reach alpha 0.02 under Holm."""
    from pathlib import Path

    from harness.config.servers import load_server
    from harness.pipeline.design_check import Planned, check, gating_metrics, tests_of

    server = load_server("mariadb-local", Path(__file__).parents[2] / "servers")
    planned = []
    for name in ("oltp_point_select", "oltp_read_write"):
        s = scenario(name, gate_metrics=GATE)
        planned.append(Planned(f"{name} time", s, server, "time", "ab", 10, 10, gating_metrics(s, server, "time")))
        planned.append(Planned(f"{name} cost", s, server, "cost", "ab", 3, 3, gating_metrics(s, server, "cost")))
    cost_metrics = planned[1].metrics
    assert "sys_fsync" in cost_metrics and "bp_reads" in cost_metrics and "instr_per_txn" in cost_metrics
    decision = check(planned, alpha=0.02, forced=True)  # raises when some gating test could never fail
    assert decision.repetitions is None
    assert decision.check is not None and decision.check.ok
    tests = tests_of(planned)
    assert len(tests) == 2 * (len(planned[0].metrics) + len(cost_metrics))
    assert sum(t.weight for t in tests) == pytest.approx(2 * (len(planned[0].metrics) + 2))  # +1 per vector


# --- baseline mode (a committed cost baseline keeps the work vector) ----------------------------------------
def judge_baseline(tmp_path, base, head):
    from harness.judge.baseline_writer import write_baseline
    from harness.judge.baselines import load_baseline
    from harness.judge.gate import BaselineCase, judge_against_baselines

    baseline = load_baseline(write_baseline(tmp_path, base))
    return judge_against_baselines([BaselineCase(sc(), 1, "mariadb-local", baseline, head, "cost")])[0]


def test_a_cost_baseline_keeps_the_gating_work_vector_per_run(tmp_path):
    import json

    from harness.judge.baseline_writer import write_baseline
    from harness.judge.baselines import load_baseline

    base = runs(np.random.default_rng(11), 110_300)
    path = write_baseline(tmp_path, base)
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 3
    gating = {w.name for w in WORK_METRICS if w.gating and w.name in INSERT}
    assert set(doc["work"]) == gating  # the information-only components are not kept
    assert doc["work"]["sys_fsync"] == [0.0, 0.0, 0.0]
    assert load_baseline(path).values("sys_pwrite") == tuple(r.metrics.work["sys_pwrite"] for r in base)


def test_baseline_mode_judges_an_fsync_per_commit_as_a_regression(tmp_path):
    rng = np.random.default_rng(12)
    verdict = judge_baseline(tmp_path, runs(rng, 110_300), runs(rng, 110_730, sys_fsync=1.0, data_fsyncs=1.0))
    m = by_metric(verdict)
    assert verdict.outcome == "regression"
    assert m["instr_per_txn"].outcome == "pass"
    assert m["sys_fsync"].outcome == "regression" and m["sys_fsync"].gating
    assert "sys_total" not in m  # information only: not kept by the baseline, not judged
    assert not any("work vector" in w for w in verdict.warnings)


def test_baseline_mode_passes_the_same_configuration(tmp_path):
    rng = np.random.default_rng(13)
    verdict = judge_baseline(tmp_path, runs(rng, 110_300), runs(rng, 110_300))
    assert verdict.outcome == "pass"
    assert {"sys_fsync", "data_fsyncs", "handler_writes"} <= set(by_metric(verdict))


def test_an_old_cost_baseline_judges_instructions_only_and_says_so(tmp_path):
    import json

    from harness.judge.baseline_writer import write_baseline
    from harness.judge.baselines import load_baseline
    from harness.judge.gate import BaselineCase, judge_against_baselines
    from harness.report.verdicts import judged_lines

    rng = np.random.default_rng(14)
    path = write_baseline(tmp_path, runs(rng, 110_300))
    doc = json.loads(path.read_text())
    doc["format_version"] = 2
    del doc["work"]
    path.write_text(json.dumps(doc))
    baseline = load_baseline(path)
    assert baseline.work is None
    head = runs(rng, 110_300, sys_fsync=1.0)
    verdict = judge_against_baselines([BaselineCase(sc(), 1, "mariadb-local", baseline, head, "cost")])[0]
    assert [m.metric for m in verdict.metrics] == ["instr_per_txn"]
    assert verdict.outcome == "pass"  # the fsync is not seen: the verdict says so
    assert any("holds no work vector" in w and "baseline record" in w for w in verdict.warnings)
    (line,) = judged_lines([verdict])
    assert "not judged" in line and "holds no work vector" in line


def test_malformed_work_samples_name_the_component(tmp_path):
    import json

    from harness.errors import BaselineError
    from harness.judge.baseline_writer import write_baseline
    from harness.judge.baselines import load_baseline

    path = write_baseline(tmp_path, runs(np.random.default_rng(15), 110_300))
    doc = json.loads(path.read_text())
    doc["work"]["sys_fsync"] = [0.0, -1.0, 0.0]
    path.write_text(json.dumps(doc))
    with pytest.raises(BaselineError, match=r"'work.sys_fsync\[1\]' is -1.0"):
        load_baseline(path)
    doc["work"] = {"sys_bogus": [1.0]}
    path.write_text(json.dumps(doc))
    with pytest.raises(BaselineError, match=r"unknown work-vector component 'work\.sys_bogus'"):
        load_baseline(path)
