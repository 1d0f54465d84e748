"""The plan aims where a change bites: each class of setting runs the scenarios that exercise it, and says why.

A real temporary git repository with a small catalogue named like the stock one (test_ciplan.py's git
helpers); one kind of change per test, asserting the scenarios chosen and the reason given for each."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.ci_repos import LOCAL_A, commit, git

from harness.ci.plan import NAMED, plan
from harness.ci.records import CiPlan
from harness.ci.targets import canonical, dataset_bytes
from harness.config.scenarios import load_scenario_file

CONF = "[mariadbd]\ninnodb_flush_log_at_trx_commit = 1\n"
DEFAULTS = ("oltp_point_select", "oltp_read_write")
REPO = Path(__file__).resolve().parents[2]


def scenario(name: str, script: str, *, writes: bool, description: str = "", threads: str = "[4]",
             tables: int = 4, table_size: int = 100000) -> str:  # fmt: skip
    return f"""\
name = "{name}"
description = "{description or name}"
script = "{script}"
writes = {str(writes).lower()}

[dataset]
tables = {tables}
table_size = {table_size}

[profiles.quick]
threads = [2]
warmup_s = 1
time_s = 3
repetitions = 1

[profiles.ci]
threads = {threads}
warmup_s = 2
time_s = 10
repetitions = 6

