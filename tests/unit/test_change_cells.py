"""Every displayed change says what it is (issue 34): a count's own change, never that of count + offset, and
every interval labelled with its real level (95 %, the widened 1 - alpha / m, or less when repetitions are few).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import statistics

import numpy as np
from support.gates import judge, runs
from support.reports import check, mv, verdict

from harness.judge import gate
from harness.model import MetricVerdict, Verdict
from harness.model.verdict import count_offset
from harness.report.change_cells import ci_header, fmt_change, fmt_ci, fmt_level
from harness.report.comment import render_comment
from harness.report.markdown import render_markdown
from harness.report.trusted_comment import build_comment
from harness.report.verdicts import print_verdicts

ALPHA = 0.02


def count(metric: str, base: float, head: float, **kw: object) -> MetricVerdict:
    """A count's verdict as the gate writes it: estimate and interval of count + offset."""
    min_effect = {"rows_read": 0.02, "data_fsyncs": 0.10}[metric]
    offset = count_offset(metric, min_effect)
    pct = ((head + offset) / (base + offset) - 1.0) * 100.0
    values: dict[str, object] = {
        "metric": metric,
        "higher_is_worse": True,
        "outcome": "regression",
        "reason": "x",
        "summary": "rise",
        "base_median": base,
        "head_median": head,
        "estimate_pct": pct,
        "ci_low_pct": pct * 0.9,
        "ci_high_pct": pct * 1.1,
        "bound_pct": min_effect * 100.0,
        "method": "cost",
        "n_base": 3,
        "n_head": 3,
        "confidence": 0.95,
    }
    values.update(kw)
    return MetricVerdict(**values)  # type: ignore[arg-type]


def test_rows_read_one_to_two_is_a_doubling_not_the_offset_sums_change():
    m = count("rows_read", 1.0, 2.0)
    assert f"{m.estimate_pct:.1f}" == "3.8"  # the test's change, on rows read + 25
    assert fmt_change(m) == "+100.0 %"
    assert fmt_ci(m) == "[+90.0, +110.0] %"


def test_a_count_from_zero_shows_its_change_per_transaction():
    m = count("data_fsyncs", 0.0, 1.0)
    assert f"{m.estimate_pct:.0f}" == "40"  # on fsyncs + 2.5
    assert fmt_change(m) == "+1.00 /txn"
    assert fmt_ci(m) == "[+0.900, +1.10] /txn"


def test_a_count_from_near_zero_shows_its_change_per_transaction_not_a_huge_percent():
    """A base under the count's floor (data fsyncs: 0.25/txn) gives no meaningful percent: 0.009 -> 1 fsync/txn
    read "+11011.9 %"; it reads as the absolute change, as from 0, and a base at the floor is in % again."""
    m = count("data_fsyncs", 0.009, 1.0)
    assert fmt_change(m) == "+0.991 /txn"
    assert fmt_ci(m) == "[+0.892, +1.09] /txn"
    assert m.shown_change().unit == "/txn"
    assert fmt_change(count("data_fsyncs", 0.25, 1.0)) == "+300.0 %"
    assert fmt_change(count("rows_read", 0.4, 1.0)) == "+0.600 /txn"  # rows read: floor 0.5/txn


def test_other_metrics_show_the_tests_estimate():
    m = mv("qps", "regression", -7.9, -10.2, -5.6)
    assert (fmt_change(m), fmt_ci(m)) == ("-7.9 %", "[-10.2, -5.6] %")


