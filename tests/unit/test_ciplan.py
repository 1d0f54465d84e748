"""The pull-request planner: real temporary git repositories, one kind of change per test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.ci_repos import (
    CONF_A,
    CONF_B,
    CONTAINER_B,
    DEFAULTS,
    LOCAL_A,
    MIX_LUA,
    commit,
    git,
    make_plan,
    scenario_toml,
)

from harness.ci.git import diff_changes, materialise, resolve_ref
from harness.ci.plan import plan
from harness.ci.records import AA_SUFFIX, BASE_SUFFIX, PLAN_FORMAT, CiPlan
from harness.ci.trees import load_side
from harness.errors import ConfigError, GitError, HarnessError


def triples(p: CiPlan) -> list[tuple[str, str, str, str]]:
    return [(c.kind, c.base_server, c.head_server, c.scenario) for c in p.comparisons]


# --- servers -------------------------------------------------------------------------------------


def test_config_file_change_compares_the_targets_that_use_it(repo: Path) -> None:
    commit(repo, "relaxed flushing", {"servers/conf/a.cnf": CONF_A.replace("= 1", "= 2")})
    p = make_plan(repo)
    assert triples(p) == [
        ("server", "local-a@base", "local-a", "point"),
        ("server", "local-a@base", "local-a", "mix"),
    ]
    first = p.comparisons[0]
    assert first.reason == "config file servers/conf/a.cnf: innodb_flush_log_at_trx_commit 1 → 2"
    # a durability setting, and no write scenario in this catalogue: the default set, and the plan says why
    assert first.chosen == "default set (durability: no scenario of the class at head)"
    assert (first.base.server_tree, first.base.scenario_tree) == ("base", "head")
    assert first.base_files == {"server": "base:servers/local-a.toml", "scenario": "head:scenarios/point.toml"}
    assert first.head_files == {"server": "head:servers/local-a.toml", "scenario": "head:scenarios/point.toml"}
    # 2 sides x 6 repetitions x 1 thread count x (2 s warm-up + 10 s + 5 s overhead)
    assert first.estimated_s == 2 * 6 * (2 + 10 + 5)
    assert p.estimated_s == 2 * first.estimated_s
    assert not p.harness_changed
    assert not p.recordings
    assert [(c.status, c.path, c.area) for c in p.changes] == [("M", "servers/conf/a.cnf", "server-file")]


def test_version_and_image_pin_change(repo: Path) -> None:
    bumped = CONTAINER_B.replace('version = "10.11"', 'version = "11.8"').replace(":10.11", ":11.8")
    commit(repo, "MariaDB 11.8", {"servers/container-b.toml": bumped})
    p = make_plan(repo)
    assert triples(p) == [
        ("server", "container-b@base", "container-b", "point"),
        ("server", "container-b@base", "container-b", "mix"),
    ]
    assert p.comparisons[0].reason == "version 10.11 → 11.8; image dbperf/mariadb:10.11 → dbperf/mariadb:11.8"


def test_variable_change_is_described(repo: Path) -> None:
    changed = CONTAINER_B.replace('"1G"', '"256M"') + 'thread_handling = "pool-of-threads"\n'
    commit(repo, "smaller pool", {"servers/container-b.toml": changed})
    (reason,) = {c.reason for c in make_plan(repo).comparisons}
    assert reason == "variables +thread_handling=pool-of-threads, innodb_buffer_pool_size 1G → 256M"


def test_comment_and_description_edits_cost_nothing(repo: Path) -> None:
    edited = LOCAL_A.replace("# the default server", "# the default server, see README").replace(
        "local MariaDB", "local MariaDB from Debian"
    )
    commit(repo, "docs", {"servers/local-a.toml": edited, "README.md": "more\n"})
    p = make_plan(repo)
    assert p.empty
    assert p.notes == (
        "servers/local-a.toml: no effective change (comments, description or file moves only); nothing to compare",
    )


def test_option_file_comments_spacing_and_spelling_cost_nothing(repo: Path) -> None:
    same = "# tuned for the runner\n[mariadbd]\n\ninnodb-flush-log-at-trx-commit=1   # durable\n"
    commit(repo, "reformat", {"servers/conf/a.cnf": same})
    p = make_plan(repo)
    assert p.empty
    assert p.notes[0].startswith("servers/local-a.toml: no effective change")


def test_option_file_diff_lists_settings(repo: Path) -> None:
    cnf = '[mariadbd]\ninnodb_flush_log_at_trx_commit = 2\nthread_handling = "pool-of-threads"\n[client]\nport=1\n'
    commit(repo, "pool", {"servers/conf/a.cnf": cnf})
    (reason,) = {c.reason for c in make_plan(repo).comparisons}
    assert reason == (
        "config file servers/conf/a.cnf: +thread_handling=pool-of-threads, +[client] port=1, "
        "innodb_flush_log_at_trx_commit 1 → 2"
    )


def test_switching_to_another_config_file(repo: Path) -> None:
    commit(repo, "use b.cnf", {"servers/local-a.toml": LOCAL_A.replace("conf/a.cnf", "conf/b.cnf")})
    (reason,) = {c.reason for c in make_plan(repo).comparisons}
    assert (
        reason == "config file servers/conf/a.cnf → servers/conf/b.cnf: +skip_name_resolve, "
        "-innodb_flush_log_at_trx_commit"
    )


def test_moving_a_config_file_without_changing_it_costs_nothing(repo: Path) -> None:
    commit(
        repo,
        "move",
        {
            "servers/conf/a.cnf": None,
            "servers/conf/local/a.cnf": CONF_A,
            "servers/local-a.toml": LOCAL_A.replace("conf/a.cnf", "conf/local/a.cnf"),
        },
    )
    p = make_plan(repo)
    assert p.empty
    assert "servers/local-a.toml: no effective change" in p.notes[0]
    assert ("R", "servers/conf/local/a.cnf", "servers/conf/a.cnf") in [
        (c.status, c.path, c.old_path) for c in p.changes
    ]


def test_renamed_target_compares_old_name_at_base_with_new_name(repo: Path) -> None:
    renamed = CONTAINER_B.replace('name = "container-b"', 'name = "mariadb-11"').replace(
        'version = "10.11"', 'version = "11.8"'
    )
    commit(repo, "rename", {"servers/container-b.toml": None, "servers/mariadb-11.toml": renamed})
    p = make_plan(repo)
    assert triples(p)[0] == ("server", "container-b@base", "mariadb-11", "point")
    assert p.comparisons[0].reason == "renamed from container-b; version 10.11 → 11.8"
    assert not any("removed" in n for n in p.notes)


def test_pure_rename_costs_nothing(repo: Path) -> None:
    renamed = CONTAINER_B.replace('name = "container-b"', 'name = "b"')
    commit(repo, "rename", {"servers/container-b.toml": None, "servers/b.toml": renamed})
    p = make_plan(repo)
    assert p.empty
    assert p.notes == (
        "servers/b.toml: no effective change (renamed from container-b; comments, description "
        "or file moves only); nothing to compare",
    )


def test_copied_target_is_compared_with_its_source(repo: Path) -> None:
    copy = LOCAL_A.replace('name = "local-a"', 'name = "local-a-pool"') + (
        '\n[variables]\nthread_handling = "pool-of-threads"\n'
    )
    commit(repo, "thread pool variant", {"servers/local-a-pool.toml": copy})
    p = make_plan(repo)
    assert triples(p) == [
        ("copied-server", "local-a@base", "local-a-pool", "point"),
        ("copied-server", "local-a@base", "local-a-pool", "mix"),
    ]
    assert p.comparisons[0].reason == "copy of local-a; variables +thread_handling=pool-of-threads"


def test_new_unrelated_target_is_recorded_only(repo: Path) -> None:
    external = (
        'name = "staging"\nflavour = "mysql"\nversion = "8.0"\nprovider = "external"\nhost = "127.0.0.1"\n'
        'port = 3307\nuser = "sbtest"\npassword_env = "STAGING_PASSWORD"\n'
    )
    commit(repo, "staging server", {"servers/staging.toml": external})
    p = make_plan(repo)
    assert p.comparisons == ()
    assert [(r.side.server_label, r.side.scenario, r.side.server_tree) for r in p.recordings] == [
        ("staging", "point", "head"),
        ("staging", "mix", "head"),
    ]
    assert "recorded only" in p.recordings[0].reason
    assert p.recordings[0].estimated_s == 6 * (2 + 10 + 5)


def test_deleted_target_is_a_note(repo: Path) -> None:
    commit(repo, "drop b", {"servers/container-b.toml": None, "servers/conf/b.cnf": None})
    p = make_plan(repo)
    assert p.empty
    assert "servers/container-b.toml: server removed; nothing to run" in p.notes


def test_head_definition_that_does_not_load_is_an_error(repo: Path) -> None:
    commit(repo, "typo", {"servers/local-a.toml": LOCAL_A + "cpu_set = 3\n"})
    with pytest.raises(ConfigError, match=r"servers/local-a.toml: unknown field 'cpu_set'.*\(at head\)"):
        make_plan(repo)


# --- scenarios ----------------------------------------------------------------------------------


def test_scenario_change_compares_old_and_new_definition_on_default_server(repo: Path) -> None:
    commit(repo, "longer", {"scenarios/point.toml": scenario_toml("point", "oltp_point_select", ci_time=20)})
    p = make_plan(repo)
    (c,) = p.comparisons
    assert (c.kind, c.scenario, c.reason) == ("scenario", "point", "time_s 10 → 20")
    assert (c.base.server, c.base.server_tree, c.base.server_label) == ("local-a", "head", "local-a")
    assert (c.base.scenario_tree, c.base.scenario_label) == ("base", "point" + BASE_SUFFIX)
    assert (c.head.scenario_tree, c.head.scenario_label) == ("head", "point")


def test_lua_script_change_compares_the_scenarios_that_run_it(repo: Path) -> None:
    commit(repo, "heavier", {"scenarios/lua/mix.lua": MIX_LUA + "-- two more selects\n"})
    (c,) = make_plan(repo).comparisons
    assert (c.kind, c.scenario, c.reason) == ("scenario", "mix", "script lua/mix.lua changed")
    # the comment's "change under test" names the changed file
    assert [(e.file, e.name, e.scenario) for e in c.edits] == [("scenarios/lua/mix.lua", "contents", "mix")]


def test_lua_module_change_compares_the_scenarios_that_require_it(repo: Path) -> None:
    """A module beside the scripts (ycsb_common.lua, dbperf_ops.lua) counts for every script requiring it."""
    commit(
        repo,
        "a shared module",
        {
            "scenarios/lua/mix.lua": 'local common = require("mix_common")\n' + MIX_LUA,
            "scenarios/lua/mix_common.lua": "return {}\n",
        },
    )
    git(repo, "checkout", "-q", "-b", "module-change")
    commit(repo, "module", {"scenarios/lua/mix_common.lua": "return { heavier = true }\n"})
    p = make_plan(repo, base="change", head="module-change")
    (c,) = p.comparisons
    assert (c.kind, c.scenario, c.reason) == ("scenario", "mix", "script lua/mix.lua changed")
    assert [e.file for e in c.edits] == ["scenarios/lua/mix_common.lua"]
    assert not [n for n in p.notes if "not referenced" in n]


def test_change_to_another_profile_or_judging_only_is_a_note(repo: Path) -> None:
    commit(
        repo,
        "nightly longer, ci more reps",
        {
            "scenarios/point.toml": scenario_toml("point", "oltp_point_select", full_time=120),
            "scenarios/mix.toml": scenario_toml("mix", "lua/mix.lua", reps=10),
        },
    )
    p = make_plan(repo)
    assert p.empty
    assert set(p.notes) == {
        "scenarios/point.toml: no change to the workload of profile 'ci'; the workload is the same, nothing to compare",
        "scenarios/mix.toml: judging settings changed (repetitions 6 → 10); the workload is the same, "
        "nothing to compare",
    }
    full = make_plan(repo, profile="full")
    assert [(c.scenario, c.reason) for c in full.comparisons] == [("point", "time_s 60 → 120")]


def test_new_scenario_is_recorded_on_default_server(repo: Path) -> None:
    commit(repo, "new", {"scenarios/ranges.toml": scenario_toml("ranges", "select_random_ranges")})
    p = make_plan(repo)
    (r,) = p.recordings
    assert (r.side.server, r.side.scenario, r.side.scenario_tree) == ("local-a", "ranges", "head")


def test_unreferenced_files_and_baselines_are_notes(repo: Path) -> None:
    commit(repo, "misc", {"servers/conf/unused.cnf": "[x]\n", "baselines/a.json": "{}\n", "tools/x.sh": "#\n"})
    p = make_plan(repo)
    assert p.empty
    assert p.notes == (
        "servers/conf/unused.cnf: not referenced by any server or scenario; nothing to run",
        "1 baseline file(s) changed: they judge local and nightly runs (dbperf's baseline gate), "
        "not A/B comparisons; nothing to run",
    )


# --- harness, filters, defaults ---------------------------------------------------------------------


def test_harness_change_runs_an_aa_check_of_the_default_set(repo: Path) -> None:
    commit(repo, "faster stats", {"harness/stats.py": "X = 1\n"})
    p = make_plan(repo)
    assert p.harness_changed
    assert triples(p) == [
        ("harness-aa", "local-a" + AA_SUFFIX, "local-a", "point"),
        ("harness-aa", "local-a" + AA_SUFFIX, "local-a", "mix"),
    ]
    c = p.comparisons[0]
    assert c.base.server_tree == c.head.server_tree == "head"
    assert "harness/stats.py" in c.reason


def test_pyproject_counts_as_harness(repo: Path) -> None:
    commit(repo, "deps", {"pyproject.toml": '[project]\nname = "y"\n\n[tool.dbperf]\nserver = "local-a"\n'})
    assert make_plan(repo).harness_changed


def test_scenario_filter(repo: Path) -> None:
    commit(repo, "flush", {"servers/conf/a.cnf": CONF_A + "sync_binlog = 0\n"})
    p = make_plan(repo, only=["po*"])
    assert [c.scenario for c in p.comparisons] == ["point"]
    assert p.notes == ("1 run(s) left out by the scenario filter po*",)


def test_unknown_default_scenario_or_server(repo: Path) -> None:
    commit(repo, "flush", {"servers/conf/a.cnf": CONF_A + "sync_binlog = 0\n"})
    with pytest.raises(ConfigError, match=r"default scenario 'nope' is not defined at change \(known: mix, point\)"):
        make_plan(repo, default_scenarios=["nope"])
    commit(repo, "harness", {"harness/x.py": "\n"})
    with pytest.raises(ConfigError, match="default server 'ghost' is not defined"):
        make_plan(repo, default_server="ghost")


def test_three_dot_diff_ignores_changes_made_on_base_since_the_branch_point(repo: Path) -> None:
    commit(repo, "pr change", {"servers/conf/b.cnf": CONF_B + "sync_binlog = 0\n"})
    git(repo, "checkout", "-q", "main")
    main_tip = commit(repo, "unrelated main change", {"servers/conf/a.cnf": CONF_A + "x = 1\n"})
    p = make_plan(repo)
    assert {c.head_server for c in p.comparisons} == {"container-b"}
    assert p.base_sha != main_tip
    assert p.base_sha == git(repo, "merge-base", "main", "change")


def test_nothing_relevant_changed(repo: Path) -> None:
    commit(repo, "docs", {"README.md": "new\n"})
    p = make_plan(repo)
    assert p.empty
    assert p.notes == ()
    assert p.estimated_s == 0


# --- git errors -----------------------------------------------------------------------------------


def test_unknown_ref(repo: Path) -> None:
    with pytest.raises(GitError, match=r"unknown git ref 'origin/nope' in .*\(fetch it first\)"):
        make_plan(repo, base="origin/nope")
    with pytest.raises(GitError, match="invalid git ref '--output=x'"):
        resolve_ref(repo, "--output=x")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="is not inside a git repository"):
        plan(tmp_path, "main", "HEAD", profile="ci", default_scenarios=DEFAULTS)
    with pytest.raises(GitError, match="is not a directory"):
        plan(tmp_path / "missing", "main", "HEAD", profile="ci", default_scenarios=DEFAULTS)


def test_unrelated_histories(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "other")
    commit(repo, "orphan")
    with pytest.raises(GitError, match="'main' and 'other' share no history"):
        make_plan(repo, head="other")


def test_unknown_profile(repo: Path) -> None:
    with pytest.raises(ConfigError, match="unknown profile 'nightly'"):
        make_plan(repo, profile="nightly")


# --- materialising and loading sides ------------------------------------------------------------------


def test_materialise_writes_the_tree_at_ref_and_load_side_relabels(repo: Path, tmp_path: Path) -> None:
    commit(repo, "pool", {"servers/conf/a.cnf": CONF_A + "thread_handling = pool-of-threads\n"})
    base_root = materialise(repo, "main", tmp_path / "base")
    assert (base_root / "servers/conf/a.cnf").read_text() == CONF_A
    assert (base_root / "scenarios/lua/mix.lua").read_text() == MIX_LUA
    assert sorted(p.name for p in base_root.iterdir()) == ["scenarios", "servers"]
    with pytest.raises(HarnessError, match="already holds servers, scenarios"):
        materialise(repo, "main", base_root)

    p = make_plan(repo)
    trees = {"base": base_root, "head": repo}
    comparison = p.comparisons[1]
    base_server, base_scenario = load_side(comparison.base, trees, "ci")  # type: ignore[arg-type]
    head_server, head_scenario = load_side(comparison.head, trees, "ci")  # type: ignore[arg-type]
    assert (base_server.name, head_server.name) == ("local-a@base", "local-a")
    assert base_server.config_file is not None
    assert head_server.config_file is not None
    assert base_server.config_file.read_text() == CONF_A
    assert "pool-of-threads" in head_server.config_file.read_text()
    assert base_server.identity() != head_server.identity()
    assert base_scenario.name == head_scenario.name == "mix"
    assert base_scenario.source == repo / "scenarios/mix.toml"  # the scenario comes from head on both sides


def test_materialise_a_project_in_a_subfolder(tmp_path: Path) -> None:
    top = tmp_path / "mono"
    (top / "db").mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    commit(top, "init", {"db/servers/local-a.toml": LOCAL_A, "db/servers/conf/a.cnf": CONF_A, "other/x": "1\n"})
    out = materialise(top / "db", "HEAD", tmp_path / "out")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "servers/conf/a.cnf",
        "servers/local-a.toml",
    ]
    commit(top, "change", {"db/servers/conf/a.cnf": CONF_A + "x = 1\n", "other/x": "2\n"})
    changes = diff_changes(top / "db", git(top, "rev-parse", "HEAD~1"), git(top, "rev-parse", "HEAD"))
    assert [(c.path, c.area) for c in changes] == [("servers/conf/a.cnf", "server-file")]


def test_to_json(repo: Path) -> None:
    commit(repo, "flush", {"servers/conf/a.cnf": CONF_A + "sync_binlog = 0\n"})
    doc = json.loads(make_plan(repo).to_json())
    assert doc["format"] == PLAN_FORMAT
    assert (doc["base_ref"], doc["head_ref"], doc["profile"]) == ("main", "change", "ci")
    first = doc["comparisons"][0]
    assert (first["base_server"], first["head_server"]) == ("local-a@base", "local-a")
    assert first["base"]["files"]["server"] == "base:servers/local-a.toml"
    assert doc["changes"] == [
        {"status": "M", "path": "servers/conf/a.cnf", "old_path": None, "similarity": None, "area": "server-file"}
    ]


# --- the command line -------------------------------------------------------------------------------


def test_cli_plan_json_and_table(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import cli

    commit(repo, "flush", {"servers/conf/a.cnf": CONF_A + "sync_binlog = 0\n"})
    monkeypatch.chdir(repo)
    for var in ("DBPERF_SERVER", "DBPERF_SCENARIO", "DBPERF_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    runner = CliRunner()
    result = runner.invoke(
        cli, ["ci", "plan", "--base", "main", "--head", "change", "--scenario", "point,mix", "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["default_server"] == "local-a"  # from [tool.dbperf] in pyproject.toml
    assert [c["head_server"] for c in doc["comparisons"]] == ["local-a", "local-a"]

    result = runner.invoke(cli, ["ci", "plan", "--base", "main", "-s", "point"])
    assert result.exit_code == 0, result.output
    assert "local-a@base" in result.output
    assert "config file servers/conf/a.cnf: +sync_binlog=0" in result.output


def test_cli_plan_unknown_ref_is_a_harness_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import cli

    monkeypatch.chdir(repo)
    result = CliRunner().invoke(cli, ["ci", "plan", "--base", "nope"])
    assert isinstance(result.exception, GitError)


def test_cli_run_rejects_an_unknown_ref(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import cli

    monkeypatch.chdir(repo)
    result = CliRunner().invoke(cli, ["ci", "run", "--base", "no-such-ref", "--out", str(repo / "out")])
    assert isinstance(result.exception, HarnessError)
    assert "no-such-ref" in str(result.exception)


def test_materialise_without_the_tarfile_data_filter(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tarfile

    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    out = materialise(repo, "main", tmp_path / "old-python")
    assert (out / "servers/conf/a.cnf").read_text() == CONF_A
    assert (out / "scenarios/lua/mix.lua").read_text() == MIX_LUA


# --- the change under test, as records (the comment names it; the check run annotates its line) ---------


def test_the_changed_setting_is_a_record_with_its_line_in_the_heads_file(repo: Path) -> None:
    from harness.model import DefinitionChange

    conf = "[mariadbd]\n# flushing\ninnodb_flush_log_at_trx_commit = 2\ninnodb_change_buffering = none\n"
    commit(repo, "relaxed flushing, no change buffer", {"servers/conf/a.cnf": conf})
    p = make_plan(repo)
    expected = (
        DefinitionChange("servers/conf/a.cnf", "innodb_flush_log_at_trx_commit", "1", "2", "changed", 3, "mariadbd",
                         "local-a@base", "local-a"),
        DefinitionChange("servers/conf/a.cnf", "innodb_change_buffering", "", "none", "added", 4, "mariadbd",
                         "local-a@base", "local-a"),
    )  # fmt: skip
    assert p.comparisons[0].edits == expected and p.comparisons[1].edits == expected
    assert p.edits == expected  # once for the plan, though both default scenarios compare it
    assert json.loads(p.to_json())["comparisons"][0]["edits"][0]["line"] == 3
    commit(repo, "back to 1, change buffer back", {"servers/conf/a.cnf": CONF_A})
    (removed,) = [e for e in make_plan(repo, base="HEAD~1", head="HEAD").edits if e.status == "removed"]
    assert (removed.name, removed.old, removed.line) == ("innodb_change_buffering", "none", None)


def test_version_and_variable_changes_are_records_at_their_toml_lines(repo: Path) -> None:
    bumped = CONTAINER_B.replace('version = "10.11"', 'version = "11.8"').replace('"1G"', '"256M"')
    commit(repo, "MariaDB 11.8, smaller pool", {"servers/container-b.toml": bumped})
    edits = {e.name: e for e in make_plan(repo).edits}
    assert set(edits) == {"version", "innodb_buffer_pool_size"}
    version, pool = edits["version"], edits["innodb_buffer_pool_size"]
    assert (version.file, version.old, version.new, version.line) == ("servers/container-b.toml", "10.11", "11.8", 4)
    assert (pool.section, pool.old, pool.new, pool.line) == ("variables", "1G", "256M", 11)
    assert (pool.base, pool.head, pool.scenario) == ("container-b@base", "container-b", "")


def test_a_scenario_change_is_a_record_of_that_scenario(repo: Path) -> None:
    commit(repo, "longer", {"scenarios/point.toml": scenario_toml("point", "oltp_point_select", ci_time=20)})
    (edit,) = make_plan(repo).edits
    assert (edit.file, edit.name, edit.old, edit.new, edit.scenario) == (
        "scenarios/point.toml",
        "time_s",
        "10",
        "20",
        "point",
    )
    assert edit.concerns("local-a", "local-a", "point") and not edit.concerns("local-a", "local-a", "mix")
