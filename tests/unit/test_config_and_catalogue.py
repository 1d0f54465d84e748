"""Settings resolution, server and scenario files, derived server variables."""

from pathlib import Path

import pytest

from harness.config.option_table import OPTIONS
from harness.config.scenarios import PROFILES, available_scenarios, load_all, load_scenario
from harness.config.servers import available_servers, load_server
from harness.config.settings import resolve_settings
from harness.config.values import parse_threads
from harness.errors import ConfigError
from harness.model import Scenario
from harness.servers.local import init_failure
from harness.servers.variables import derived_minimums, effective_variables, render_cnf
from harness.sysbench.statements import required_prepared_statements

ROOT = Path(__file__).parents[2]


def _project(tmp_path: Path, table: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.dbperf]\n{table}")
    return tmp_path


def test_precedence_flag_env_pyproject_default(tmp_path: Path):
    root = _project(tmp_path, 'server = "from-file"\nprofile = "ci"\n')
    s = resolve_settings({}, environ={}, root=root)
    assert (s.server, s.profile) == ("from-file", "ci")
    s = resolve_settings({}, environ={"DBPERF_SERVER": "from-env"}, root=root)
    assert s.server == "from-env"
    s = resolve_settings({"server": "from-flag"}, environ={"DBPERF_SERVER": "from-env"}, root=root)
    assert s.server == "from-flag"
    plain = tmp_path / "plain"
    plain.mkdir()
    s = resolve_settings({}, environ={}, root=_project(plain))
    assert s.server == "mariadb-local"
    assert s.store == plain / "results" / "dbperf.duckdb"


def test_unknown_pyproject_key_is_named(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"unknown \[tool\.dbperf\] key"):
        resolve_settings({}, environ={}, root=_project(tmp_path, 'servr = "x"\n'))


@pytest.mark.parametrize("bad", ["a,b", "0", "", "5000", "1;2"])
def test_bad_threads(bad: str):
    with pytest.raises(ConfigError, match="--threads"):
        parse_threads(bad)


def test_threads_and_ints(tmp_path: Path):
    s = resolve_settings({"threads": "1, 4,16", "time": "30"}, environ={}, root=_project(tmp_path))
    assert s.threads == (1, 4, 16) and s.time == 30
    with pytest.raises(ConfigError, match="--time must be a whole number"):
        resolve_settings({"time": "x"}, environ={}, root=_project(tmp_path))


def test_options_have_env_names():
    assert {o.env_var for o in OPTIONS} >= {"DBPERF_STORE", "DBPERF_SERVER", "DBPERF_PROFILE"}


def test_every_server_and_scenario_loads():
    servers = available_servers(ROOT / "servers")
    assert {"mariadb-local", "mariadb-10.11", "mariadb-11.8", "mysql-9.7"} <= set(servers)
    for name in servers:
        load_server(name, ROOT / "servers")
    for profile in PROFILES:
        scenarios = load_all(ROOT / "scenarios", profile)
        assert len(scenarios) == len(list((ROOT / "scenarios").glob("*.toml")))  # every file loads
    full = load_scenario("oltp_read_write", ROOT / "scenarios", "full")
    assert max(full.threads) == 1024
    assert set(available_scenarios(ROOT / "scenarios")) >= {
        "oltp_point_select",
        "oltp_read_only",
        "oltp_read_write",
        "oltp_write_only",
        "oltp_update_index",
        "oltp_update_non_index",
        "oltp_insert",
        "oltp_delete",
        "select_random_points",
        "select_random_ranges",
        "cloud_mix",
    }


