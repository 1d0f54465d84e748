"""What each comparison of a pull-request plan measures, what it leaves out, and its estimate.

Real temporary git repositories (the fixtures of test_ciplan.py), the real command line, a real DuckDB
store of run durations."""

from __future__ import annotations

import dataclasses
import json
import platform
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.ci_repos import CONF_A, CONF_B, LOCAL_A, commit
from support.factories import run

from harness.ci.plan_estimate import ASSUMED_START_S, GAP_S, PLAN_CHECK_S, SESSION_S
from harness.ci.scope import SENSITIVITY, sensitivity
from harness.errors import ConfigError
from harness.pipeline.design_check import seconds_per_run


@pytest.fixture
def cli_env(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(repo)
    for var in ("DBPERF_SERVER", "DBPERF_SCENARIO", "DBPERF_PROFILE", "DBPERF_REPETITIONS", "DBPERF_COST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DBPERF_STORE", str(repo / "none.duckdb"))
    monkeypatch.setenv("DBPERF_CACHE_DIR", str(repo / "cache"))  # no overhead measured: the assumed figures
    return repo


def plan_json(*args: str) -> dict[str, Any]:
    from harness.cli import cli

    result = CliRunner().invoke(
        cli, ["ci", "plan", "--base", "main", "--head", "change", "-s", "point,mix", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


def kinds(doc: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(c["head_server"] + " " + c["scenario"], c["kinds"]) for c in doc["comparisons"]]


# --- the table ---------------------------------------------------------------------------------------


def test_the_table_says_which_settings_cost_can_see() -> None:
    assert not sensitivity("innodb_buffer_pool_size").timing
    assert not sensitivity("innodb_flush_log_at_trx_commit").timing
    assert sensitivity("thread_handling").timing
    assert sensitivity("thread_pool_size").timing
    assert sensitivity("innodb_buffer_pool_instances").timing  # contention, not the pool's size
    assert sensitivity("version").timing
    unknown = sensitivity("innodb_some_new_knob")
    assert unknown.timing and unknown.why == "not covered by the work vector"
    # every row is reachable: no earlier pattern hides a later one
    for row in SENSITIVITY:
        if "*" not in row.pattern:
            assert sensitivity(row.pattern) == row, row


# --- what each comparison measures --------------------------------------------------------------------


def test_a_setting_cost_sees_runs_cost_only_and_says_why(cli_env: Path) -> None:
    commit(cli_env, "relaxed flushing", {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2")})
    doc = plan_json()
    assert kinds(doc) == [("local-a point", ["cost"]), ("local-a mix", ["cost"])]
    assert doc["comparisons"][0]["changed"] == ["innodb_flush_log_at_trx_commit"]
    assert doc["left_out"] == [
        "timing on local-a point, local-a mix: cost sees the change "
        "(innodb_flush_log_at_trx_commit: fsyncs/txn (log_fsyncs, sys_fsync)), so cost judges it"
    ]
    assert doc["estimate"]["time_s"] == 0 and doc["estimate"]["cost_s"] > 0


def test_a_concurrency_setting_without_timing_power_is_left_to_cost_with_the_reason(cli_env: Path) -> None:
    commit(
        cli_env,
        "thread pool",
        {"servers/local-a.toml": LOCAL_A + '\n[variables]\nthread_handling = "pool-of-threads"\n'},
    )
    doc = plan_json()
    assert kinds(doc) == [("local-a point", ["cost"]), ("local-a mix", ["cost"])]
    first = doc["left_out"][0]
    assert first.startswith("timing on local-a point: power ")
    assert "at the 5 % minimum effect with" in first and "(qps, noise 12 % assumed)" in first
    assert "blind to thread_handling (thread scheduling)" in first
    assert "dbperf ci run --servers local-a --scenario point --no-cost" in first


def test_timing_runs_where_it_has_power(cli_env: Path) -> None:
    commit(
        cli_env,
        "thread pool",
        {"servers/local-a.toml": LOCAL_A + '\n[variables]\nthread_handling = "pool-of-threads"\n'},
    )
    doc = plan_json("--repetitions", "100")
    assert kinds(doc) == [("local-a point", ["time", "cost"]), ("local-a mix", ["time", "cost"])]
    assert not doc["left_out"]
    assert doc["estimate"]["pairs"] == 100


def test_forced_repetitions_too_few_for_timing_leave_it_to_cost(cli_env: Path) -> None:
    commit(
        cli_env,
        "thread pool",
        {"servers/local-a.toml": LOCAL_A + '\n[variables]\nthread_handling = "pool-of-threads"\n'},
    )
    doc = plan_json("--repetitions", "3")
    assert kinds(doc) == [("local-a point", ["cost"]), ("local-a mix", ["cost"])]
    assert doc["left_out"][0].startswith("timing on local-a point: timing cannot decide at these repetitions (refusing")


def test_cost_and_no_cost_decide_for_every_comparison(cli_env: Path) -> None:
    commit(cli_env, "relaxed flushing", {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2")})
    assert kinds(plan_json("--no-cost")) == [("local-a point", ["time"]), ("local-a mix", ["time"])]
    cost = plan_json("--cost")
    assert kinds(cost) == [("local-a point", ["cost"]), ("local-a mix", ["cost"])]
    assert cost["estimate"]["time_s"] == 0


def test_servers_narrows_the_fan_out_and_lists_what_it_dropped(cli_env: Path) -> None:
    from harness.cli import cli

    commit(
        cli_env,
        "both",
        {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2"), "servers/conf/b.cnf": CONF_B + "sync_binlog = 0\n"},
    )
    assert {c["head_server"] for c in plan_json()["comparisons"]} == {"local-a", "container-b"}
    for selection in ("local", "local-*", "local-a,local-?"):
        doc = plan_json("--servers", selection)
        assert {c["head_server"] for c in doc["comparisons"]} == {"local-a"}, selection
        assert (
            doc["left_out"][0]
            == f"container-b (2 comparison(s) or recording(s)): not selected by --servers {selection}"
        )
    doc = plan_json("--servers", "container-b")
    assert {c["head_server"] for c in doc["comparisons"]} == {"container-b"}
    result = CliRunner().invoke(
        cli, ["ci", "plan", "--base", "main", "--head", "change", "-s", "point,mix", "--servers", "none*"]
    )
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception) == "--servers none* matches no server (known: container-b, local-a, local)"


def test_servers_that_the_change_does_not_touch_leave_an_empty_plan(cli_env: Path) -> None:
    commit(cli_env, "b only", {"servers/conf/b.cnf": CONF_B + "sync_binlog = 0\n"})
    doc = plan_json("--servers", "local")
    assert doc["comparisons"] == []
    assert doc["left_out"] == ["container-b (2 comparison(s) or recording(s)): not selected by --servers local"]


# --- the estimate -------------------------------------------------------------------------------------


def test_the_estimate_follows_the_design_check(cli_env: Path) -> None:
    """Timing only, 6 pairs from the profile: too few for the family, so the design check raises them,
    and the estimate counts the raised pairs."""
    commit(cli_env, "relaxed flushing", {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2")})
    doc = plan_json("--no-cost")
    pairs = doc["estimate"]["pairs"]
    assert pairs > 6 and doc["design"]["pairs"] == pairs and "instead of 6" in doc["design"]["note"]
    item = doc["estimate"]["items"][0]
    assert item["kind"] == "time" and item["runs"] == 2 * pairs and item["source"] == "assumed"
    # the test scenario's ci profile: 2 s warm-up + 10 s, an assumed local start, and the gap
    assert item["per_run_s"] == 2 + 10 + ASSUMED_START_S["local"] + GAP_S
    total = sum(i["seconds"] for i in doc["estimate"]["items"]) + SESSION_S + 2 * PLAN_CHECK_S
    datasets = doc["estimate"]["datasets"]  # not in this test's snapshot cache: prepared first, and counted
    assert len(datasets) == 2 and all(d["source"] == "assumed" and d["seconds"] > 0 for d in datasets)
    total += sum(d["seconds"] for d in datasets)
    assert doc["estimate"]["seconds"] == round(total)
    assert doc["estimated_s"] == round(total)


def test_the_estimate_prices_runs_by_this_machines_recent_durations(
    cli_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.model import Testbed
    from harness.store import open_store

    commit(cli_env, "relaxed flushing", {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2")})
    here = dataclasses.replace(run(1.0).testbed, hostname=platform.node())
    elsewhere: Testbed = dataclasses.replace(here, hostname="another-machine")
    runs = []
    for i, (server, seconds, testbed) in enumerate(
        [("local-a", 30, here), ("local-a@base", 40, here), ("local-a", 32, here), ("local-a", 500, elsewhere)]
    ):
        r = dataclasses.replace(run(1.0, server=server, threads=1), scenario="point", kind="cost", testbed=testbed)
        r = dataclasses.replace(r, run_id=f"r{i}", finished_at=r.started_at + timedelta(seconds=seconds))
        runs.append(r)
    store = cli_env / "durations.duckdb"
    open_store(store).save_many(runs)
    monkeypatch.setenv("DBPERF_COST_SLOTS", "2")
    doc = plan_json("--cost", "--store", str(store))
    point, mix = doc["estimate"]["items"]
    assert point["label"] == "local-a point 1t" and point["source"] == "measured (3 runs)"
    assert point["per_run_s"] == 32 + GAP_S  # the median of 30, 40, 32: not the other machine's 500
    assert point["runs"] == 6  # 3 cost pairs (the scenario's [cost] default), two sides
    # the runs go two at a time, as the runner will run them: a stored run's own span, divided once
    assert point["slots"] == 2 and point["seconds"] == 3 * (32 + GAP_S)
    monkeypatch.setenv("DBPERF_COST_SLOTS", "1")
    alone = plan_json("--cost", "--store", str(store))["estimate"]["items"][0]
    assert alone["slots"] == 1 and alone["seconds"] == 6 * (32 + GAP_S)
    assert mix["source"] == "assumed"
    from harness.config.scenarios import load_scenario

    scenario = load_scenario("mix", cli_env / "scenarios", "ci")
    assert mix["per_run_s"] == seconds_per_run(scenario, "cost") + GAP_S


def test_the_gap_between_runs_comes_from_this_machines_invocations(tmp_path: Path) -> None:
    from harness.ci.plan_estimate import History, recent_history
    from harness.store import open_store

    here = dataclasses.replace(run(1.0).testbed, hostname=platform.node())
    start = run(1.0).started_at
    runs = []
    # one invocation: 20 s runs, 4, 6 and 5 s apart, then a plan check (90 s: not a gap between runs)
    for i, offset in enumerate((0, 24, 50, 75, 185)):
        r = dataclasses.replace(run(1.0, threads=1), run_id=f"g{i}", testbed=here, group_id="one")
        at = start + timedelta(seconds=offset)
        runs.append(dataclasses.replace(r, started_at=at, finished_at=at + timedelta(seconds=20)))
    store = tmp_path / "gaps.duckdb"
    open_store(store).save_many(runs)
    found = recent_history(store)
    assert sorted(found.gaps) == [("time", 4.0), ("time", 5.0), ("time", 6.0)]
    assert found.gap_s("time") == (5.0, "measured")
    assert found.gap_s("cost") == (GAP_S, "assumed")  # gaps before cost runs: none measured
    assert History().gap_s("time") == (GAP_S, "assumed")
    assert recent_history(store, hostname="another-machine") == History()


def test_the_plan_prints_what_it_left_out_and_the_estimate_per_kind(
    cli_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.cli import cli

    monkeypatch.setenv("DBPERF_COST_SLOTS", "2")
    commit(cli_env, "relaxed flushing", {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2")})
    result = CliRunner().invoke(cli, ["ci", "plan", "--base", "main", "--head", "change", "-s", "point,mix"])
    assert result.exit_code == 0, result.output
    assert "left out: timing on local-a point, local-a mix: cost sees the change" in result.output
    assert "estimated time: ~" in result.output and "(cost ~" in result.output and "timing -" in result.output
    assert "run times assumed from the profile (no runs of them stored on this machine)" in result.output
    assert "cost runs 2 at a time" in result.output


def test_the_docs_show_the_table_as_it_is() -> None:
    """docs/pull-request-checks.md lists every row of SENSITIVITY, with what it changes and what runs."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "pull-request-checks.md").read_text()
    rows = [line for line in docs.splitlines() if line.startswith("| `")]
    shown = {}
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[2] in ("cost", "cost, and timing where it has power"):
            for pattern in cells[0].split(", "):
                shown[pattern.strip("`")] = (cells[2] != "cost", cells[1])
    assert shown == {row.pattern: (row.timing, row.why) for row in SENSITIVITY}


def test_wall_clock_metrics_come_from_the_metric_definitions() -> None:
    from harness.ci.scope import wall_clock

    assert all(wall_clock(m) for m in ("qps", "p95_ms", "p99_ms", "capacity_qps", "ops_per_s"))
    assert all(wall_clock(m) for m in ("READ.p99_ms", "NEW_ORDER.ops_per_min", "NEW_ORDER.p95_ms", "SCAN.p99_ms"))
    assert not any(wall_clock(m) for m in ("instr_per_txn", "cpu_per_txn", "sys_fsync", "bp_reads", "READ.nope"))


def test_a_per_operation_workload_change_is_timed_on_its_own_metrics(cli_env: Path) -> None:
    """ycsb-like scenarios gate ops_per_s and READ.p99_ms: timing's power is computed on them, not "no
    wall-clock metric gates it"."""
    from support.ci_repos import git, scenario_toml

    ops = scenario_toml("ops", "lua/ops.lua").replace(
        "writes = false\n", 'writes = false\ngate = ["ops_per_s", "READ.p99_ms", "instr_per_txn"]\n'
    )
    commit(cli_env, "a per-operation scenario", {"scenarios/ops.toml": ops, "scenarios/lua/ops.lua": "-- v1\n"})
    git(cli_env, "branch", "-f", "main", "HEAD")
    commit(cli_env, "heavier", {"scenarios/lua/ops.lua": "-- v2\n"})
    from harness.cli import cli

    result = CliRunner().invoke(cli, ["ci", "plan", "--base", "main", "--head", "change", "-s", "ops", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert kinds(doc) == [("local-a ops", ["cost"])]
    (line,) = doc["left_out"]
    assert "no wall-clock metric gates it" not in line
    assert line.startswith("timing on local-a ops: power ")
    assert "(ops_per_s, noise" in line or "(READ.p99_ms, noise" in line
