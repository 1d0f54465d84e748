"""The pull-request comment: golden files per outcome, the marker, GitHub's 65,536-character limit.

Regenerate the golden files after an intended change with
``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_comment.py`` and review the diff.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from support.comments import FUNCTIONS, config_change
from support.reports import CASES, check, check_golden, many_rows, mv, verdict

from harness.model import DefinitionChange, FunctionDelta, MetricVerdict, Verdict
from harness.report.comment import LIMIT, MARKER, Links, render_comment

LINKS = Links(run_url="https://github.com/acme/dbperf/actions/runs/1001")
FOOTER = "head 0123456789ab vs base ba9876543210; 20 runs in 3.0 min"


@pytest.mark.parametrize("case", list(CASES))
def test_comment_golden(case: str) -> None:
    verdicts, runs = CASES[case]
    text = render_comment(check(verdicts, runs, title=f"dbperf: {case}"), links=LINKS, footer=FOOTER)
    check_golden(f"comment_{case}.md", text)


def test_comment_golden_many_rows_and_two_comparisons() -> None:
    verdicts, runs = many_rows()
    other = [replace(v, base="mariadb-local@base", head="mariadb-local") for v in verdicts[:3]]
    text = render_comment(check([*verdicts, *other], runs, warnings=("load average 3.1",)), links=LINKS, footer=FOOTER)
    check_golden("comment_many_rows.md", text)
    assert "| comparison |" in text  # several comparisons: every row names its pair
    assert "<details>" in text and "What was judged, and all 36 rows" in text
    assert "**Worst verdict per scenario**" in text


def test_marker_first_and_links_present() -> None:
    verdicts, runs = CASES["regression"]
    text = render_comment(check(verdicts, runs), links=LINKS)
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
    text = render_comment(check(verdicts, warnings=[f"warning {i} " + "w" * 200 for i in range(300)]), links=LINKS)
    assert len(text) <= LIMIT
    assert text.startswith(MARKER + "\n")
    assert "row(s) left out to fit GitHub's comment limit" in text
    assert "more warning(s) in the full report" in text
    assert "actions/runs/1001" in text
    small = render_comment(check(verdicts[:2]), links=LINKS)
    assert "left out" not in small


def test_tiny_limit_still_gives_a_marked_comment() -> None:
    verdicts, runs = CASES["regression"]
    text = render_comment(check(verdicts, runs), links=LINKS, limit=120)
    assert len(text) <= 120 and text.startswith(MARKER)


# --- the change under test, each scenario's worst verdict, the functions behind a cost regression ------


def test_comment_golden_config_change_leads_with_the_change_and_the_culprits() -> None:
    verdicts, changes = config_change()
    text = render_comment(check(verdicts, title="dbperf: config change", changes=changes), links=LINKS, footer=FOOTER)
    check_golden("comment_config_change.md", text)
    lines = text.splitlines()
    # the change first, then the worst row of each scenario, then three functions, then the rest folded
    change = lines.index("- `performance_schema` = `ON` added (`servers/conf/mariadb.cnf` line 8, [mysqld])")
    worst = lines.index("**Worst verdict per scenario**")
    culprits = next(i for i, line in enumerate(lines) if line.startswith("**Why**"))
    fold = lines.index("<details>")
    assert change < worst < culprits < fold
    assert (
        lines[5]
        == "Largest regression: oltp_insert at 1 client, instructions/txn rose by **12.3 %** (1,236,000 → 1,388,028)."
    )
    worst_rows = [line for line in lines[worst:culprits] if line.startswith("| oltp")]
    assert [r.split(" | ")[2:6] for r in worst_rows] == [
        ["instructions/txn", "1,236,000", "1,388,028", "+12.3 %"],
        ["instructions/txn", "1,236,000", "1,237,236", "+0.1 %"],
    ]
    moved = [line.split(" | ")[2] for line in lines[culprits:fold] if line.startswith("| oltp_insert")]
    assert moved == [
        "instructions/txn",
        "function `pfs_start_mutex_wait_v1` (+41 % of the change)",
        "function `pfs_end_table_io_wait_v1` (+28 % of the change)",
        "function `std::vector<PFS_thread*, std::allocator<PFS_thread*> >::push_back` (+18 % of the change)",
        "`(unnamed functions)` (+11 % of the change)",
    ]


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
    text = render_comment(check(verdicts), links=LINKS)
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


def _count(metric: str, outcome: str, base: float, head: float, **kw: object) -> MetricVerdict:
    """A work-vector count per transaction as the judge leaves it (its test ran on count + offset)."""
    values: dict[str, object] = {"metric": metric, "higher_is_worse": True, "outcome": outcome, "reason": outcome}
    values.update(base_median=base, head_median=head, estimate_pct=30.0, ci_low_pct=28.0, ci_high_pct=32.0)
    values.update(bound_pct=5.0, method="cost", gating=True)
    values.update(kw)
    return MetricVerdict(**values)  # type: ignore[arg-type]


def fsync_regression() -> Verdict:
    """A redo flush change: log fsyncs 0.36 -> 1.19 per transaction decided, instructions within their noise
    (+0.003 %, interval ±0.01 %), and the function list of the instruction count's noise (__memset -261)."""
    instructions = mv(
        "instr_per_txn", "pass", 0.003, -0.007, 0.013, method="cost", base_median=4_790_000.0, head_median=4_790_144.0
    )
    return verdict(
        "oltp_insert", 1,
        _count("log_fsyncs", "regression", 0.36, 1.19),
        _count("rows_read", "regression", 1.0, 1.2, estimate_pct=4.0, ci_low_pct=3.0, ci_high_pct=5.0),
        instructions,
        kind="cost",
        explanation=(FunctionDelta("__memset_avx2_unaligned_erms", 5_000.0, 4_739.0, -261.0, -0.13),),
    )  # fmt: skip


