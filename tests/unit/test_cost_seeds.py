"""Cost runs: the warm-up and the measured window run with different fixed seeds, both recorded and both
part of what a cost count is compared by (a measured window that replays the warm-up judged the query
cache on point selects as a 10 % improvement instead of the 50 % regression it is)."""

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.factories import TESTBED

from harness.config.scenarios import load_scenario, load_scenario_file
from harness.config.servers import load_server
from harness.errors import ConfigError
from harness.measure.context import RunContext, build_result
from harness.measure.cost import REBUILD_NOTE, ROLLBACK_NOTE, _read_view_notes, rebuild_statements, run_options
from harness.model import CostSettings
from harness.model.endpoint import Endpoint
from harness.sysbench.command_lines import cost_argv

ROOT = Path(__file__).parents[2]
ENDPOINT = Endpoint("127.0.0.1", 3307, "root", "")


def _scenario(name: str = "oltp_point_select"):
    return load_scenario(name, ROOT / "scenarios", "quick")


def _seeds(argv: list[str]) -> list[str]:
    return [a for a in argv if a.startswith("--rand-seed")]


def test_warmup_and_measured_window_get_their_own_fixed_seeds(tmp_path):
    scenario = _scenario()
    settings = scenario.cost
    assert settings.warmup_seed != settings.seed
    warmup = cost_argv(
        scenario, ENDPOINT, tmp_path / "x.lua", 1, settings.warmup_events, None, seed=settings.warmup_seed
    )
    measured = cost_argv(scenario, ENDPOINT, tmp_path / "x.lua", 1, settings.events, None, seed=settings.seed)
    assert _seeds(warmup) == [f"--rand-seed={settings.warmup_seed}"]
    assert _seeds(measured) == [f"--rand-seed={settings.seed}"]
    # otherwise the same command: only the seed and the number of transactions differ
    differ = {a for a in warmup if a not in measured} | {a for a in measured if a not in warmup}
    assert differ == {
        f"--rand-seed={settings.warmup_seed}",
        f"--rand-seed={settings.seed}",
        f"--events={settings.warmup_events}",
        f"--events={settings.events}",
    }
    # the same seed gives the same command: both sides of a comparison issue the same statements
    assert measured == cost_argv(scenario, ENDPOINT, tmp_path / "x.lua", 1, settings.events, None, seed=settings.seed)


def test_a_scenario_rand_seed_option_does_not_reach_cost_runs(tmp_path):
    scenario = replace(_scenario(), options={"rand-seed": "7", "skip_trx": "on"})
    argv = cost_argv(scenario, ENDPOINT, tmp_path / "x.lua", 1, 10, None, seed=2)
    assert _seeds(argv) == ["--rand-seed=2"] and "--skip_trx=on" in argv
    underscored = replace(scenario, options={"rand_seed": "7"})
    assert _seeds(cost_argv(underscored, ENDPOINT, tmp_path / "x.lua", 1, 10, None, seed=2)) == ["--rand-seed=2"]
    assert not any(
        a.startswith("--rand_seed") for a in cost_argv(underscored, ENDPOINT, tmp_path / "x.lua", 1, 10, None, seed=2)
    )


def test_a_cost_run_records_both_seeds_and_the_warmup_length():
    settings = CostSettings(warmup_events=300, events=900, warmup_seed=5, seed=9)
    options = run_options(settings, ["sysbench", "--events=900", "--rand-seed=9", "run"])
    assert options == {
        "argv": "sysbench --events=900 --rand-seed=9 run",
        "warmup_events": "300",
        "warmup_seed": "5",
        "seed": "9",
    }


def test_one_seed_for_both_windows_is_refused(tmp_path):
    with pytest.raises(ValueError, match="replays the warm-up"):
        CostSettings(warmup_seed=3, seed=3)
    with pytest.raises(ValueError, match="time-based"):
        CostSettings(warmup_seed=0, seed=3)
    text = (ROOT / "scenarios/oltp_point_select.toml").read_text()
    path = tmp_path / "oltp_point_select.toml"
    path.write_text(text.replace("[cost]", "[cost]\nwarmup_seed = 4\nseed = 4", 1))
    with pytest.raises(ConfigError, match="replay the warm-up"):
        load_scenario_file(path, "quick")