def _scenario_file(tmp_path: Path, text: str) -> Path:
    source = (ROOT / "scenarios" / "oltp_point_select.toml").read_text()
    path = tmp_path / "oltp_point_select.toml"
    path.write_text(text if text else source)
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("rand_type =", "rand_typ =", "unknown field 'rand_typ'"),
        ("table_size = 100000", 'table_size = "lots"', "field 'dataset.table_size'"),
        ('script = "oltp_point_select"', 'script = "oltp_point_selec"', "unknown sysbench script 'oltp_point_selec'"),
        ('rand_type = "uniform"', 'rand_type = "zipf"', "field 'rand_type'"),
        ("[profiles.full]", "[profiles.nightly]", "profiles"),
        ("writes = false", 'writes = false\ncheck = "tpc-c"', "unknown post-run check 'tpc-c'; known: tpcc"),
    ],
)
def test_bad_scenario_files_name_file_and_field(tmp_path: Path, old: str, new: str, message: str):
    text = (ROOT / "scenarios" / "oltp_point_select.toml").read_text()
    assert old in text
    path = _scenario_file(tmp_path, text.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        load_scenario("oltp_point_select", tmp_path, "quick")
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_unknown_scenario_and_server_list_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown scenario .nope. in .*; known: .*oltp_point_select"):
        load_scenario("nope", ROOT / "scenarios", "quick")
    with pytest.raises(ConfigError, match=r"unknown server .* in .*; known: .*mariadb-local"):
        load_server("nope", ROOT / "servers")


def test_bad_target_file(tmp_path: Path):
    (tmp_path / "x.toml").write_text('name = "x"\nflavour = "postgres"\nversion = "1"\nprovider = "local"\n')
    with pytest.raises(ConfigError, match="field 'flavour'"):
        load_server("x", tmp_path)
    (tmp_path / "y.toml").write_text('name = "y"\nflavour = "mysql"\nversion = "9"\nprovider = "container"\n')
    with pytest.raises(ConfigError, match="needs 'image'"):
        load_server("y", tmp_path)


def test_definition_hash_changes_with_the_definition(tmp_path: Path):
    text = (ROOT / "scenarios" / "oltp_point_select.toml").read_text()
    _scenario_file(tmp_path, text)
    before = load_scenario("oltp_point_select", tmp_path, "ci").definition_hash
    _scenario_file(tmp_path, text.replace("time_s = 8", "time_s = 9"))
    assert load_scenario("oltp_point_select", tmp_path, "ci").definition_hash != before


@pytest.mark.parametrize("script", ["oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select"])
def test_derived_variables_prevent_1040_and_1461_up_to_1024_threads(script: str):
    scenario = Scenario(
        name="s",
        script=script,
        profile="full",
        threads=(1, 1024),
        warmup_s=1,
        time_s=1,
        repetitions=1,
        tables=8,
        table_size=10,
    )
    derived = derived_minimums(scenario)
    assert derived["max_connections"] > 1024
    assert derived["max_prepared_stmt_count"] >= required_prepared_statements(script, 8, 1024)


def test_effective_variables_only_raise_minimums_and_keep_target_values():
    server = load_server("mariadb-local-threadpool", ROOT / "servers")
    scenario = load_scenario("oltp_read_write", ROOT / "scenarios", "full")
    values = effective_variables(server, scenario)
    assert values["thread_handling"] == "pool-of-threads"
    assert values["character_set_server"] == "utf8mb4"
    assert int(values["max_connections"]) > 1024
    cnf = render_cnf(server, values)
    assert cnf.index("innodb_log_file_size") < cnf.index("thread_handling = pool-of-threads")
    assert "tmpdir" not in cnf


def test_the_servers_own_tmpdir_comes_first_and_a_configured_one_wins(tmp_path):
    server = load_server("mariadb-local", ROOT / "servers")
    lines = render_cnf(server, {}, tmpdir=tmp_path).splitlines()
    assert lines[:3] == ["# generated by dbperf; do not edit", "[mysqld]", f"tmpdir = {tmp_path}"]
    # a tmpdir in the server's variables is written later in the same section: the server reads the last
    configured = render_cnf(server, {"tmpdir": "scratch"}, tmpdir=tmp_path).splitlines()
    assert [ln for ln in configured if ln.startswith("tmpdir")] == [f"tmpdir = {tmp_path}", "tmpdir = scratch"]


def test_tpcc_declares_its_consistency_check():
    tpcc = load_scenario("tpcc", ROOT / "scenarios", "quick")
    assert tpcc.check == "tpcc"
    assert (tpcc.tables, tpcc.table_size) == (1, 10_000)  # quick: 1 warehouse, reduced items
    assert load_scenario("oltp_point_select", ROOT / "scenarios", "quick").check == ""


def test_a_misspelt_scenario_or_server_gets_the_nearest_name():
    with pytest.raises(
        ConfigError, match=r"unknown scenario 'oltp_pont_select' in .* \(did you mean oltp_point_select\?\)"
    ):
        load_scenario("oltp_pont_select", ROOT / "scenarios", "quick")
    with pytest.raises(ConfigError, match=r"\(did you mean mysql-9\.7\?\)"):
        load_server("mysql-97", ROOT / "servers")


def test_a_failed_initialisation_quotes_the_servers_errors_not_the_scripts_advice():
    # captured: two mariadb-install-db runs sharing /tmp, one bootstrap deleting the other's temporary table
    output = (ROOT / "tests" / "data" / "servers" / "mariadb-install-db-shared-tmpdir.txt").read_text()
    assert init_failure(output) == "ERROR: 1051  Unknown table 'mysql.tmp_user_sys' | " + (
        "2026-11-26  7:12:55 0 [ERROR] Aborting"
    )
    assert init_failure("one\ntwo\n") == "one | two"
    assert init_failure("") == "(no output)"
