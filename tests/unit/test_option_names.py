"""Server variable names resolved as the server reads them (issue 35, item 1): every spelling MariaDB or
MySQL would read as an unsafe option is refused as that option, and a name that is no option, or the
start of several, is refused with what it could mean (harness/config/option_names.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from support.ci_repos import CONF_A, commit
from support.factories import scenario as make_scenario

from harness.cli import cli
from harness.config.option_names import OPTION_LISTS, committed_lists, option_names, parse_help, read_list
from harness.config.servers import UNSAFE_VARIABLES, check_variables, load_server_file
from harness.errors import ConfigError
from harness.model import Server
from harness.servers.variables import check_requested, requested_values

FLAVOURS = [("mariadb", "10.11"), ("mysql", "9.7")]

#: written name -> (option, special prefixes), for both flavours' lists
FORMS = {
    "init_fil": ("init_file", ()),  # a prefix
    "init-fi": ("init_file", ()),  # a shorter prefix, dashes
    "init-file": ("init_file", ()),  # dashes for underscores
    "INIT_File": ("init_file", ()),  # case
    "loose_init_file": ("init_file", ("loose",)),
    "loose-init-fil": ("init_file", ("loose",)),
    "maximum-init-file": ("init_file", ("maximum",)),
    "maximum_init_fil": ("init_file", ("maximum",)),
    "skip-local-infil": ("local_infile", ("skip",)),
    "enable-local-infile": ("local_infile", ("enable",)),
    "disable_local_infile": ("local_infile", ("disable",)),
    "loose-skip-grant-tab": ("skip_grant_tables", ("loose",)),  # an option whose own name starts with skip
    "general_log_fil": ("general_log_file", ()),
    "plugin-load-ad": ("plugin_load_add", ()),
}


@pytest.mark.parametrize(("flavour", "version"), FLAVOURS)
@pytest.mark.parametrize("written", sorted(FORMS))
def test_every_spelling_resolves_to_the_option_the_server_sets(flavour: str, version: str, written: str) -> None:
    resolved = option_names(flavour, version).resolve(written, "here")
    assert (resolved.option, resolved.prefixes) == FORMS[written]


@pytest.mark.parametrize(("flavour", "version"), FLAVOURS)
@pytest.mark.parametrize("written", sorted(w for w, (o, _) in FORMS.items() if o in UNSAFE_VARIABLES))
def test_every_spelling_of_an_unsafe_option_is_refused(flavour: str, version: str, written: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_variables({written: "/tmp/x.sql"}, "servers/x.toml", option_names(flavour, version))
    message = str(err.value)
    assert "\n" not in message
    assert f"'{written}' (read as {FORMS[written][0]})" in message or f"'{written}' " in message
    assert UNSAFE_VARIABLES[FORMS[written][0]] in message and "allow_unsafe_variables = true" in message


@pytest.mark.parametrize(("flavour", "version"), FLAVOURS)
def test_a_prefix_of_several_options_is_refused_with_its_candidates(flavour: str, version: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_variables({"init": "x"}, "--head-var", option_names(flavour, version))
    message = str(err.value)
    assert message.startswith("--head-var: server variable 'init' is ambiguous"), message
    assert "init_connect" in message and "init_file" in message and f"({flavour} {version})" in message
    with pytest.raises(ConfigError, match="ambiguous: it is the start of innodb_adaptive_hash_index, "):
        check_variables({"skip-innodb-adaptive-hash": "x"}, "here", option_names(flavour, version))


@pytest.mark.parametrize(("flavour", "version"), FLAVOURS)
@pytest.mark.parametrize("written", ["innodb_buffer_pool_sizes", "xyzzy", "loose_xyzzy", "skip_xyzzy"])
def test_a_name_that_is_no_option_is_refused(flavour: str, version: str, written: str) -> None:
    with pytest.raises(ConfigError, match=f"'{written}' is not an option of {flavour} {version}; check its spelling"):
        check_variables({written: "1"}, "here", option_names(flavour, version))


@pytest.mark.parametrize(("flavour", "version"), FLAVOURS)
def test_full_names_and_safe_prefixes_pass(flavour: str, version: str) -> None:
    options = option_names(flavour, version)
    resolved = check_variables(
        {"innodb_buffer_pool_size": "1G", "max_connection": "500", "skip-name-resolve": "", "log_bin": "binlog"},
        "here",
        options,
    )
    assert {k: r.option for k, r in resolved.items()} == {
        "innodb_buffer_pool_size": "innodb_buffer_pool_size",
        "max_connection": "max_connections",
        "skip-name-resolve": "skip_name_resolve",
        "log_bin": "log_bin",
    }
    with pytest.raises(ConfigError, match=r"'pid_fil' \(read as pid_file\) names a path outside"):
        check_variables({"pid_fil": "/etc/x"}, "here", options)


def test_a_version_without_a_committed_list_says_how_to_make_one() -> None:
    assert option_names("mariadb", "10.11.6").source == "mariadb 10.11"  # a longer pin reads its list
    with pytest.raises(ConfigError, match=r"no option list for mysql 8\.0 .*tools/server_options\.py mysql"):
        option_names("mysql", "8.0")


def test_the_help_parser_reads_both_the_option_lines_and_the_table() -> None:
    text = (
        "  --allow-suspicious-udfs \n                      Allows use of ...\n"
        "  -a, --ansi          Use ANSI SQL syntax\n  --init-file=name    Read SQL commands from this file\n"
        "                      see --not-an-option for more\n\n"
        "Variables (--variable-name=value)\nand boolean options {FALSE|TRUE}  Value (after reading options)\n"
        "------------------------------------------------------------ -------------\n"
        "large-files-support                                          TRUE\ninit-file    (No default value)\n"
        "\nTo see what values a running server is using, type\n"
    )
    assert parse_help(text) == {"allow_suspicious_udfs", "ansi", "init_file", "large_files_support"}


def test_every_committed_list_knows_the_unsafe_options_it_has() -> None:
    """The lists are real (hundreds of options each), and every unsafe option of the catalogue's flavours
    is one a list knows (a name no list knows would never be matched: a stale entry)."""
    lists = committed_lists()
    assert {("mariadb", "10.11"), ("mariadb", "11.8"), ("mysql", "9.7")} <= set(lists)
    names = {key: read_list(path) for key, path in lists.items()}
    assert all(len(n) > 600 for n in names.values())
    everywhere = set().union(*names.values())
    assert not set(UNSAFE_VARIABLES) - everywhere - {"chroot", "init_replica"}
    assert OPTION_LISTS.is_dir()


def _server_file(folder: Path, text: str, cnf: str | None = None) -> Path:
    (folder / "conf").mkdir(exist_ok=True)
    if cnf is not None:
        (folder / "conf" / "x.cnf").write_text(cnf)
    path = folder / "x.toml"
    head = 'name = "x"\nflavour = "mariadb"\nversion = "10.11"\nprovider = "local"\n'
    path.write_text(head + ('config_file = "conf/x.cnf"\n' if cnf is not None else "") + text)
    return path


def test_a_server_file_resolves_its_variables_and_its_my_cnf(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'init_fil' \(read as init_file\) runs the SQL in a file"):
        load_server_file(_server_file(tmp_path, '[variables]\ninit_fil = "/tmp/x.sql"\n'))
    with pytest.raises(ConfigError, match=r"x.cnf sets 'init-fil' \(read as init_file\), which runs the SQL"):
        load_server_file(_server_file(tmp_path, "", "[mysqld]\ninit-fil = /tmp/x.sql\n"))
    with pytest.raises(ConfigError, match=r"x.cnf: server variable 'innodb_buffer_pool' is ambiguous"):
        load_server_file(_server_file(tmp_path, "", "[mariadb-10.11]\ninnodb_buffer_pool = 1G\n"))
    # another program's group: its names are not the server's, but an unsafe one is refused all the same
    server = load_server_file(_server_file(tmp_path, "", "[client]\ndefault-character-set = utf8mb4\n"))
    assert server.name == "x"
    with pytest.raises(ConfigError, match=r"sets 'init-fil' \(read as init_file\)"):
        load_server_file(_server_file(tmp_path, "", "[client]\ninit-fil = /tmp/x.sql\n"))
    # the way out: a trusted file may set them, and a plugin's option the list does not know
    trusted = 'allow_unsafe_variables = true\n[variables]\ninit_fil = "/tmp/x.sql"\nmy_plugin_option = 1\n'
    assert load_server_file(_server_file(tmp_path, trusted)).variables["init_fil"] == "/tmp/x.sql"


def test_head_var_is_resolved_as_the_head_server_reads_it(tmp_path: Path) -> None:
    """``compare --head-var`` refuses a prefix of init_file before anything starts (a ConfigError: exit 2
    and one line from the CLI's handler)."""
    args = ["compare", "--base", "mariadb-local", "--scenario", "oltp_point_select", "--store", str(tmp_path / "s")]
    for var, mention in [
        ("init_fil=/tmp/x.sql", "'init_fil' (read as init_file) runs the SQL"),
        ("init-fi=/tmp/x.sql", "'init-fi' (read as init_file) runs the SQL"),
        ("general_log_fil=/etc/x", "'general_log_fil' (read as general_log_file) names a path outside"),
        ("init=1", "'init' is ambiguous: it is the start of init_connect, init_file"),
    ]:
        out = CliRunner().invoke(cli, [*args, "--head-var", var])
        assert isinstance(out.exception, ConfigError), out.output
        assert mention in str(out.exception) and "\n" not in str(out.exception), out.exception
    assert not (tmp_path / "s").exists()


def _server(variables: dict[str, str], flavour: str = "mariadb", version: str = "10.11") -> Server:
    return Server(name="s", flavour=flavour, version=version, provider="local", variables=variables)


def test_the_derived_minimums_see_a_prefixed_name_as_its_option() -> None:
    """``max_connection = 5`` is max_connections to MariaDB: refused as too low, not topped up beside it."""
    assert requested_values(_server({"max-connection": "5", "loose_max_prepared_stmt": "9"})) == {
        "max_connections": "5",
        "max_prepared_stmt_count": "9",
    }
    with pytest.raises(ConfigError, match="sets max_connections=5, below the"):
        check_requested(_server({"max_connection": "5"}), make_scenario(threads=(8,)))
    # no committed list for the version: names compared as written, as before
    assert requested_values(_server({"max-connections": "5"}, "mysql", "8.0")) == {"max_connections": "5"}


def test_ci_plan_refuses_a_prefix_of_init_file_in_a_pull_requests_my_cnf(repo: Path, monkeypatch) -> None:
    """``dbperf ci plan`` reads the pull request's server files and my.cnf: ``init-fil`` there is refused
    as ``init_file``, before anything runs."""
    monkeypatch.chdir(repo)
    monkeypatch.setenv("DBPERF_STORE", str(repo / "none.duckdb"))
    commit(repo, "sneaky", {"servers/conf/a.cnf": CONF_A + "init-fil = /tmp/x.sql\n"})
    out = CliRunner().invoke(cli, ["ci", "plan", "--base", "main", "--head", "change", "-s", "point", "--json"])
    assert isinstance(out.exception, ConfigError), out.output
    assert "a.cnf sets 'init-fil' (read as init_file), which runs the SQL in a file" in str(out.exception)


def test_a_version_without_a_list_needs_one_unless_the_file_is_trusted(tmp_path: Path) -> None:
    head = 'name = "x"\nflavour = "mysql"\nversion = "8.0"\nprovider = "local"\n'
    path = tmp_path / "x.toml"
    path.write_text(head)
    assert load_server_file(path).variables == {}  # nothing to resolve: no list needed
    path.write_text(head + '[variables]\nmax_connections = "500"\n')
    with pytest.raises(ConfigError, match=r"x\.toml: dbperf has no option list for mysql 8\.0"):
        load_server_file(path)
    path.write_text(head + 'allow_unsafe_variables = true\n[variables]\nmax_connections = "500"\n')
    assert load_server_file(path).variables == {"max_connections": "500"}


def test_a_setting_read_back_is_compared_as_the_server_reports_it() -> None:
    from harness.servers.variables import unmet_settings

    effective = {
        "innodb_buffer_pool_size": "536870912",
        "long_query_time": "1.000000",
        "performance_schema": "ON",
        "optimizer_switch": "index_merge=off,index_merge_union=on",
        "table_open_cache": "10",
        "thread_handling": "pool-of-threads",
    }
    asked = {
        "innodb_buffer_pool_size": "512M",
        "long_query_time": "1",
        "performance_schema": "1",
        "optimizer_switch": "index_merge=off",
        "table_open_cache": "1",
        "thread_handling": "'pool-of-threads'",
        "skip_log_bin": "",  # an option that is no variable: not read back, not compared
    }
    assert unmet_settings(asked, effective) == {"table_open_cache": ("1", "10")}
    assert unmet_settings({"optimizer_switch": "index_merge=on"}, effective) == {
        "optimizer_switch": ("index_merge=on", "index_merge=off,index_merge_union=on")
    }
