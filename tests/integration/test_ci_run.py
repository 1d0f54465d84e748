"""`dbperf ci plan` and `dbperf ci run` on a real git repository with real config changes.

A temporary repository holds the project's servers/ and scenarios/. One branch arms a per-statement
timer (``max_statement_time``: +1.1 % server instructions per point select, a real cost); another
raises max_allowed_packet (a change that costs nothing on point selects). Both are planned and run
with the quick profile on the local MariaDB. The change is asserted on the deterministic cost metric
(the first a regression, exit 1; the second a pass, exit 0); timing verdicts of the same run are
checked for shape and honesty only (they are noise on a shared VM).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.ci_repos import git
from support.cli import dbperf_argv

from harness.model import MetricVerdict
from harness.model.verdict_document import read_document
from harness.store import Store

pytestmark = pytest.mark.integration

RUN_ARGS = [
    "--profile",
    "quick",
    "--scenario",
    "oltp_point_select",
    "--repetitions",
    "9",
    "--time",
    "2",
    "--warmup",
    "1",
    "--seed",
    "11",
]


@pytest.fixture(scope="module")
def change_repo(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> Path:
    root = tmp_path_factory.mktemp("ci-repo")
    shutil.copytree(repo / "servers", root / "servers")
    shutil.copytree(repo / "scenarios", root / "scenarios", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (root / "pyproject.toml").write_text("[tool.dbperf]\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    server = root / "servers" / "mariadb-local.toml"
    original = server.read_text()
    git(root, "checkout", "-qb", "slow")
    server.write_text(original + '\n[variables]\nmax_statement_time = "1000"\n')
    git(root, "commit", "-qam", "arm a statement timer")
    git(root, "checkout", "-q", "main")
    git(root, "checkout", "-qb", "harmless")
    server.write_text(original + '\n[variables]\nmax_allowed_packet = "32M"\n')
    git(root, "commit", "-qam", "raise max_allowed_packet")
    git(root, "checkout", "-q", "main")
    return root


def dbperf(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*dbperf_argv(), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900
    )


def test_plan_names_the_changed_server(change_repo: Path, cli_env: dict[str, str]):
    result = dbperf(
        change_repo,
        cli_env,
        "ci",
        "plan",
        "--base",
        "main",
        "--head",
        "slow",
        "--profile",
        "quick",
        "--scenario",
        "oltp_point_select",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert [(c["base_server"], c["head_server"], c["scenario"]) for c in plan["comparisons"]] == [
        ("mariadb-local@base", "mariadb-local", "oltp_point_select")
    ]
    assert "max_statement_time=1000" in plan["comparisons"][0]["reason"]
    assert plan["comparisons"][0]["kinds"] == ["cost"]  # a timer per statement: instructions see it
    assert {t["metric"] for t in plan["design"]["tests"]} >= {"instr_per_txn"}
    timed = dbperf(
        change_repo,
        cli_env,
        *("ci", "plan", "--base", "main", "--head", "slow", "--profile", "quick", "-s", "oltp_point_select"),
        *("--no-cost", "--json"),
    )
    assert timed.returncode == 0, timed.stderr
    design = json.loads(timed.stdout)["design"]
    assert design["pairs"] >= 9  # the quick profile's 1 repetition is raised so that the family can fail
    assert all(t["can_fail"] for t in design["tests"])
    assert {t["metric"] for t in design["tests"]} >= {"qps"}
    assert json.loads(timed.stdout)["estimate"]["pairs"] == design["pairs"]  # the estimate counts them
    costed = dbperf(
        change_repo,
        cli_env,
        *("ci", "plan", "--base", "main", "--head", "slow", "--profile", "quick", "-s", "oltp_point_select"),
        *("--cost", "--repetitions", "4", "--json"),
    )
    assert costed.returncode == 0, costed.stderr
    # in cost-only mode --repetitions sets the cost runs: the design says so, as the estimate and the run count them
    assert {t["repetitions"] for t in json.loads(costed.stdout)["design"]["tests"]} == {"4 + 4"}


@pytest.mark.parametrize(
    ("branch", "kinds", "expected_exit", "outcome"),
    [
        ("slow", (), 1, "regression"),
        ("harmless", ("--cost", "--repetitions", "4"), 0, None),
        ("slow", ("--no-cost",), None, "timing"),
    ],
)
def test_ci_run_judges_the_change(
    change_repo: Path,
    cli_env: dict[str, str],
    tmp_path: Path,
    branch: str,
    kinds: tuple[str, ...],
    expected_exit: int | None,
    outcome: str | None,
):
    git(change_repo, "checkout", "-q", branch)
    out = tmp_path / "out"
    summary = tmp_path / "summary.md"
    user_store = tmp_path / "user" / "dbperf.duckdb"
    env = {**cli_env, "GITHUB_STEP_SUMMARY": str(summary), "DBPERF_STORE": str(user_store)}
    try:
        result = dbperf(
            change_repo, env, "ci", "run", "--base", "main", "--head", branch, "--out", str(out), *RUN_ARGS, *kinds
        )
    finally:
        git(change_repo, "checkout", "-q", "main")
    if expected_exit is None:  # timing verdicts are noise on a shared VM: pass or regression, never an error
        assert result.returncode in (0, 1), result.stdout[-3000:] + result.stderr[-3000:]
    else:
        assert result.returncode == expected_exit, result.stdout[-3000:] + result.stderr[-3000:]
    for name in ("plan.json", "report.md", "comment.md", "verdicts.json", "bmf.json", "dbperf.duckdb"):
        assert (out / name).exists(), name
    # every run is in the user's store too, so the next plan prices these comparisons from their durations
    in_out = {r.run_id for r in Store(out / "dbperf.duckdb").runs()}
    assert in_out and {r.run_id for r in Store(user_store).runs()} == in_out
    if "--cost" in kinds:  # cost only: its --repetitions (the last one given) sets the cost runs a side
        assert len(in_out) == 2 * 4
    report = (out / "report.md").read_text()
    written = summary.read_text()
    # the job summary is the report without the charts' relative image links (they do not resolve there)
    assert written.split("### Testbed and servers")[0] == report.split("### Testbed and servers")[0]
    assert "](site/png/" not in written
    comment = (out / "comment.md").read_text()
    assert comment.startswith("<!-- dbperf-pr-check -->\n")
    assert read_document((out / "verdicts.json").read_text()).format == 1  # the one reader takes it
    document = json.loads((out / "verdicts.json").read_text())
    verdicts = {v["kind"]: v for v in document["verdicts"]}
    plan = json.loads((out / "plan.json").read_text())
    if outcome == "timing":  # --no-cost: timing only, whatever the plan's scope would have chosen
        assert set(verdicts) == {"time"} and plan["comparisons"][0]["kinds"] == ["time"]
        timing = {m["metric"]: m for m in verdicts["time"]["metrics"]}
        for metric in timing.values():  # shape and honesty, not a fixed outcome
            assert metric["outcome"] in {"pass", "regression", "improvement", "inconclusive"}
            assert metric["reason"] and metric["cause"]
            if metric["outcome"] == "regression":
                assert metric["p_adjusted"] < 0.02 and abs(metric["estimate_pct"]) > metric["bound_pct"]
        return
    # the cost comparison's differential flame graph: beside the report, linked, named in the comment
    flame = "flamegraph-oltp_point_select-1t.svg"
    assert (out / flame).read_text().startswith("<svg ")
    assert json.loads((out / "verdicts.json").read_text())["flame_graphs"] == [flame]
    assert f"[`{flame}`]({flame})" in report
    assert f"`{flame}`" in comment
    # the job summary's charts are Mermaid blocks, one per judged metric (and the flame graph's), none empty
    estimates = [m for v in document["verdicts"] for m in v["metrics"] if m["estimate_pct"] is not None]
    # a chart shows the change as reports do: a count's own change, not the test's on count + offset
    fields = {f.name for f in dataclasses.fields(MetricVerdict)}
    verdict_of = {m["metric"]: MetricVerdict(**{k: v for k, v in m.items() if k in fields}) for m in estimates}
    shown = {name: mv.shown_change() for name, mv in verdict_of.items()}
    moved = {name for name, change in shown.items() if change.value is not None and abs(change.value) >= 0.005}
    if outcome == "regression":  # the timer's +1.1 % instructions/txn gets a chart; a harmless change may move nothing
        assert "instr_per_txn" in moved
    blocks = written.split("```mermaid\n")[1:]
    flame_blocks = [b for b in blocks if "frames that moved most" in b.split("```")[0]]
    assert len(blocks) - len(flame_blocks) == len(moved), written[-4000:]  # the others are named in one line
    # the flame graph's chart shows the frames that moved; when none did (a change that costs nothing), it says so
    no_frame_moved = "No frame's own instructions per transaction moved." in written
    assert len(flame_blocks) == (0 if no_frame_moved else 1), written[-4000:]
    if outcome == "regression":
        assert flame_blocks
    if len(moved) < len({m["metric"] for m in estimates}):
        assert "Unchanged (0.00 %) in every comparison: " in written
    for block in blocks:
        bars = re.search(r"^    bar \[([^\]]*)\]$", block.split("```")[0], re.MULTILINE)
        assert bars is not None and bars.group(1).strip(), block
    assert f"`{flame}` in the `perf-results` artifact" in written
    cost = {m["metric"]: m for m in verdicts["cost"]["metrics"]}["instr_per_txn"]
    if outcome == "regression":
        # a per-statement timer costs instructions: cost judges it, and the plan says why timing was left out
        assert set(verdicts) == {"cost"} and plan["comparisons"][0]["kinds"] == ["cost"]
        assert plan["left_out"] == [
            "timing on mariadb-local oltp_point_select: cost sees the change "
            "(max_statement_time: instructions/txn), so cost judges it"
        ]
        assert cost["outcome"] == "regression", cost["reason"]
        assert 0.5 < cost["estimate_pct"] < 2.0
        assert "regression" in report
        assert "Where the instructions went" in report
    else:
        assert set(verdicts) == {"cost"}
        assert cost["outcome"] == "pass", cost["reason"]
    assert "mariadb-local@base" in report
