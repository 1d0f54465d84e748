"""Markdown and terminal verdict reports: golden files for every outcome, plus structural checks.

The golden files live in tests/data/golden/. After an intended change of the output, regenerate them
with ``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_report_markdown.py`` and review the diff.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from support.reports import (
    CASES,
    TESTBED,
    check,
    check_golden,
    make_run,
    many_rows,
    mv,
    runs_for,
    verdict,
)

from harness.model import MetricVerdict
from harness.report.change_cells import fmt_interval, fmt_pct
from harness.report.markdown import render_markdown
from harness.report.mdtable import COLLAPSE_ABOVE
from harness.report.runs_markdown import render_runs_markdown
from harness.report.verdicts import (
    comparison_outcome,
    fmt_value,
    headline,
    print_verdicts,
    short_reason,
)

CHARTS = (
    ("QPS and p95 across commits", "https://example.github.io/dbperf/png/oltp_read_only-trend.png"),
    ("trend site", "https://example.github.io/dbperf/"),
)


@pytest.mark.parametrize("case", list(CASES))
def test_markdown_golden(case: str) -> None:
    verdicts, runs = CASES[case]
    text = render_markdown(check(verdicts, runs, title=f"dbperf: {case}"), chart_links=CHARTS)
    check_golden(f"markdown_{case}.md", text)


@pytest.mark.parametrize(
    ("case", "outcome", "word"),
    [
        ("regression", "regression", "🔴 regression"),
        ("improvement", "improvement", "🟢 improvement"),
        ("pass", "pass", "✅ pass"),
        ("inconclusive", "inconclusive", "🟡 inconclusive"),
        ("no_baseline", "no_baseline", "⚪ no baseline"),
        ("failed", "failed", "❌ failed"),
    ],
)
def test_each_outcome_is_named_in_headline_and_table(case: str, outcome: str, word: str) -> None:
    verdicts, runs = CASES[case]
    assert comparison_outcome(verdicts[0]) == outcome
    text = render_markdown(check(verdicts, runs))
    headline_line = text.splitlines()[4]
    emoji, name = word.split(" ", 1)
    assert re.search(rf"{re.escape(emoji)} 1 {re.escape(name)}", headline_line), headline_line
    rows = [line for line in text.splitlines() if line.startswith("| ") and word in line]
    assert rows, f"no table row shows {word!r}"


def test_table_numbers_are_the_verdicts() -> None:
    verdicts, runs = CASES["regression"]
    text = render_markdown(check(verdicts, runs))
    row = next(line for line in text.splitlines() if line.startswith("| oltp_read_only | 8 | QPS |"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[3:7] == ["20,150", "18,558", "-7.9 %", "[-10.2, -5.6] %"]
    assert "drop beyond the 5 % minimum effect (adjusted p = 0.0021)" in cells[8]
    info = next(line for line in text.splitlines() if "CPU µs/txn" in line)
    assert "pass (info)" in info


def test_failed_runs_testbed_versions_and_charts_are_listed() -> None:
    verdicts, runs = CASES["failed"]
    text = render_markdown(check(verdicts, runs), chart_links=CHARTS)
    assert "### ❌ Failed runs (1)" in text
    assert "Lost connection to server during query" in text
    assert f"`{TESTBED.fingerprint}`" in text
    assert "| `mariadb-10.11` | 10.11.6-MariaDB |" in text
    assert "![QPS and p95 across commits](https://example.github.io/dbperf/png/oltp_read_only-trend.png)" in text
    assert "- [trend site](https://example.github.io/dbperf/)" in text


def test_noise_warnings_section() -> None:
    verdicts, runs = CASES["inconclusive"]
    text = render_markdown(check(verdicts, runs, warnings=("testbed busy: load average 3.2 on 2 cores",)))
    section = text.split("### ⚠️ Noise and measurement warnings", 1)[1].split("###", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert lines[0] == "- testbed busy: load average 3.2 on 2 cores"
    assert "oltp_read_only 8t: head qps varied 14 % (CV)" in lines[1]
    assert "noise ±8.0 % is larger than the smallest change that matters (5 %)" in lines[2]
    assert "about 24 pairs (~13 min) would likely decide" in lines[2]


def test_many_rows_collapse_into_details() -> None:
    verdicts, runs = many_rows()
    text = render_markdown(check(verdicts, runs, title="dbperf: many rows"))
    check_golden("markdown_many_rows.md", text)
    before, details = text.split("<details>", 1)
    visible = [line for line in before.splitlines() if line.startswith("| oltp")]
    assert len(visible) == 2  # the regression and the inconclusive row stay in view
    hidden = [line for line in details.split("</details>", 1)[0].splitlines() if line.startswith("| oltp")]
    assert len(visible) + len(hidden) == 30 > COLLAPSE_ABOVE
    assert "<summary>28 more row(s) that pass or do not gate</summary>\n\n|" in text


def test_cells_escape_pipes_and_newlines() -> None:
    bad = MetricVerdict(metric="run", higher_is_worse=False, outcome="failed", reason="a | b\nc")
    text = render_markdown(check([verdict("s|x", 1, bad)], []))
    row = next(line for line in text.splitlines() if line.startswith("| s\\|x |"))
    assert "a \\| b c" in row
    assert row.count(" | ") == 8  # nine cells


def test_runs_markdown_golden() -> None:
    runs = [
        *runs_for("mariadb-10.11", "mariadb-11.8"),
        *runs_for("mariadb-10.11", "mariadb-11.8", threads=16),
        make_run(9, server="mariadb-11.8", threads=16, failure="FATAL: error 1040: Too many connections"),
    ]
    text = render_runs_markdown(runs, title="dbperf: group pr-123", chart_links=CHARTS[:1])
    check_golden("markdown_runs.md", text)
    assert "| oltp_read_only | `mariadb-11.8` | 16 | 5 (+1 failed) | 18,800 |" in text


def test_formats() -> None:
    assert fmt_value(None) == "-"
    assert fmt_value(123456.7) == "123,457"
    assert fmt_value(812.34) == "812.3"
    assert fmt_value(4.567) == "4.57"
    assert fmt_value(0.1844) == "0.184"
    assert fmt_pct(-0.04) == "+0.0 %"
    assert fmt_pct(float("nan")) == "-"
    assert fmt_interval(-10.24, -5.55) == "[-10.2, -5.5] %" or fmt_interval(-10.24, -5.55) == "[-10.2, -5.6] %"
    assert fmt_interval(None, 1.0) == "-"


def test_short_reasons() -> None:
    assert short_reason(mv("p95_ms", "pass", 0.1, -1, 1)) == "rules out a rise of 10 % or more"
    assert short_reason(mv("qps", "inconclusive", 0.1, -9, 3, repetitions_needed=30, seconds_needed=600.0)) == (
        "cannot rule out a drop of 5 %; about 30 pairs (~10 min) would likely decide"
    )


def test_terminal_verdicts_plain_when_not_a_terminal() -> None:
    verdicts = [v for case in CASES.values() for v in case[0]]
    stream = io.StringIO()
    print_verdicts(verdicts, stream)
    out = stream.getvalue()
    assert "\x1b[" not in out  # no colour codes outside a terminal
    for text in ("regression", "improvement", "pass", "inconclusive", "no baseline", "failed"):
        assert text in out
    assert "[-10.2, -5.6] %" in out
    assert "±8.0 %" in out
    assert "warning: mariadb-10.11 → mariadb-11.8 oltp_read_only 8t: head qps varied 14 %" in out
    assert out.rstrip().endswith(headline(verdicts))


def test_headline_counts_comparisons() -> None:
    verdicts = [v for case in CASES.values() for v in case[0]]
    assert headline(verdicts) == (
        "1 regression, 1 failed, 1 inconclusive, 1 no baseline, 1 improvement, 1 pass "
        "(6 comparisons, scenario x threads)"
    )
    assert headline([replace(verdicts[0], metrics=())]) == "1 pass (1 comparison, scenario x threads)"


def test_many_run_groups_keep_a_qps_pivot_in_view() -> None:
    runs = [
        r
        for t in (1, 2, 4, 8, 16, 32)
        for s in ("a", "b")
        for r in runs_for("mariadb-10.11", "mariadb-11.8", threads=t, scenario=s)
    ]
    text = render_runs_markdown(runs)
    before, details = text.split("<details>", 1)
    assert "| scenario | server | 1 thr | 2 thr | 4 thr | 8 thr | 16 thr | 32 thr |" in before
    assert "| a | `mariadb-10.11` | 20,300 | 20,300 | 20,300 | 20,300 | 20,300 | 20,300 |" in before
    assert "<summary>All 24 rows (scenario × server × threads)</summary>" in details
