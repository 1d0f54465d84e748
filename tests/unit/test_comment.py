"""The pull-request comment: golden files per outcome, the marker, GitHub's 65,536-character limit.

Regenerate the golden files after an intended change with
``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_comment.py`` and review the diff.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_report_markdown import CASES, check_golden, many_rows, mv, verdict

from harness.report.comment import LIMIT, MARKER, Links, render_comment

LINKS = Links(run_url="https://github.com/acme/dbperf/actions/runs/1001")
FOOTER = "head 0123456789ab vs base ba9876543210; 20 runs in 3.0 min"


@pytest.mark.parametrize("case", list(CASES))
def test_comment_golden(case: str) -> None:
    verdicts, runs = CASES[case]
    text = render_comment(verdicts, runs, title=f"dbperf: {case}", links=LINKS, footer=FOOTER)
    check_golden(f"comment_{case}.md", text)


def test_comment_golden_many_rows_and_two_comparisons() -> None:
    verdicts, runs = many_rows()
    other = [replace(v, base="mariadb-local@base", head="mariadb-local") for v in verdicts[:3]]
    text = render_comment([*verdicts, *other], runs, links=LINKS, footer=FOOTER, warnings=("load average 3.1",))
    check_golden("comment_many_rows.md", text)
    assert "| comparison |" in text  # several comparisons: every row names its pair
    assert "<details>" in text and "row(s) that pass or do not gate" in text


def test_marker_first_and_links_present() -> None:
    verdicts, runs = CASES["regression"]
    text = render_comment(verdicts, runs, links=LINKS)
    assert text.splitlines()[0] == MARKER
    assert "🔴 **Performance regression**" in text
    assert "[Full report, verdicts and charts](https://github.com/acme/dbperf/actions/runs/1001)" in text
    # the reason in words, the estimate and the interval of each row
    assert "| oltp_read_only | 8 | QPS | -7.9 % | [-10.2, -5.6] % | 🔴 regression | drop beyond the 5 %" in text


def test_too_long_comments_are_cut_with_a_note_and_keep_the_link() -> None:
    metrics = [mv("qps", "regression", -6.0, -8.0, -4.0, reason="x" * 400, summary="y" * 300)]
    verdicts = [verdict(f"scenario_{i:04d}", 8, *metrics) for i in range(400)]
    text = render_comment(verdicts, links=LINKS, warnings=[f"warning {i} " + "w" * 200 for i in range(300)])
    assert len(text) <= LIMIT
    assert text.startswith(MARKER + "\n")
    assert "row(s) left out to fit GitHub's comment limit" in text
    assert "more warning(s) in the full report" in text
    assert "actions/runs/1001" in text
    small = render_comment(verdicts[:2], links=LINKS)
    assert "left out" not in small


def test_tiny_limit_still_gives_a_marked_comment() -> None:
    verdicts, runs = CASES["regression"]
    text = render_comment(verdicts, runs, links=LINKS, limit=120)
    assert len(text) <= 120 and text.startswith(MARKER)