[profiles.full]
threads = [1, 8]
warmup_s = 5
time_s = 60
repetitions = 3
"""


CATALOGUE = {
    "oltp_point_select": scenario("oltp_point_select", "oltp_point_select", writes=False),
    "oltp_read_write": scenario("oltp_read_write", "oltp_read_write", writes=True, description="14 reads, 4 range"),
    "oltp_read_only": scenario("oltp_read_only", "oltp_read_only", writes=False, description="4 range queries"),
    "oltp_insert": scenario("oltp_insert", "oltp_insert", writes=True),
    "oltp_write_only": scenario("oltp_write_only", "oltp_write_only", writes=True),
    "select_random_points": scenario("select_random_points", "select_random_points", writes=False, tables=1),
    "select_random_ranges": scenario(
        "select_random_ranges", "select_random_ranges", writes=False, tables=1, description="BETWEEN ranges"
    ),
    "tpcc": scenario("tpcc", "lua/tpcc.lua", writes=True, tables=2),
    "ycsb_c": scenario("ycsb_c", "lua/ycsb_c.lua", writes=False, tables=1),
    "ycsb_e": scenario("ycsb_e", "lua/ycsb_e.lua", writes=True, tables=1, description="short ranges: scans"),
    "threadpool_select": scenario("threadpool_select", "oltp_point_select", writes=False, threads="[16, 64]"),
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files: dict[str, str | None] = {
        "pyproject.toml": '[project]\nname = "x"\n\n[tool.dbperf]\nserver = "local-a"\n',
        "servers/local-a.toml": LOCAL_A,
        "servers/conf/a.cnf": CONF,
        **{f"scenarios/{n}.toml": text for n, text in CATALOGUE.items()},
        **{f"scenarios/lua/{n}.lua": f"-- {n}\nfunction event() end\n" for n in ("tpcc", "ycsb_c", "ycsb_e")},
    }
    commit(root, "initial", files)
    git(root, "checkout", "-q", "-b", "change")
    return root


def make_plan(repo: Path, **kwargs: object) -> CiPlan:
    options: dict[str, object] = {"profile": "ci", "default_scenarios": DEFAULTS, "default_server": "local-a"}
    options.update(kwargs)
    return plan(repo, "main", "change", **options)  # type: ignore[arg-type]


def chosen(p: CiPlan) -> dict[str, str]:
    return {c.scenario: c.chosen for c in p.comparisons}


def with_variables(text: str) -> dict[str, str | None]:
    return {"servers/local-a.toml": LOCAL_A + "\n[variables]\n" + text}


def test_a_durability_setting_runs_the_write_scenarios_and_tpcc(repo: Path) -> None:
    commit(repo, "relaxed flushing", {"servers/conf/a.cnf": CONF.replace("= 1", "= 2")})
    why = "durability (innodb_flush_log_at_trx_commit): bites in the write scenarios and tpcc"
    assert chosen(make_plan(repo)) == {"oltp_insert": why, "oltp_write_only": why, "tpcc": why}


def test_a_smaller_buffer_pool_runs_the_read_scenarios_whose_data_does_not_fit(repo: Path) -> None:
    commit(repo, "small pool", with_variables('innodb_buffer_pool_size = "100M"\n'))
    assert chosen(make_plan(repo)) == {  # ycsb's 100,000 rows of 1 KB; 4 x 100,000 sysbench rows
        "ycsb_c": "buffer pool and caches (innodb_buffer_pool_size): its data (about 105 MB) does not fit the "
        "smaller pool (100 MB)",
    }
    commit(repo, "smaller still", with_variables('innodb_buffer_pool_size = "8M"\n'))
    assert list(chosen(make_plan(repo))) == ["ycsb_c", "oltp_read_only"]  # of equal size, the preferred one


def test_a_larger_buffer_pool_says_the_data_fits(repo: Path) -> None:
    commit(repo, "large pool", with_variables('innodb_buffer_pool_size = "1G"\n'))
    assert chosen(make_plan(repo)) == {
        "ycsb_c": "buffer pool and caches (innodb_buffer_pool_size): the largest read data (about 105 MB), which "
        "fits the smaller pool (512 MB): the change may not show",
    }


def test_a_temporary_table_setting_runs_the_range_scenarios(repo: Path) -> None:
    commit(repo, "smaller tmp tables", {"servers/conf/a.cnf": CONF + "tmp-table-size = 1M\n"})
    why = "temporary tables and sorts (tmp_table_size): bites in the scenarios with range queries"
    assert chosen(make_plan(repo)) == {"oltp_read_only": why, "select_random_ranges": why, "ycsb_e": why}


def test_thread_handling_runs_the_thread_sweeps(repo: Path) -> None:
    commit(repo, "thread pool", with_variables('thread_handling = "pool-of-threads"\n'))
    assert chosen(make_plan(repo)) == {
        "threadpool_select": "thread handling (thread_handling): bites in the thread sweeps"
    }


def test_a_binary_log_setting_runs_write_scenarios_and_says_whether_the_log_is_on(repo: Path) -> None:
    commit(repo, "sync the binlog", {"servers/conf/a.cnf": CONF + "sync_binlog = 1\n"})
    off = "binary log (sync_binlog): a write scenario, binary log off on both sides: it should change nothing"
    assert chosen(make_plan(repo)) == {"oltp_insert": off, "oltp_write_only": off}
    commit(repo, "binlog on", {"servers/conf/a.cnf": CONF + "log_bin = binlog\nsync_binlog = 1\n"})
    on = "binary log (log_bin, sync_binlog): a write scenario, binary log on one side"
    assert chosen(make_plan(repo)) == {"oltp_insert": on, "oltp_write_only": on}


def test_a_lua_file_runs_its_scenario(repo: Path) -> None:
    commit(repo, "heavier reads", {"scenarios/lua/ycsb_c.lua": "-- ycsb_c, heavier\nfunction event() end\n"})
    p = make_plan(repo)
    assert chosen(p) == {"ycsb_c": "the changed scenario"}
    assert p.comparisons[0].reason == "script lua/ycsb_c.lua changed"


def test_a_scenario_file_runs_that_scenario(repo: Path) -> None:
    bigger = CATALOGUE["oltp_insert"].replace("table_size = 100000", "table_size = 200000")
    commit(repo, "bigger", {"scenarios/oltp_insert.toml": bigger})
    assert chosen(make_plan(repo)) == {"oltp_insert": "the changed scenario"}


def test_an_optimizer_switch_runs_statements_with_a_choice_of_plan(repo: Path) -> None:
    commit(repo, "no index merge", {"servers/conf/a.cnf": CONF + "optimizer_switch = 'index_merge=off'\n"})
    why = "query plans (optimizer_switch): bites in the statements the optimiser has a choice in"
    assert chosen(make_plan(repo)) == {"oltp_read_only": why, "select_random_points": why, "tpcc": why}


def test_a_per_statement_overhead_runs_the_point_select(repo: Path) -> None:
    commit(repo, "P_S", {"servers/conf/a.cnf": CONF + "performance_schema = ON\n"})
    why = (
        "per-statement overhead (performance_schema): bites in the lightest statement, where a fixed cost per "
        "statement weighs most"
    )
    assert chosen(make_plan(repo)) == {"oltp_point_select": why}


def test_a_setting_of_no_class_and_a_new_build_run_the_default_set(repo: Path) -> None:
    commit(
        repo,
        "no change buffer and durable",
        {"servers/conf/a.cnf": CONF.replace("= 1", "= 2") + "innodb_change_buffering = none\n"},
    )
    found = chosen(make_plan(repo))
    assert list(found) == ["oltp_point_select", "oltp_read_write", "oltp_insert", "oltp_write_only", "tpcc"]
    assert found["oltp_point_select"] == "default set (innodb_change_buffering: in no class of setting)"
    git(repo, "checkout", "-q", "-B", "change", "main")
    commit(repo, "11.8", {"servers/local-a.toml": LOCAL_A.replace('version = "10.11"', 'version = "11.8"')})
    assert chosen(make_plan(repo)) == dict.fromkeys(DEFAULTS, "default set (version: in no class of setting)")


def test_scenarios_named_with_scenario_are_run_as_named_and_never_called_default(repo: Path) -> None:
    commit(repo, "relaxed flushing", {"servers/conf/a.cnf": CONF.replace("= 1", "= 2")})
    p = make_plan(repo, default_scenarios=("oltp_point_select",), named=True)
    assert chosen(p) == {"oltp_point_select": NAMED} and p.scenarios_named
    assert p.notes == (
        "innodb_flush_log_at_trx_commit (durability) also bites in oltp_insert, oltp_write_only, tpcc: not run, "
        "--scenario names oltp_point_select",
    )
    commit(repo, "harness", {"harness/x.py": "X = 1\n"})
    assert set(chosen(make_plan(repo, default_scenarios=("oltp_point_select",), named=True)).values()) == {NAMED}


def test_setting_names_are_matched_as_the_server_reads_them() -> None:
    known = ("innodb_flush_log_at_trx_commit", "innodb_flush_method", "sync_binlog")
    assert canonical("Innodb-Flush-Log-At-Trx-Commit", known) == "innodb_flush_log_at_trx_commit"
    assert canonical("loose-sync-binlog", known) == "sync_binlog"
    assert canonical("innodb_flush_log", known) == "innodb_flush_log_at_trx_commit"  # a unique prefix
    assert canonical("innodb_flush", known) == "innodb_flush"  # ambiguous: left as written


def test_dataset_sizes_follow_the_loader(repo: Path) -> None:
    sizes = {n: dataset_bytes(load_scenario_file(repo / "scenarios" / f"{n}.toml", "ci")) for n in CATALOGUE}
    assert sizes["oltp_read_only"] == 4 * 100000 * 240
    assert sizes["ycsb_c"] == 100000 * 1100
    assert sizes["tpcc"] == 2 * 100000 * 900


def test_every_class_of_the_table_is_defined_documented_and_names_stock_scenarios() -> None:
    from harness.ci.scope import SENSITIVITY
    from harness.ci.targets import CLASSES

    root = Path(__file__).resolve().parents[2]
    assert {row.exercise for row in SENSITIVITY} - {""} == set(CLASSES)
    stock = {p.stem for p in (root / "scenarios").glob("*.toml")}
    assert {n for c in CLASSES.values() for n in c.preferred} <= stock  # a renamed stock scenario breaks this
    docs = (root / "docs" / "pull-request-checks.md").read_text()
    assert all(f"| {name} |" in docs for name in CLASSES)


@pytest.fixture
def stock(tmp_path: Path) -> Path:
    """A git repository holding this project's own servers/ and scenarios/ (the stock catalogue)."""
    import shutil

    root = tmp_path / "stock"
    shutil.copytree(REPO / "servers", root / "servers")
    shutil.copytree(REPO / "scenarios", root / "scenarios", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.dbperf]\nserver = "mariadb-local"\n')
    git(root, "init", "-q", "-b", "main")
    commit(root, "stock")
    git(root, "checkout", "-q", "-b", "change")
    return root