def test_the_gate_fsync_regression_reads_zero_to_one_per_transaction_everywhere():
    """The judged verdict of FACTS.md's flush 2 -> 1 (fsync 0 -> 1 per transaction), through every renderer."""
    rng = np.random.default_rng(20)
    v = judge(runs(rng, 116_350), runs(rng, 116_804, sys_fsync=1.0, sys_total=8.06))
    fsync = next(m for m in v.metrics if m.metric == "sys_fsync")
    assert fsync.estimate_pct is not None and fsync.estimate_pct > 30  # the offset sum's change
    assert fmt_change(fsync) == "+1.00 /txn"
    assert "(sys_fsync" not in fsync.reason and "(fsync+fdatasync/txn + 2.5)" in fsync.reason
    assert "0 -> 1 per transaction, +1 per transaction" in fsync.reason
    # the minimum effect the test applied, in the count's terms: 10 % of the base plus the 0.25 floor
    assert fsync.summary.startswith("rise beyond the 10 % + 0.25 /txn minimum effect")
    total = next(m for m in v.metrics if m.metric == "sys_total")
    real = (total.head_median / total.base_median - 1) * 100  # type: ignore[operator]
    assert abs(float(fmt_change(total).split()[0]) - real) < 0.6  # ~ +14 %, not the +1.2 % of total + 25
    stream = io.StringIO()
    print_verdicts([v], stream)
    terminal = stream.getvalue()
    markdown = render_markdown(check([v]))
    comment = render_comment(check([v]))
    for text in (terminal, markdown, comment):
        assert "+1.00 /txn" in text
        assert f"{fsync.estimate_pct:+.1f} %" not in text.split("<sub>")[0]
    row = next(line for line in comment.splitlines() if "| fsync+fdatasync/txn |" in line)
    assert "| 0.00 | 1.00 | +1.00 /txn |" in row


def widened_verdict() -> Verdict:
    """Four gating tests whose 95 % intervals lie beyond the minimum effect, none significant after Holm:
    the judge widens each to 1 - 0.02 / 4 = 99.5 %."""
    rng = np.random.default_rng(3)
    while True:
        base = list(np.exp(rng.normal(0, 0.08, 8)))
        head = list(np.exp(rng.normal(math.log1p(0.15), 0.08, 5)))
        ev = gate._evidence("time", "baseline", base, head, min_effect=0.05)
        if gate._beyond(ev, 0.05) and min(1.0, ev.p_value * 4) >= ALPHA:
            break
    shell = Verdict("baseline", "s", 8, "baseline", "srv", ())
    pending = [
        gate._Pending(
            index=0,
            metric=metric,
            gating=True,
            evidence=ev,
            base_median=statistics.median(base),
            head_median=statistics.median(head),
            min_effect=0.05,
            seconds_per_repetition=None,
            backend="",
            mode="baseline",
            base_values=tuple(base),
            head_values=tuple(head),
        )
        for metric in ("qps", "p95_ms", "p99_ms", "cpu_per_txn")
    ]
    return gate.conclude([shell], pending, alpha=ALPHA)[0]


def test_a_widened_interval_carries_its_level_in_the_record_and_every_report():
    v = widened_verdict()
    m = v.metrics[0]
    assert m.level == 1 - ALPHA / 4 and m.interval_level() == m.level
    assert m.confidence is not None and m.confidence >= m.level
    assert ci_header(v.metrics) == "99.5 % CI"
    stream = io.StringIO()
    print_verdicts([v], stream)
    for text in (stream.getvalue(), render_markdown(check([v])), render_comment(check([v]))):
        assert "99.5 % CI" in text and "95 % CI" not in text.replace("99.5 % CI", "")
    # beside 95 % rows, the column keeps 95 % and each widened row names its own level
    plain = verdict("s", 8, mv("qps", "pass", 0.4, -1.8, 2.2), mv("p95_ms", "pass", -0.5, -3.0, 2.4))
    plain = Verdict("baseline", "s", 8, "baseline", "srv", (*plain.metrics, *plain.metrics, m))
    text = render_markdown(check([plain]))
    assert "| 95 % CI |" in text and f"{fmt_ci(m, 0.95)} |" in text and fmt_ci(m, 0.95).endswith(" (99.5 %)")


def test_the_trusted_comment_keeps_the_level():
    v = widened_verdict()
    doc = {"format": 1, "verdicts": [{**dataclasses.asdict(v), "outcome": v.outcome}]}
    text = build_comment(json.dumps(doc), sha="0123456789ab" * 3 + "0123", run_url="")
    assert "99.5 % CI" in text


def test_levels_never_read_100_and_short_ones_are_named():
    assert [fmt_level(x) for x in (0.95, 0.99895, 0.9999, 0.9375)] == ["95 %", "99.9 %", "99.99 %", "93.8 %"]
    short = mv("qps", "inconclusive", 1.0, -9.0, 9.0, confidence=0.875)
    assert fmt_ci(short) == "[-9.0, +9.0] % (87.5 %)"