def test_the_seeds_are_part_of_what_cost_counts_are_compared_by(tmp_path):
    """A cost run's scenario hash covers the [cost] settings: runs (and baselines) with other seeds or
    event counts are never compared; the profile's durations and the number of runs do not matter."""
    original = (ROOT / "scenarios/oltp_point_select.toml").read_text()
    path = tmp_path / "oltp_point_select.toml"

    def cost_hash(text: str) -> str:
        path.write_text(text)
        return load_scenario_file(path, "quick").cost_hash

    same = cost_hash(original)
    assert cost_hash(original.replace("[cost]", "[cost]\nseed = 3", 1)) != same
    assert cost_hash(original.replace("[cost]", "[cost]\nwarmup_seed = 7", 1)) != same
    assert cost_hash(original.replace("warmup_events = 500", "warmup_events = 501", 1)) != same
    assert cost_hash(original.replace("repetitions = 3", "repetitions = 5", 1)) == same
    assert cost_hash(original.replace("time_s = 3", "time_s = 4", 1)) == same


def test_a_cost_run_is_stored_under_the_cost_hash_a_timing_run_under_the_definition_hash():
    scenario = _scenario()
    assert scenario.cost_hash and scenario.cost_hash != scenario.definition_hash
    server = load_server("mariadb-local", ROOT / "servers")
    started = datetime(2026, 11, 25, tzinfo=UTC)
    for kind, expected in (("cost", scenario.cost_hash), ("time", scenario.definition_hash)):
        ctx = RunContext(server, scenario, 1, 1, TESTBED, "sha", kind=kind)  # type: ignore[arg-type]
        assert build_result(ctx, started, failure="x").scenario_hash == expected


def _loader(path):
    """Load oltp_update_index's text, edited, as a scenario file at ``path``."""

    def load(text: str):
        path.write_text(text)
        return load_scenario_file(path, "quick")

    return load


def test_purge_before_the_window_is_counted_only_where_a_scenario_sets_it(tmp_path):
    """``purge_before_window`` changes the count, so it joins the cost hash; unset, it leaves the hash of
    every scenario (and the baselines recorded by it) as it was before it existed."""
    original = (ROOT / "scenarios/oltp_update_index.toml").read_text()
    load = _loader(tmp_path / "oltp_update_index.toml")

    plain = load(original)
    assert not plain.cost.purge_before_window and plain.cost.read_view
    assert load(original.replace("[cost]", "[cost]\npurge_before_window = false", 1)).cost_hash == plain.cost_hash
    purged = load(original.replace("[cost]", "[cost]\npurge_before_window = true", 1))
    assert purged.cost.purge_before_window and purged.cost_hash != plain.cost_hash
    with pytest.raises(ConfigError, match="purge_before_window needs a read view"):
        load(original.replace("[cost]", "[cost]\npurge_before_window = true\nread_view = false", 1))
    assert load_scenario_file(ROOT / "scenarios/oltp_read_write.toml", "quick").cost.purge_before_window


def test_a_rolled_back_warmup_is_counted_only_where_a_scenario_sets_it(tmp_path):
    """``[cost] warmup = "rollback"`` changes the count, so it joins the cost hash and the run's options;
    ``"commit"`` (the default) leaves every other scenario's hash as it was. Only scripts whose events are
    autocommit statements or one transaction ending in ``COMMIT`` can be rolled back."""
    original = (ROOT / "scenarios/oltp_update_index.toml").read_text()
    load = _loader(tmp_path / "oltp_update_index.toml")

    plain = load(original)
    assert plain.cost.warmup == "commit"
    assert load(original.replace("[cost]", '[cost]\nwarmup = "commit"', 1)).cost_hash == plain.cost_hash
    rolled = load(original.replace("[cost]", '[cost]\nwarmup = "rollback"', 1))
    assert rolled.cost.warmup == "rollback" and rolled.cost_hash != plain.cost_hash
    assert rolled.definition_hash == plain.definition_hash  # timing runs never warm up this way
    with pytest.raises(ConfigError, match="warmup"):
        load(original.replace("[cost]", '[cost]\nwarmup = "replay"', 1))
    with pytest.raises(ValueError, match="warmup must be one of"):
        CostSettings(warmup="replay")
    (tmp_path / "lua").symlink_to(ROOT / "scenarios/lua")
    for name in ("oltp_read_write", "ycsb_e"):  # a prepared COMMIT; a script not measured with it
        other = tmp_path / f"{name}.toml"
        text = (ROOT / f"scenarios/{name}.toml").read_text()
        other.write_text(text.replace("[cost]", '[cost]\nwarmup = "rollback"', 1))
        with pytest.raises(ConfigError, match="autocommit statements or one transaction ending in COMMIT"):
            load_scenario_file(other, "quick")
    settings = CostSettings(warmup_events=300, events=900, warmup_seed=5, seed=9, warmup="rollback")
    assert run_options(settings, ["sysbench", "run"])["warmup"] == "rollback"