def test_the_stock_durability_change_runs_the_write_scenarios_and_tpcc_on_every_server_of_the_file(
    stock: Path,
) -> None:
    """The issue's example: innodb_flush_log_at_trx_commit = 1 in the shared mariadb.cnf planned 8 comparisons
    (4 servers x oltp_point_select, oltp_read_write); it now runs where fsyncs per commit show."""
    cnf = stock / "servers/conf/mariadb.cnf"
    commit(stock, "durable", {"servers/conf/mariadb.cnf": cnf.read_text() + "innodb_flush_log_at_trx_commit = 1\n"})
    p = plan(stock, "main", "change", profile="ci", default_scenarios=DEFAULTS, default_server="mariadb-local")
    assert {c.scenario for c in p.comparisons} == {"oltp_insert", "oltp_write_only", "tpcc"}
    assert len({c.head_server for c in p.comparisons}) == 4 and len(p.comparisons) == 12
    assert {c.chosen for c in p.comparisons} == {
        "durability (innodb_flush_log_at_trx_commit): bites in the write scenarios and tpcc"
    }


def test_the_stock_ycsb_c_script_change_is_timed_on_its_operation_metrics(
    stock: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from click.testing import CliRunner

    from harness.cli import cli

    lua = stock / "scenarios/lua/ycsb_c.lua"
    commit(stock, "ycsb_c", {"scenarios/lua/ycsb_c.lua": lua.read_text() + "-- changed\n"})
    monkeypatch.chdir(stock)
    for var in ("DBPERF_SERVER", "DBPERF_SCENARIO", "DBPERF_PROFILE", "DBPERF_REPETITIONS", "DBPERF_COST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DBPERF_STORE", str(stock / "none.duckdb"))
    result = CliRunner().invoke(cli, ["ci", "plan", "--base", "main", "--head", "change", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [(c["scenario"], c["chosen"]) for c in doc["comparisons"]] == [("ycsb_c", "the changed scenario")]
    assert not doc["scenarios_named"]
    (left_out,) = doc["left_out"]  # a 2-core runner's timing has no power: said on ycsb_c's own metrics
    assert "no wall-clock metric gates it" not in left_out
    assert "(ops_per_s, noise" in left_out or "(READ.p99_ms, noise" in left_out


def test_an_unknown_named_scenario_is_not_called_default(repo: Path) -> None:
    from harness.errors import ConfigError

    commit(repo, "relaxed flushing", {"servers/conf/a.cnf": CONF.replace("= 1", "= 2")})
    with pytest.raises(ConfigError, match=r"^scenario 'nope' \(named with --scenario\) is not defined at change"):
        make_plan(repo, default_scenarios=("nope",), named=True)
