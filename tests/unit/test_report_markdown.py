"""Markdown and terminal verdict reports: golden files for every outcome, plus structural checks.

The golden files live in tests/data/golden/. After an intended change of the output, regenerate them
with ``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_report_markdown.py`` and review the diff.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from harness import model
from harness.model import Metrics, MetricVerdict, RunResult, Totals, Verdict
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

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
UPDATE = os.environ.get("DBPERF_UPDATE_GOLDEN") == "1"

TESTBED = model.Testbed(  # via the module: pytest would try to collect a class named Test*
    cpu_model="AMD EPYC 7763 64-Core",
    cores=16,
    memory_gb=62.7,
    kernel="6.1.0-28-amd64",
    disk="nvme0n1 (ssd)",
    sysbench_version="1.0.20",
    container_engine="docker 26.1.5",
    hostname="bench-01",
)
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
VERSIONS = {"mariadb-10.11": "10.11.6-MariaDB", "mariadb-11.8": "11.8.1-MariaDB"}


def make_run(
    index: int,
    *,
    server: str = "mariadb-11.8",
    scenario: str = "oltp_read_only",
    threads: int = 8,
    qps: float = 20000.0,
    p95: float = 4.5,
    failure: str = "",
) -> RunResult:
    started = T0 + timedelta(minutes=index)
    common: dict[str, object] = {
        "run_id": f"run-{server}-{scenario}-{threads}-{index:02d}",
        "started_at": started,
        "finished_at": started + timedelta(seconds=40),
        "server": server,
        "flavour": "mariadb",
        "provider": "container",
        "server_version": VERSIONS.get(server, "9.7.0"),
        "config_hash": f"cfg-{server[-4:]}",
        "scenario": scenario,
        "scenario_hash": "5ce7a1",
        "profile": "ci",
        "script": scenario,
        "threads": threads,
        "repetition": index,
        "warmup_s": 5.0,
        "time_s": 30.0,
        "testbed": TESTBED,
        "git_sha": "4f2a9c1e0b7d3a5f6e8c9d0a1b2c3d4e5f6a7b8c",
        "group_id": "pr-123",
    }
    if failure:
        return RunResult(status="failed", failure=failure, **common)  # type: ignore[arg-type]
    totals = Totals(30.0, int(qps * 30 / 14), int(qps * 30 * 0.8), 0, int(qps * 30 * 0.2), 0, 0)
    metrics = Metrics(
        qps=qps, tps=qps / 14, p50_ms=p95 / 2, p95_ms=p95, p99_ms=p95 * 1.5, errors_per_s=0.0,
        reconnects_per_s=0.0, cpu_per_txn=210.0 + index, instr_per_txn=1_234_000.0 + 1000 * index,
    )  # fmt: skip
    return RunResult(status="ok", totals=totals, metrics=metrics, **common)  # type: ignore[arg-type]


def runs_for(*servers: str, threads: int = 8, scenario: str = "oltp_read_only") -> list[RunResult]:
    runs = []
    for server in servers:
        base = 20000.0 if server == "mariadb-10.11" else 18500.0
        runs += [
            make_run(i, server=server, threads=threads, scenario=scenario, qps=base + 150 * i, p95=4.5 + 0.05 * i)
            for i in range(5)
        ]
    return runs


def mv(metric: str, outcome: str, estimate: float, low: float, high: float, **kw: object) -> MetricVerdict:
    higher_is_worse = model.METRICS[metric]
    effect = {"qps": 5.0, "p95_ms": 10.0, "cpu_per_txn": 5.0, "instr_per_txn": 2.0}.get(metric, 5.0)
    base = {"qps": 20150.0, "p95_ms": 4.6, "cpu_per_txn": 212.0, "instr_per_txn": 1_236_000.0}[metric]
    values: dict[str, object] = {
        "metric": metric,
        "higher_is_worse": higher_is_worse,
        "outcome": outcome,
        "reason": f"{outcome.capitalize()}: {estimate:+.1f} % (the 95.0 % interval {low:+.1f} % to {high:+.1f} %)",
        "base_median": base,
        "head_median": base * (1 + estimate / 100),
        "estimate_pct": estimate,
        "ci_low_pct": low,
        "ci_high_pct": high,
        "p_value": 0.004,
        "p_adjusted": 0.012,
        "bound_pct": effect,
        "noise_pct": 2.1,
        "n_base": 5,
        "n_head": 5,
        "method": "signed-rank",
        "cause": outcome if outcome != "inconclusive" else "noise",
    }
    values.update(kw)
    values.setdefault(
        "summary",
        SUMMARIES[outcome].format(
            effect=f"{effect:g} %",
            worse="rise" if higher_is_worse else "drop",
            better="fall" if higher_is_worse else "rise",
            p=f"{values['p_adjusted']:.2g}",
        ),
    )
    return MetricVerdict(**values)  # type: ignore[arg-type]


#: The short clauses harness.judge.classify writes for each outcome (its own tests check the wording).
SUMMARIES = {
    "regression": "{worse} beyond the {effect} minimum effect (adjusted p = {p})",
    "improvement": "{better} beyond the {effect} minimum effect (adjusted p = {p})",
    "pass": "rules out a {worse} of {effect} or more",
    "inconclusive": "cannot rule out a {worse} of {effect}",
}


def verdict(scenario: str, threads: int, *metrics: MetricVerdict, **kw: object) -> Verdict:
    values: dict[str, object] = {
        "mode": "ab",
        "scenario": scenario,
        "threads": threads,
        "base": "mariadb-10.11",
        "head": "mariadb-11.8",
        "metrics": metrics,
        "base_version": VERSIONS["mariadb-10.11"],
        "head_version": VERSIONS["mariadb-11.8"],
    }
    values.update(kw)
    return Verdict(**values)  # type: ignore[arg-type]


def no_baseline() -> Verdict:  # the shape harness.gate.no_baseline_verdict builds
    reason = (
        "no baseline for oltp_read_only on mariadb-11.8 (ci profile) on this testbed; record one with: "
        "dbperf baseline record --scenario oltp_read_only --server mariadb-11.8 --profile ci"
    )
    metric = MetricVerdict(metric="baseline", higher_is_worse=False, outcome="no_baseline", reason=reason, gating=False)
    return verdict("oltp_read_only", 8, metric, mode="baseline", base="baseline", base_version="", head_version="")


def failed() -> Verdict:  # the shape harness.gate.failed_verdict builds
    metric = MetricVerdict(
        metric="run", higher_is_worse=False, outcome="failed",
        reason="run failed: FATAL: error 2013: Lost connection to server during query",
    )  # fmt: skip
    return verdict("oltp_read_write", 16, metric, base_version="", head_version="")


CASES: dict[str, tuple[list[Verdict], list[RunResult]]] = {
    "regression": (
        [
            verdict(
                "oltp_read_only",
                8,
                mv("qps", "regression", -7.9, -10.2, -5.6, p_adjusted=0.0021),
                mv("p95_ms", "regression", 12.4, 10.6, 14.9, p_adjusted=0.0021),
                mv("cpu_per_txn", "pass", 0.8, -1.1, 2.3, gating=False),
            )
        ],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "improvement": (
        [
            verdict(
                "oltp_read_only",
                8,
                mv("qps", "improvement", 6.3, 4.1, 8.8),
                mv("p95_ms", "improvement", -11.0, -13.5, -10.2),
            )
        ],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "pass": (
        [verdict("oltp_read_only", 8, mv("qps", "pass", 0.4, -1.8, 2.2), mv("p95_ms", "pass", -0.5, -3.0, 2.4))],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "inconclusive": (
        [
            verdict(
                "oltp_read_only",
                8,
                mv(
                    "qps",
                    "inconclusive",
                    -3.1,
                    -9.7,
                    2.9,
                    noise_pct=8.0,
                    repetitions_needed=24,
                    seconds_needed=24 * 32.0,
                    p_adjusted=0.31,
                ),
                mv("p95_ms", "pass", 1.0, -2.0, 4.1),
                warnings=("head qps varied 14 % (CV) between repetitions: unstable",),
            )
        ],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "no_baseline": ([no_baseline()], runs_for("mariadb-11.8")),
    "failed": (
        [failed()],
        [
            *runs_for("mariadb-10.11", "mariadb-11.8", scenario="oltp_read_write", threads=16)[:7],
            make_run(
                7,
                server="mariadb-11.8",
                scenario="oltp_read_write",
                threads=16,
                failure="FATAL: error 2013: Lost connection to server during query",
            ),
        ],
    ),
}


def many_rows() -> tuple[list[Verdict], list[RunResult]]:
    verdicts = []
    for scenario in ("oltp_point_select", "oltp_read_only", "oltp_read_write"):
        for threads in (1, 2, 4, 8, 16):
            metrics = [mv("qps", "pass", 0.3, -1.2, 1.9), mv("p95_ms", "pass", -0.4, -2.2, 1.5)]
            if scenario == "oltp_read_write" and threads == 16:
                metrics[0] = mv("qps", "regression", -6.2, -8.8, -5.1)
            if scenario == "oltp_point_select" and threads == 1:
                metrics[1] = mv("p95_ms", "inconclusive", 4.0, -1.0, 11.5, noise_pct=12.5, repetitions_needed=40)
            verdicts.append(verdict(scenario, threads, *metrics))
    runs = [r for t in (1, 2, 4, 8, 16) for r in runs_for("mariadb-10.11", "mariadb-11.8", threads=t)]
    return verdicts, runs


CHARTS = (
    ("QPS and p95 across commits", "https://example.github.io/dbperf/png/oltp_read_only-trend.png"),
    ("trend site", "https://example.github.io/dbperf/"),
)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: regenerate with DBPERF_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from the golden file; if intended, regenerate with DBPERF_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("case", list(CASES))
def test_markdown_golden(case: str) -> None:
    verdicts, runs = CASES[case]
    text = render_markdown(verdicts, runs, title=f"dbperf: {case}", chart_links=CHARTS)
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
    text = render_markdown(verdicts, runs)
    headline_line = text.splitlines()[4]
    emoji, name = word.split(" ", 1)
    assert re.search(rf"{re.escape(emoji)} 1 {re.escape(name)}", headline_line), headline_line
    rows = [line for line in text.splitlines() if line.startswith("| ") and word in line]
    assert rows, f"no table row shows {word!r}"


def test_table_numbers_are_the_verdicts() -> None:
    verdicts, runs = CASES["regression"]
    text = render_markdown(verdicts, runs)
    row = next(line for line in text.splitlines() if line.startswith("| oltp_read_only | 8 | QPS |"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[3:7] == ["20,150", "18,558", "-7.9 %", "[-10.2, -5.6] %"]
    assert "drop beyond the 5 % minimum effect (adjusted p = 0.0021)" in cells[8]
    info = next(line for line in text.splitlines() if "CPU µs/txn" in line)
    assert "pass (info)" in info


def test_failed_runs_testbed_versions_and_charts_are_listed() -> None:
    verdicts, runs = CASES["failed"]
    text = render_markdown(verdicts, runs, chart_links=CHARTS)
    assert "### ❌ Failed runs (1)" in text
    assert "Lost connection to server during query" in text
    assert f"`{TESTBED.fingerprint}`" in text
    assert "| `mariadb-10.11` | 10.11.6-MariaDB |" in text
    assert "![QPS and p95 across commits](https://example.github.io/dbperf/png/oltp_read_only-trend.png)" in text
    assert "- [trend site](https://example.github.io/dbperf/)" in text


def test_noise_warnings_section() -> None:
    verdicts, runs = CASES["inconclusive"]
    text = render_markdown(verdicts, runs, warnings=("testbed busy: load average 3.2 on 2 cores",))
    section = text.split("### ⚠️ Noise and measurement warnings", 1)[1].split("###", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert lines[0] == "- testbed busy: load average 3.2 on 2 cores"
    assert "oltp_read_only 8t: head qps varied 14 % (CV)" in lines[1]
    assert "noise ±8.0 % is larger than the smallest change that matters (5 %)" in lines[2]
    assert "about 24 pairs (~13 min) would likely decide" in lines[2]


def test_many_rows_collapse_into_details() -> None:
    verdicts, runs = many_rows()
    text = render_markdown(verdicts, runs, title="dbperf: many rows")
    check_golden("markdown_many_rows.md", text)
    before, details = text.split("<details>", 1)
    visible = [line for line in before.splitlines() if line.startswith("| oltp")]
    assert len(visible) == 2  # the regression and the inconclusive row stay in view
    hidden = [line for line in details.split("</details>", 1)[0].splitlines() if line.startswith("| oltp")]
    assert len(visible) + len(hidden) == 30 > COLLAPSE_ABOVE
    assert "<summary>28 more row(s) that pass or do not gate</summary>\n\n|" in text


def test_cells_escape_pipes_and_newlines() -> None:
    bad = MetricVerdict(metric="run", higher_is_worse=False, outcome="failed", reason="a | b\nc")
    text = render_markdown([verdict("s|x", 1, bad)], [])
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