def test_a_rolled_back_warmup_adds_one_option_to_the_warmup_command_only(tmp_path):
    scenario = _scenario("oltp_delete")
    plain = cost_argv(scenario, ENDPOINT, tmp_path / "x.lua", 1, 200, None, seed=1)
    rolled = cost_argv(scenario, ENDPOINT, tmp_path / "x.lua", 1, 200, None, seed=1, rollback=True)
    assert [a for a in rolled if a not in plain] == ["--dbperf-rollback=on"]
    assert rolled[-1] == "run"


def test_the_scenarios_that_grow_or_shrink_their_tables_roll_their_warmup_back():
    """oltp_insert, oltp_delete and tpcc drifted with the warm-up's length (the rows it added or removed) and are
    steady with it rolled back (docs/work-vector.md, "Steady state"); a rolled-back warm-up is said in the
    run's notes. ycsb_d rolls back at least 4,800 events: its warm-up writes in 5 % of them, and below about
    128 write transactions (InnoDB's rollback segments) the window's first transaction on each segment
    created its undo log (-2.6 % from 1,200 to 4,800). oltp_delete rolls back at least 1,600: on MySQL 9.7
    (2 x 128 rollback segments) the window still created undo logs after 200 and read pages the warm-up had
    not touched after 800 (-5.3 % from 200 to 800, -0.88 % from 800 to 3,200)."""
    for name in ("oltp_insert", "oltp_delete", "tpcc", "ycsb_d"):
        assert _scenario(name).cost.warmup == "rollback", name
    assert (_scenario("ycsb_d").cost.warmup_events or 0) >= 4800
    assert (_scenario("oltp_delete").cost.warmup_events or 0) >= 1600
    assert _scenario("oltp_update_index").cost.warmup == "commit"
    notes = _read_view_notes(_scenario("oltp_delete").cost)
    assert len(notes) == 2 and "rolled back" in notes[1]
    assert _read_view_notes(CostSettings(warmup="rollback")) == (ROLLBACK_NOTE,)
    assert _read_view_notes(CostSettings()) == ()


def test_a_rebuild_before_the_window_is_counted_only_where_a_scenario_sets_it(tmp_path):
    """``[cost] rebuild_before_window`` changes the count, so it joins the cost hash, the run's options and its
    notes; unset, every other scenario keeps its hash. oltp_read_write and threadpool_read_write set it: on
    MySQL 9.7 their windows reorganised fewer pages the longer the warm-up (docs/work-vector.md)."""
    original = (ROOT / "scenarios/oltp_update_index.toml").read_text()
    load = _loader(tmp_path / "oltp_update_index.toml")

    plain = load(original)
    assert not plain.cost.rebuild_before_window
    assert load(original.replace("[cost]", "[cost]\nrebuild_before_window = false", 1)).cost_hash == plain.cost_hash
    rebuilt = load(original.replace("[cost]", "[cost]\nrebuild_before_window = true", 1))
    assert rebuilt.cost.rebuild_before_window and rebuilt.cost_hash != plain.cost_hash
    assert rebuilt.definition_hash == plain.definition_hash  # timing runs never rebuild
    settings = CostSettings(warmup_events=80, events=50, read_view=True, rebuild_before_window=True)
    assert run_options(settings, ["sysbench", "run"])["rebuild_before_window"] == "true"
    assert "rebuild_before_window" not in run_options(CostSettings(), ["sysbench", "run"])
    assert _read_view_notes(settings)[-1] == REBUILD_NOTE
    assert _read_view_notes(CostSettings(rebuild_before_window=True)) == (REBUILD_NOTE,)
    for name in ("oltp_read_write", "threadpool_read_write", "ycsb_e"):
        assert _scenario(name).cost.rebuild_before_window, name
    assert not _scenario("ycsb_d").cost.rebuild_before_window


def test_the_rebuild_alters_each_table_by_its_quoted_name():
    assert rebuild_statements(["sbtest1", "odd`name"]) == [
        "ALTER TABLE `sbtest1` FORCE",
        "ALTER TABLE `odd``name` FORCE",
    ]
