"""Every verdict says what it judged: deterministically, by timing, and not at all (issue 20, item 5)."""

from __future__ import annotations

from support.reports import check

from harness.model import MetricVerdict, Verdict
from harness.report.markdown import render_markdown
from harness.report.verdicts import EXCLUDES, judged_lines


def mv(metric: str, outcome: str = "pass", gating: bool = True) -> MetricVerdict:
    return MetricVerdict(metric=metric, higher_is_worse=metric != "qps", outcome=outcome, reason="", gating=gating)  # type: ignore[arg-type]


def verdict(kind: str, *metrics: MetricVerdict, mode: str = "ab") -> Verdict:
    return Verdict(mode=mode, scenario="oltp_insert", threads=1, base="a", head="b", metrics=metrics, kind=kind)  # type: ignore[arg-type]


COST = verdict(
    "cost", mv("instr_per_txn"), mv("sys_total"), mv("sys_fsync"), mv("data_fsyncs"), mv("sys_clock", gating=False)
)
TIME = verdict("time", mv("qps", "regression"), mv("p95_ms", "regression"), mv("cpu_per_txn"))


def test_cost_and_timing_are_named_and_a_cost_pass_never_hides_a_timing_regression():
    (line,) = judged_lines([COST, TIME])
    assert line.startswith("oltp_insert 1t: judged deterministically instructions, system calls (2 kinds), server")
    assert "by timing QPS, p95 (ms), CPU µs/txn" in line
    assert "not judged" not in line
    assert "timing regressed: the change lies in what they exclude" in line


def test_cost_alone_says_wall_time_was_not_judged():
    (line,) = judged_lines([COST])
    assert "not judged: wall time (kernel time, fsync and disk latency, lock waits, scaling across threads)" in line
    assert "no timing runs" in line


def test_timing_alone_says_cost_was_not_judged():
    (line,) = judged_lines([TIME])
    assert line.endswith("not judged: instructions, system calls and server work: no cost runs (--cost).")


def test_a_cost_baseline_judges_instructions_only_and_says_so():
    (line,) = judged_lines([verdict("cost", mv("instr_per_txn"), mode="baseline")])
    assert "the cost baseline holds no work vector (record it again)" in line


def test_the_markdown_report_lists_what_was_judged_and_what_instructions_exclude():
    text = render_markdown(check([COST, TIME]))
    assert "**What was judged**" in text
    assert EXCLUDES in text


def test_the_legend_explains_a_count_tested_with_its_offset_only_where_a_count_has_a_row():
    from dataclasses import replace

    from harness.report.verdicts import WORK_LEGEND, legend

    fsync = replace(mv("sys_fsync", "regression"), estimate_pct=22.7, ci_low_pct=21.9, ci_high_pct=23.4)
    instr = replace(mv("instr_per_txn"), estimate_pct=0.4, ci_low_pct=0.3, ci_high_pct=0.5)
    with_count = [verdict("cost", instr, fsync)]
    assert WORK_LEGEND in legend(with_count)
    assert WORK_LEGEND in render_markdown(check(with_count))
    assert WORK_LEGEND not in legend([verdict("cost", instr)])
    assert WORK_LEGEND not in render_markdown(check([verdict("cost", instr)]))