def test_why_lists_the_metrics_that_moved_by_size_and_no_function_when_instructions_did_not_move() -> None:
    text = render_comment(check([fsync_regression()]), links=LINKS)
    lines = text.splitlines()
    why = next(i for i, line in enumerate(lines) if line.startswith("**Why**"))
    end = next(i for i in range(why + 3, len(lines)) if not lines[i].startswith("|"))
    rows = [line.split(" | ")[2:6] for line in lines[why + 4 : end]]
    assert [r[0] for r in rows] == [
        "log fsyncs/txn",
        "rows read/txn",
        "instructions did not move beyond their minimum effect: no function named",
    ], text
    assert rows[0][1:3] == ["0.360", "1.19"], rows
    assert "__memset" not in text


def test_a_function_within_the_noise_of_a_count_that_moved_is_not_named() -> None:
    from harness.report.pr_sections import culprits

    cost = replace(
        config_change()[0][0],
        explanation=(*FUNCTIONS, FunctionDelta("tiny_noise", 100.0, 40.0, -60.0, -0.01)),
    )
    # instructions 1,236,000 with an interval of +12.2 .. +12.4 %: noise is 0.1 % x 1,236,000 = 1,236 per txn
    names = [d.name for d in culprits(cost)]
    assert "tiny_noise" not in names and "row_ins_clust_index_entry_low" not in names
    assert names[0] == "pfs_start_mutex_wait_v1"


def test_the_largest_decided_change_leads_in_words() -> None:
    from harness.report.pr_sections import largest_change

    regression = verdict("oltp_read_only", 8, mv("qps", "regression", -7.9, -10.2, -5.6), mv("p95_ms", "pass", 1, 0, 2))
    improvement = verdict("oltp_point_select", 1, mv("qps", "improvement", 20.0, 15.0, 25.0))
    assert largest_change([regression, improvement]) == (
        "Largest regression: oltp_read_only at 8 clients, QPS fell by **7.9 %** (20,150 → 18,558)."
    )
    assert largest_change([improvement]).startswith("Largest improvement: oltp_point_select at 1 client, QPS rose")
    assert largest_change([verdict("x", 1, mv("qps", "inconclusive", -3, -9, 2))]) == ""
    # a count that was 0 has no relative change: its size is per transaction
    zero = verdict("oltp_insert", 1, _count("log_fsyncs", "regression", 0.0, 1.0), kind="cost")
    assert re.search(r"log fsyncs/txn rose by \*\*[0-9.]+ /txn\*\* \(0\.00 → 1\.00\)", largest_change([zero]))


def test_a_changed_scenario_script_is_named_as_a_file() -> None:
    from harness.model.definition_change import CONTENTS
    from harness.report.pr_sections import change_line

    change = DefinitionChange("scenarios/lua/ycsb_c.lua", CONTENTS, scenario="ycsb_c")
    assert change_line(change) == "`scenarios/lua/ycsb_c.lua` changed (used by `ycsb_c`)"


def test_a_setting_the_server_clamped_is_named_requested_to_effective_in_every_label() -> None:
    import json as json_module

    from harness.model import ReadBack
    from harness.model.outcome import Outcome
    from harness.pipeline.outcome_closing import with_read_back
    from harness.report.trusted_comment import build_comment
    from harness.report.verdicts import comparison_label

    plain = verdict(
        "oltp_point_select",
        1,
        mv("qps", "pass", 0.1, -1, 1),
        base="mariadb-local",
        head="mariadb-local+table_open_cache=1",
    )
    clamped = with_read_back(plain, {"mariadb-local+table_open_cache=1": {"table_open_cache": ("1", "10")}})
    assert clamped.read_back == (ReadBack("head", "table_open_cache", "1", "10"),)
    assert comparison_label(clamped) == "mariadb-local → mariadb-local+table_open_cache=1→10"
    assert with_read_back(plain, {"other": {"x": ("1", "2")}}) is plain
    # a setting that is not in the label (a server file's own) is added to it
    pinned = with_read_back(plain, {"mariadb-local": {"innodb_log_file_size": ("1M", "4M")}})
    assert pinned.side_label("base") == "mariadb-local (innodb_log_file_size: 1M→4M)"
    text = render_comment(check([clamped]), links=LINKS)
    assert "`mariadb-local+table_open_cache=1→10`" in text, text
    # the trusted comment rebuilds the label from verdicts.json (a pull request's server, its my.cnf value)
    from_file = with_read_back(
        replace(plain, head="mariadb-local"), {"mariadb-local": {"table_open_cache": ("1", "10")}}
    )
    document = Outcome((), (from_file,)).document()
    rebuilt = build_comment(json_module.dumps(document, default=str))
    assert "`mariadb-local (table_open_cache: 1→10)`" in rebuilt, rebuilt
    document["verdicts"][0]["read_back"][1]["effective"] = "[x](https://evil.example)"  # type: ignore[index]
    forged = build_comment(json_module.dumps(document, default=str))
    assert "evil" not in forged and "(table_open_cache: 1→(not shown))" in forged
