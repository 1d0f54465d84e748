"""Seams of the fault handling that need no server: setting refusal, unsaved-run files, owner stamps."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from support.factories import run as _run

from harness import workspace
from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.errors import ConfigError, StoreError
from harness.measure.fallback import Saver, decode, encode, read_unsaved, write_unsaved
from harness.servers.variables import effective_variables, requested_values, size_bytes

ROOT = Path(__file__).parents[2]


def make_run():
    return _run(1000.0)


def _case(threads: int = 8):
    server = load_server("mariadb-local", ROOT / "servers")
    scenario = load_scenario("oltp_point_select", ROOT / "scenarios", "quick").with_overrides(threads=[threads])
    return server, scenario


def test_a_setting_below_the_derived_minimum_is_refused_not_overridden():
    server, scenario = _case(8)
    with pytest.raises(ConfigError, match=r"max_connections=5, below the 72 connections .* at 8 threads .*1040"):
        effective_variables(server.with_variables({"max_connections": "5"}), scenario)
    with pytest.raises(ConfigError, match="'lots', which is not a number"):
        effective_variables(server.with_variables({"max_connections": "lots"}), scenario)
    with pytest.raises(ConfigError, match=r"max_prepared_stmt_count=10, below .*1461"):
        effective_variables(server.with_variables({"max_prepared_stmt_count": "10"}), scenario)


def test_explicit_settings_stand_and_derived_ones_fill_the_rest():
    server, scenario = _case(8)
    derived = effective_variables(server, scenario)
    assert derived["max_connections"] == "72"
    raised = effective_variables(
        server.with_variables({"max_connections": "500", "open_files_limit": "4096"}), scenario
    )
    assert raised["max_connections"] == "500"  # a different configuration, so a different config hash
    assert raised["open_files_limit"] == "4096"  # not needed to avoid an error: the user's value stands


def test_settings_in_the_config_file_count_as_requested(tmp_path):
    server, scenario = _case(8)
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nmax_connections = 1\n[mysqld]\nmax-connections = 6  # too few\nloose-back_log=100\n")
    requested = requested_values(dataclasses.replace(server, config_file=cnf))
    assert requested["max_connections"] == "6" and requested["back_log"] == "100"
    with pytest.raises(ConfigError, match=r"\(my.cnf\) sets max_connections=6"):
        effective_variables(dataclasses.replace(server, config_file=cnf), scenario)


def test_size_bytes():
    assert size_bytes("256M") == 256 * 2**20
    assert size_bytes("72") == 72
    assert size_bytes("1g") == 2**30
    assert size_bytes("lots") is None


def test_unsaved_run_round_trip_is_lossless(tmp_path):
    run = make_run()
    assert decode(encode(run)) == run
    (tmp_path / "a-file").write_text("")  # a folder that cannot be made (even by root)
    path = write_unsaved(run, [tmp_path / "a-file" / "unsaved", tmp_path / "ok"])
    assert path == tmp_path / "ok" / f"{run.run_id}.json"
    assert read_unsaved(path) == run


def test_unsaved_file_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe garbage")
    with pytest.raises(StoreError, match="cannot read"):
        read_unsaved(bad)
    bad.write_text('{"format": "something-else"}')
    with pytest.raises(StoreError, match="not an unsaved-run file"):
        read_unsaved(bad)


def test_saver_falls_back_and_reports(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    said: list[str] = []

    def full(run):
        raise StoreError("cannot write the Parquet folder X: [Errno 28] No space left on device")

    saver = Saver(full, tmp_path / "store" / "dbperf.duckdb", said.append)
    run = make_run()
    saver(run)
    (kept,) = saver.unsaved.files
    assert kept == tmp_path / "data" / "dbperf" / "unsaved" / f"{run.run_id}.json"
    line = saver.unsaved.message(tmp_path / "store" / "dbperf.duckdb")
    assert "No space left on device" in line and f"dbperf import unsaved {kept}" in line
    assert "\n" not in line


def test_a_save_that_never_returns_is_given_up_by_the_clock_and_not_tried_again(tmp_path, monkeypatch):
    import threading

    from harness.measure import fallback

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(fallback, "ABANDONED", [])
    monkeypatch.setattr(fallback, "WAIT_NOTICE_S", 0.05)
    frozen = threading.Event()  # a catalog that never answers, until the test ends
    calls: list[str] = []

    def hangs(run):
        calls.append(run.run_id)
        frozen.wait(30)

    said: list[str] = []
    saver = Saver(hangs, "ducklake:postgres:dbname=x data_path=/x", said.append, limit_s=0.3)
    try:
        first, second = make_run(), dataclasses.replace(make_run(), run_id="second")
        saver(first)
        saver(second)
    finally:
        frozen.set()
    assert calls == [first.run_id]  # the second run went straight to a file
    assert len(saver.unsaved.files) == 2 and fallback.ABANDONED
    assert any("waiting for the store" in line and "up to 0.3 s" in line for line in said), said
    line = saver.unsaved.message("ducklake:...")
    assert "did not answer for 0.3 s" in line and "dbperf import unsaved" in line, line


def test_call_within_returns_the_value_or_the_error_of_a_quick_action():
    from harness.measure.fallback import call_within

    assert call_within(lambda: 42, 5, "answer") == 42
    with pytest.raises(StoreError, match="cannot save"):
        call_within(lambda: (_ for _ in ()).throw(StoreError("cannot save")), 5, "save")


def test_owner_stamps_tell_live_from_dead(tmp_path):
    me = workspace.Owner.me()
    assert me.alive()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = workspace.Owner(child.pid, 1)
    assert not dead.alive()
    recycled = workspace.Owner(me.pid, me.start + 1)  # same pid, another start: not the owner
    assert not recycled.alive()
    assert workspace.stamped_owner(f"tmp-abc123-{me.stamp}-x1y2") == me
    assert workspace.stamped_owner("tmp-abc123-x1y2") is None


def test_sweep_removes_dead_owners_only(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    dead = tmp_path / f"dbperf-{child.pid}-12345"
    (dead / "datadir-x").mkdir(parents=True)
    live = tmp_path / f"dbperf-{workspace.Owner.me().stamp}"
    live.mkdir()
    other = tmp_path / "dbperf-local-abc"  # an older layout, not ours to judge here
    other.mkdir()
    cache = tmp_path / "cache"
    stale = cache / "snapshots" / f"tmp-k-{child.pid}-12345-zz"
    stale.mkdir(parents=True)
    removed = workspace.sweep(tmp_path, cache)
    assert not dead.exists() and not stale.exists()
    assert live.exists() and other.exists()
    assert len(removed) == 2
    live.rmdir()
