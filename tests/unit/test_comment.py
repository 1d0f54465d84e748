"""The pull-request comment: golden files per outcome, the marker, GitHub's 65,536-character limit.

Regenerate the golden files after an intended change with
``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_comment.py`` and review the diff.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_report_markdown import CASES, check_golden, many_rows, mv, verdict

from harness.model import DefinitionChange, FunctionDelta, Verdict
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
    assert "<details>" in text and "What was judged, and all 36 rows" in text
    assert "**Worst verdict per scenario**" in text


def test_marker_first_and_links_present() -> None:
    verdicts, runs = CASES["regression"]
    text = render_comment(verdicts, runs, links=LINKS)
    assert text.splitlines()[0] == MARKER
    assert "🔴 **Performance regression**" in text
    assert "[Full report, verdicts and charts](https://github.com/acme/dbperf/actions/runs/1001)" in text
    # the reason in words, the estimate and the interval of each row
    assert (
        "| oltp_read_only | 8 | QPS | 20,150 | 18,558 | -7.9 % | [-10.2, -5.6] % | 🔴 regression | drop beyond the 5 %"
        in text
    )


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


# --- the change under test, each scenario's worst verdict, the functions behind a cost regression ------

CHANGE = DefinitionChange(
    "servers/conf/mariadb.cnf", "performance_schema", "", "ON", "added", 8, "mysqld", "mariadb-local@base",
    "mariadb-local",
)  # fmt: skip
FUNCTIONS = (
    FunctionDelta("pfs_start_mutex_wait_v1", 0.0, 9_120.0, 9_120.0, 0.41),
    FunctionDelta("std::vector<PFS_thread*, std::allocator<PFS_thread*> >::push_back", 0.0, 4_010.0, 4_010.0, 0.18),
    FunctionDelta("row_ins_clust_index_entry_low", 51_000.0, 50_600.0, -400.0, -0.02),
    FunctionDelta("pfs_end_table_io_wait_v1", 0.0, 6_300.0, 6_300.0, 0.28),
    FunctionDelta("(unnamed functions)", 120_000.0, 122_400.0, 2_400.0, 0.11),
)


def config_change() -> tuple[list[Verdict], list[DefinitionChange]]:
    """A pull request that turns performance_schema on: a cost regression, timing inconclusive, a read that passes."""
    pair = {"base": "mariadb-local@base", "head": "mariadb-local", "base_version": "10.11.14-MariaDB",
            "head_version": "10.11.14-MariaDB"}  # fmt: skip
    cost = verdict(
        "oltp_insert", 1,
        mv("instr_per_txn", "regression", 12.3, 12.2, 12.4, method="cost", p_adjusted=1e-6),
        kind="cost", explanation=FUNCTIONS, **pair,
    )  # fmt: skip
    timing = verdict(
        "oltp_insert", 8,
        mv("qps", "inconclusive", -3.0, -9.0, 2.0, noise_pct=8.0, repetitions_needed=24),
        mv("p95_ms", "pass", 1.0, -2.0, 4.1), **pair,
    )  # fmt: skip
    read = verdict(
        "oltp_point_select", 1, mv("instr_per_txn", "pass", 0.1, 0.0, 0.2, method="cost"), kind="cost", **pair
    )
    return [cost, timing, read], [CHANGE]


def test_comment_golden_config_change_leads_with_the_change_and_the_culprits() -> None:
    verdicts, changes = config_change()
    text = render_comment(verdicts, title="dbperf: config change", links=LINKS, footer=FOOTER, changes=changes)
    check_golden("comment_config_change.md", text)
    lines = text.splitlines()
    # the change first, then the worst row of each scenario, then three functions, then the rest folded
    change = lines.index("- `performance_schema` = `ON` added (`servers/conf/mariadb.cnf` line 8, [mysqld])")
    worst = lines.index("**Worst verdict per scenario**")
    culprits = next(i for i, line in enumerate(lines) if line.startswith("**Where the instructions went**"))
    fold = lines.index("<details>")
    assert change < worst < culprits < fold
    worst_rows = [line for line in lines[worst:culprits] if line.startswith("| oltp")]
    assert [r.split(" | ")[2:6] for r in worst_rows] == [
        ["instructions/txn", "1,236,000", "1,388,028", "+12.3 %"],
        ["instructions/txn", "1,236,000", "1,237,236", "+0.1 %"],
    ]
    functions = [line.split(" | ")[2] for line in lines[culprits:fold] if line.startswith("| oltp_insert")]
    assert functions == [
        "`pfs_start_mutex_wait_v1`",
        "`pfs_end_table_io_wait_v1`",
        "`std::vector<PFS_thread*, std::allocator<PFS_thread*> >::push_back`",
        "`(unnamed functions)`",
    ]
    assert "| oltp_insert | 1 | `pfs_start_mutex_wait_v1` | 0 | 9,120 | +9,120 | +41 % |" in lines


OUTCOMES = ("pass", "regression", "improvement", "inconclusive")


@pytest.mark.parametrize("gating", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("first", OUTCOMES)
@pytest.mark.parametrize("second", OUTCOMES)
def test_the_headline_never_contradicts_a_row(first: str, second: str, gating: tuple[bool, bool]) -> None:
    """Every pair of outcomes, gating or not: a regressed gating row means a regression headline; a headline
    that says "no regression" over a row that reads regression says that row does not gate."""
    metrics = (
        mv("qps", first, -6.0, -8.0, -4.0, gating=gating[0]),
        mv("p95_ms", second, 12.0, 10.0, 14.0, gating=gating[1]),
    )
    verdicts = [verdict("oltp_read_only", 8, *metrics), verdict("oltp_point_select", 1, mv("qps", "pass", 0.1, -1, 1))]
    text = render_comment(verdicts, links=LINKS)
    status_line = text.splitlines()[3]
    rows = [line for line in text.splitlines() if line.startswith("| oltp")]
    gating_regression = any(" | 🔴 regression | " in r for r in rows)
    info_regression = any(" | 🔴 regression (info) | " in r for r in rows)
    assert status_line.startswith("🔴 **Performance regression**") == gating_regression, text
    if "No regression" in status_line or "no regression" in status_line:
        assert not gating_regression
        assert ("a metric that does not gate regressed" in status_line) == info_regression, text
    if not gating_regression and not info_regression:
        assert "regression" not in status_line.split(":")[0].replace("no regression", "").replace("No regression", "")


def test_the_unnamed_line_follows_the_three_named_functions() -> None:
    from harness.judge.explain import UNNAMED
    from harness.report.pr_sections import UNNAMED as SHOWN
    from harness.report.pr_sections import culprits

    assert SHOWN == UNNAMED
    cost = config_change()[0][0]
    assert [d.name for d in culprits(cost)] == [
        "pfs_start_mutex_wait_v1",
        "pfs_end_table_io_wait_v1",
        "std::vector<PFS_thread*, std::allocator<PFS_thread*> >::push_back",
        UNNAMED,
    ]
