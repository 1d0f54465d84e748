"""The forecast against hand-computed values (docs/forecast.md): each side's time per transaction, the
change of single-client TPS, its interval over every corner of the units' ranges, where it holds, and
the pipeline step that attaches it to cost verdicts (with a calibration file, fakes for the runs)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from support.factories import TESTBED, cost_run, run
from support.reports import check

from harness.judge.cost_forecast import (
    SideWork,
    commit_syncs,
    forecast,
    holds_for,
    idle_excess,
    outcome_of,
    sync_unit,
)
from harness.measure.calibration import (
    CalibrationError,
    load_calibration,
    merged,
    pinned,
    read_mode,
    save_calibration,
    spread,
)
from harness.measure.calibration import _loopback as calibration_loopback
from harness.measure.cost import fill_query_cache
from harness.measure.server_units import page_read_unit, server_units
from harness.model import MetricVerdict, RunResult, Verdict
from harness.model.forecast import (
    ONE_CLIENT,
    QUERY_CACHE_CAVEAT,
    QUERY_CACHE_FILLED_CAVEAT,
    QUERY_CACHE_FILLED_NOTE,
    Calibration,
    CalibrationFileError,
    OldCalibrationError,
    ScenarioWork,
    ServerUnits,
    UnitTime,
    query_cache_on,
    read_calibration,
)
from harness.model.outcome import Outcome
from harness.pipeline.forecasts import with_forecasts
from harness.report.forecast_sections import checked_forecast, forecast_comment, forecast_line, forecast_markdown


def _unit(name: str, value: float, low: float, high: float) -> UnitTime:
    return UnitTime(name, value, low, high, 100)


UNITS = ServerUnits(
    server="mariadb-local",
    build_id="build-a",
    version="10.11.19",
    instruction=_unit("instruction", 0.001, 0.0008, 0.0012),  # 1 ns per instruction, 0.8-1.2
    cpu_statement=_unit("cpu_statement", 0.0, 0.0, 0.0),  # none: the hand-computed cases below stay simple
    statement=_unit("statement", 30.0, 25.0, 35.0),
    scenarios=(ScenarioWork("oltp_point_select", 42_000.0, 1.0, 42.0, 72.0),),
)
CALIBRATION = Calibration(
    testbed=TESTBED.fingerprint,
    measured_at="2026-11-28T05:00:00+00:00",
    data_dir="/tmp",
    read_mode="O_DIRECT",
    load="1.00, 1.00, 1.00 before, 1.00, 1.00, 1.00 after",
    io=(
        _unit("fsync", 120.0, 60.0, 240.0),
        _unit("fdatasync", 100.0, 50.0, 200.0),
        _unit("page_read", 50.0, 40.0, 60.0),
        _unit("write", 10.0, 10.0, 10.0),
        _unit("loopback", 20.0, 10.0, 30.0),
    ),
    servers=(UNITS,),
)
BASE = {"instr_per_txn": 100_000.0, "sys_fsync": 0.0, "sys_pwrite": 1.0}
HEAD = {"instr_per_txn": 100_000.0, "sys_fsync": 1.0, "sys_pwrite": 1.0}


def test_time_per_transaction_and_tps_change_by_hand() -> None:
    # base: 100,000 x 0.001 + 1 x 30 + 0 x 100 + 1 x 10 = 140 us; head adds one fdatasync: 240 us
    f = forecast(SideWork(BASE, 1.0, UNITS), SideWork(HEAD, 1.0, UNITS), CALIBRATION)
    assert f.base_us == pytest.approx(140.0)
    assert f.head_us == pytest.approx(240.0)
    assert f.tps_pct == pytest.approx(100 * (140 / 240 - 1))  # -41.67 %
    assert f.delta_us == pytest.approx(100.0)
    assert f.latency_pct == pytest.approx(100 * 100 / 140)


def test_interval_spans_every_corner_and_shares_a_unit_between_sides() -> None:
    f = forecast(SideWork(BASE, 1.0, UNITS), SideWork(HEAD, 1.0, UNITS), CALIBRATION)
    # worst: fdatasync high, instruction and statement low (the same build on both sides): 115 vs 315 us
    assert f.tps_low_pct == pytest.approx(100 * (115 / 315 - 1))  # -63.49 %
    # mildest: fdatasync low, the rest high: 165 vs 215 us
    assert f.tps_high_pct == pytest.approx(100 * (165 / 215 - 1))  # -23.26 %
    assert (f.delta_low_us, f.delta_high_us) == (pytest.approx(50.0), pytest.approx(200.0))
    assert f.outcome == "regression"  # -23 % at best is beyond the 5 % minimum effect


def test_page_reads_fall_back_to_buffer_pool_reads_and_terms_add_up() -> None:
    base = {"instr_per_txn": 3_600_000.0, "bp_reads": 0.0}
    head = {"instr_per_txn": 3_670_000.0, "bp_reads": 20.0}
    f = forecast(SideWork(base, 16.0, UNITS), SideWork(head, 16.0, UNITS), CALIBRATION)
    # base 3,600 + 16 x 30 = 4,080 us; head 3,670 + 480 + 20 x 50 = 5,150 us
    assert (f.base_us, f.head_us) == (pytest.approx(4080.0), pytest.approx(5150.0))
    assert sum(t.base_us for t in f.terms) == pytest.approx(f.base_us)
    assert sum(t.head_us for t in f.terms) == pytest.approx(f.head_us)
    assert {t.component for t in f.terms} == {"instructions", "statements", "page reads"}


def test_different_builds_use_their_own_units() -> None:
    other = dataclasses.replace(
        UNITS, server="mariadb-11.8", build_id="build-b", instruction=_unit("i", 0.002, 0.002, 0.002)
    )
    f = forecast(SideWork(BASE, 1.0, UNITS), SideWork(BASE, 1.0, other), CALIBRATION)
    assert f.head_us - f.base_us == pytest.approx(100.0)  # 100,000 more nanoseconds of CPU


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(-30.0, -10.0, "regression"), (10.0, 30.0, "improvement"), (-4.0, 3.0, "pass"), (-12.0, 1.0, "unknown")],
)
def test_outcome_against_the_minimum_effect(low: float, high: float, expected: str) -> None:
    assert outcome_of(low, high, 5.0) == expected


def test_holds_names_where_per_client_scaling_stops_being_flat() -> None:
    assert holds_for({}) == ONE_CLIENT
    assert holds_for({8: 1000.0}) == ONE_CLIENT  # no single-client point to compare with
    text = holds_for({1: 1000.0, 2: 1950.0, 4: 2400.0, 8: 2500.0})
    assert "to 2 by the stored sweep" in text and "not at 4 clients" in text and "60 %" in text
    assert "flat per client up to 2 clients" in holds_for({1: 1000.0, 2: 1990.0})


def test_spread_mean_batches_and_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]  # batches of 20: means 10.5, 30.5, ..., 90.5
    u = spread("fsync", values, "how")
    assert u.value_us == pytest.approx(50.5)
    assert (u.low_us, u.high_us) == (pytest.approx(10.5), pytest.approx(90.5))
    assert u.p50_us == pytest.approx(50.5)
    assert u.p5_us == pytest.approx(5.95) and u.p95_us == pytest.approx(95.05)
    few = spread("instruction", [3.0, 1.0, 2.0], "runs")  # fewer samples than batches: each its own
    assert (few.low_us, few.value_us, few.high_us) == (1.0, 2.0, 3.0)


def _scenario_runs(
    name: str, statements: int, instr: float, cpus: list[float], walls: list[float]
) -> tuple[list[RunResult], list[RunResult]]:
    """Timing runs of ``name`` (server CPU and wall µs per transaction each) and its cost run."""
    timed = [
        dataclasses.replace(run(1e6 / wall, cpu=cpu, threads=1), scenario=name)
        for cpu, wall in zip(cpus, walls, strict=True)
    ]
    counted = cost_run(instr)
    assert counted.totals is not None
    totals = dataclasses.replace(counted.totals, reads=counted.totals.events * statements)
    return timed, [dataclasses.replace(counted, scenario=name, totals=totals)]


# synthetic units: 20 µs of server CPU per statement, 0.125 ns per instruction, 12 µs outside per statement
A, B, C = 20.0, 0.000125, 12.0


def _cpu(statements: int, instr: float) -> float:
    return statements * A + instr * B


def test_two_scenarios_solve_back_to_known_units() -> None:
    point = _scenario_runs("oltp_point_select", 1, 40_000.0, [_cpu(1, 40_000)] * 2, [_cpu(1, 40_000) + C] * 2)
    ro_cpu = _cpu(16, 3_600_000)  # 320 + 450 = 770 µs
    read_only = _scenario_runs("oltp_read_only", 16, 3_600_000.0, [ro_cpu - 10, ro_cpu + 10], [ro_cpu + 16 * C] * 2)
    units = server_units([point, read_only])
    assert not units.fallback
    assert units.cpu_statement.value_us == pytest.approx(A)
    assert units.instruction.value_us == pytest.approx(B)
    assert units.statement.value_us == pytest.approx(C)
    # the spread: the read-only runs' CPU at 760 and 780 µs, the point selects' at 25 µs both
    low_b, high_b = (ro_cpu - 10 - 16 * 25.0) / (3_600_000 - 16 * 40_000), (ro_cpu + 10 - 16 * 25.0) / 2_960_000
    assert (units.instruction.low_us, units.instruction.high_us) == (pytest.approx(low_b), pytest.approx(high_b))
    assert units.cpu_statement.low_us == pytest.approx(25.0 - 40_000 * high_b)
    assert units.cpu_statement.high_us == pytest.approx(25.0 - 40_000 * low_b)
    # outside per statement: the read-only runs' wall time is fixed, so the CPU's spread moves it
    assert (units.statement.low_us, units.statement.high_us) == (
        pytest.approx((C + C - 10 / 16) / 2),
        pytest.approx((C + C + 10 / 16) / 2),
    )
    assert [w.statements_per_txn for w in units.scenarios] == [1.0, 16.0]


def test_a_negative_solve_falls_back_to_the_first_scenario_and_says_so() -> None:
    # the point select's CPU is high for its instructions: the solve gives a negative CPU per statement
    point = _scenario_runs("oltp_point_select", 1, 40_000.0, [10.0, 10.0], [30.0, 30.0])
    read_only = _scenario_runs("oltp_read_only", 16, 3_600_000.0, [100.0, 100.0], [400.0, 400.0])
    units = server_units([point, read_only])
    assert "solve gave" in units.fallback and "(noise)" in units.fallback and "oltp_point_select" in units.fallback
    assert units.cpu_statement.value_us == 0.0
    assert units.instruction.value_us == pytest.approx(10.0 / 40_000)
    only = server_units([point])
    assert "one scenario" in only.fallback and only.statement.value_us == pytest.approx(20.0)


def _with_reads(runs: list[RunResult], reads: list[float]) -> list[RunResult]:
    return [
        dataclasses.replace(r, metrics=dataclasses.replace(r.metrics, work={"bp_reads": n}))
        for r, n in zip(runs, reads, strict=True)
    ]


def test_page_read_in_the_server_solves_back_to_a_known_time() -> None:
    point = _scenario_runs("oltp_point_select", 1, 40_000.0, [_cpu(1, 40_000)] * 2, [_cpu(1, 40_000) + C] * 2)
    ro_cpu = _cpu(16, 3_600_000)
    read_only = _scenario_runs("oltp_read_only", 16, 3_600_000.0, [ro_cpu] * 2, [ro_cpu + 16 * C] * 2)
    units = server_units([point, read_only])
    # point selects at a small pool: 48,000 instructions, 1.0 and 1.5 page reads of 150 µs each
    rest = A + 48_000 * B + C
    timed, counted = _scenario_runs("oltp_point_select", 1, 48_000.0, [rest] * 2, [rest + 150.0, rest + 225.0])
    unit = page_read_unit(_with_reads(timed, [1.0, 1.5]), counted, units)
    assert isinstance(unit, UnitTime) and unit.name == "page_read_server"
    # the mean wall time less the other units, over the mean reads: 187.5 / 1.25
    assert unit.value_us == pytest.approx(150.0)
    assert (unit.low_us, unit.high_us) == (pytest.approx(150.0), pytest.approx(150.0))
    assert "1.25 reads per transaction" in unit.how
    few = page_read_unit(_with_reads(timed, [0.05, 0.1]), counted, units)
    assert isinstance(few, str) and "too few to time" in few
    fast = _scenario_runs("oltp_point_select", 1, 48_000.0, [rest] * 2, [rest - 5.0, rest - 5.0])[0]
    none = page_read_unit(_with_reads(fast, [1.0, 1.0]), counted, units)
    assert isinstance(none, str) and "no more than the other units give" in none


def test_a_read_only_workload_fills_the_query_cache_before_its_cost_window() -> None:
    cache = {"query_cache_type": "ON", "query_cache_size": "67108864"}
    assert fill_query_cache(False, cache)
    assert not fill_query_cache(True, cache)  # a write workload's window would apply its writes twice
    assert not fill_query_cache(False, {"query_cache_type": "ON", "query_cache_size": "0"})


def test_page_reads_are_priced_at_the_servers_own_read_where_it_was_measured() -> None:
    own = dataclasses.replace(UNITS, page_read=_unit("page_read_server", 120.0, 100.0, 140.0))
    base = {"instr_per_txn": 3_600_000.0, "sys_pread": 0.0}
    head = {"instr_per_txn": 3_600_000.0, "sys_pread": 20.0}
    f = forecast(SideWork(base, 16.0, own), SideWork(head, 16.0, own), CALIBRATION)
    assert f.head_us - f.base_us == pytest.approx(20 * 120.0)  # not the bare read's 50 µs
    assert (f.delta_low_us, f.delta_high_us) == (pytest.approx(2000.0), pytest.approx(2800.0))
    (reads,) = [t for t in f.terms if t.component == "page reads"]
    assert reads.head_unit_us == 120.0 and "page read" not in f.note
    bare = forecast(SideWork(base, 16.0, UNITS), SideWork(head, 16.0, UNITS), CALIBRATION)
    assert bare.head_us - bare.base_us == pytest.approx(20 * 50.0)
    assert "the server's page read" in bare.note and "a bare read used" in bare.note


def test_sync_unit_follows_the_bytes_per_commit() -> None:
    points = [(4096.0, 40.0), (16384.0, 100.0), (65536.0, 300.0)]
    assert sync_unit(None, points) == 40.0  # no redo count: the 4 KiB sync
    assert sync_unit(512.0, points) == 40.0  # held below the smallest size
    assert sync_unit(10240.0, points) == pytest.approx(70.0)  # halfway between 4 and 16 KiB
    assert sync_unit(40960.0, points) == pytest.approx(200.0)
    assert sync_unit(131072.0, points) == pytest.approx(300.0 + 200.0 * 65536 / 49152)  # along the last segment
    assert sync_unit(8192.0, [(4096.0, 40.0)]) == 40.0


def test_forecast_adds_cpu_per_statement_and_a_sized_sync() -> None:
    units = dataclasses.replace(UNITS, cpu_statement=_unit("cpu_statement", 20.0, 20.0, 20.0))
    sized = dataclasses.replace(
        CALIBRATION,
        io=(*CALIBRATION.io, _unit("fdatasync_16k", 220.0, 220.0, 220.0), _unit("fdatasync_64k", 400.0, 400.0, 400.0)),
    )
    head = {**HEAD, "redo_written": 10240.0}  # 10 KiB in one sync: halfway between 100 and 220 µs
    f = forecast(SideWork(BASE, 1.0, units), SideWork(head, 1.0, units), sized)
    # base: 100 (instructions) + 1 x (20 + 30) + 10 (write) = 160 µs; head adds a sync of 160 µs
    assert (f.base_us, f.head_us) == (pytest.approx(160.0), pytest.approx(320.0))
    syncs = next(t for t in f.terms if t.component == "syncs")
    assert syncs.head_unit_us == pytest.approx(160.0) and syncs.base_unit_us == pytest.approx(100.0)
    statements = next(t for t in f.terms if t.component == "statements")
    assert statements.base_unit_us == pytest.approx(50.0)


def test_a_data_file_sync_is_priced_as_an_fsync_and_the_redo_bytes_go_to_the_redo_syncs() -> None:
    units = dataclasses.replace(UNITS, cpu_statement=_unit("cpu_statement", 20.0, 20.0, 20.0))
    sized = dataclasses.replace(
        CALIBRATION,
        io=(*CALIBRATION.io, _unit("fdatasync_16k", 220.0, 220.0, 220.0), _unit("fdatasync_64k", 400.0, 400.0, 400.0)),
    )
    # tpcc at flush 2 -> 1: both sides extend a tablespace every 5th transaction (0.2 syncs in dispatch at
    # flush 2, where commits do not sync the redo log; at flush 1 one redo sync per transaction, and the rest)
    base = {**BASE, "sys_fsync": 0.2, "redo_written": 8192.0}
    head = {**BASE, "sys_fsync": 1.2, "redo_written": 10240.0}
    b, h = SideWork(base, 1.0, units, commit_syncs=False), SideWork(head, 1.0, units, commit_syncs=True)
    assert (b.data_syncs, b.redo_syncs, b.sync_bytes) == (pytest.approx(0.2), pytest.approx(0.0), None)
    assert (h.data_syncs, h.redo_syncs) == (pytest.approx(0.2), pytest.approx(1.0))
    assert h.sync_bytes == pytest.approx(10240.0)  # one redo sync of 10 KiB, not 1.2 of 8.5 KiB
    f = forecast(b, h, sized)
    # base: 160 µs besides its syncs (test above) + 0.2 x 120 (fsync unit) = 184 µs
    # head: 160 + 1.0 x 160 (10 KiB: halfway between 100 and 220 µs) + 0.2 x 120 = 344 µs
    assert (f.base_us, f.head_us) == (pytest.approx(184.0), pytest.approx(344.0))
    syncs = next(t for t in f.terms if t.component == "syncs")
    assert (syncs.base_count, syncs.head_count) == (pytest.approx(0.2), pytest.approx(1.2))
    assert syncs.base_unit_us == pytest.approx(120.0)
    assert syncs.head_unit_us == pytest.approx((160.0 + 0.2 * 120.0) / 1.2)  # the terms still add up
    # where the side's setting is not known, every sync is a redo sync of redo_written / sys_fsync, as before
    plain = SideWork(head, 1.0, units)
    assert (plain.data_syncs, plain.redo_syncs) == (0.0, pytest.approx(1.2))
    assert plain.sync_bytes == pytest.approx(10240.0 / 1.2)
    # fewer syncs than transactions at flush 1 (read-only transactions commit without one): all redo
    assert SideWork({**head, "sys_fsync": 0.9}, 1.0, units, commit_syncs=True).data_syncs == 0.0
    assert (commit_syncs({"innodb_flush_log_at_trx_commit": "2"}), commit_syncs({})) == (False, None)
    assert commit_syncs({"innodb_flush_log_at_trx_commit": "3"}) is True


def test_idle_excess_follows_the_time_since_the_previous_sync() -> None:
    points = [(500.0, 10.0), (2000.0, 100.0), (8000.0, 250.0)]
    assert idle_excess(None, points) == 0.0  # no sync on that side
    assert idle_excess(0.0, points) == 0.0
    assert idle_excess(250.0, points) == pytest.approx(5.0)  # linear from 0 at no idle time
    assert idle_excess(1250.0, points) == pytest.approx(55.0)  # halfway between 0.5 and 2 ms
    assert idle_excess(20_000.0, points) == 250.0  # held at the last point
    assert idle_excess(1000.0, [(500.0, -20.0), (2000.0, 40.0)]) == 0.0  # never below 0
    assert idle_excess(1000.0, []) == 0.0


def test_a_sync_after_a_long_transaction_costs_its_idle_excess() -> None:
    idle = dataclasses.replace(
        CALIBRATION,
        io=(
            *CALIBRATION.io,
            _unit("fdatasync_idle_500us", 110.0, 110.0, 110.0),  # excess 10 µs after 0.5 ms
            _unit("fdatasync_idle_2ms", 400.0, 400.0, 400.0),  # excess 300 µs after 2 ms
            _unit("fdatasync_idle_8ms", 700.0, 700.0, 700.0),  # excess 600 µs after 8 ms
        ),
    )
    long_base = {**BASE, "instr_per_txn": 1_100_000.0}  # 1,100 + 30 + 10 = 1,140 µs besides the syncs
    long_head = {**HEAD, "instr_per_txn": 1_100_000.0}
    f = forecast(SideWork(long_base, 1.0, UNITS), SideWork(long_head, 1.0, UNITS), idle)
    # head: one sync 1,140 µs after the last: 100 + 10 + (300 - 10) x (1,140 - 500) / 1,500 = 233.7 µs
    assert f.base_us == pytest.approx(1140.0)
    assert f.head_us == pytest.approx(1140.0 + 100.0 + 10.0 + 290.0 * 640.0 / 1500.0)
    syncs = next(t for t in f.terms if t.component == "syncs")
    assert syncs.head_unit_us == pytest.approx(100.0 + 10.0 + 290.0 * 640.0 / 1500.0)
    # a short transaction (140 µs besides its sync) waits little: 100 + 10 x 140 / 500 = 102.8 µs
    short = forecast(SideWork(BASE, 1.0, UNITS), SideWork(HEAD, 1.0, UNITS), idle)
    assert short.head_us == pytest.approx(140.0 + 102.8)
    # two syncs per transaction halve the idle time before each: 1,140 / 2 = 570 µs
    twice = forecast(SideWork(long_base, 1.0, UNITS), SideWork({**long_head, "sys_fsync": 2.0}, 1.0, UNITS), idle)
    assert twice.head_us == pytest.approx(1140.0 + 2 * (100.0 + 10.0 + 290.0 * 70.0 / 1500.0))
    # without the idle units (an older calibration), the sync is the back-to-back one
    plain = forecast(SideWork(long_base, 1.0, UNITS), SideWork(long_head, 1.0, UNITS), CALIBRATION)
    assert plain.head_us == pytest.approx(1240.0)
    assert plain.note.startswith("not calibrated: syncs after idle time, ") and "idle" not in f.note


def test_query_cache_on_needs_a_type_and_a_size() -> None:
    assert query_cache_on({"query_cache_type": "ON", "query_cache_size": "67108864"})
    assert query_cache_on({"query_cache_type": "DEMAND", "query_cache_size": "1048576"})
    assert not query_cache_on({"query_cache_type": "OFF", "query_cache_size": "1048576"})  # MariaDB's default
    assert not query_cache_on({"query_cache_type": "ON", "query_cache_size": "0"})
    assert not query_cache_on({})


def test_io_is_measured_on_the_servers_cpus_and_the_thread_is_put_back() -> None:
    """The calibration's syncs and reads run where the server does (docs/forecast.md, "On the server's CPUs");
    the loopback's echo child runs on the server's CPUs too."""
    before = os.sched_getaffinity(0)
    with pinned({0}):
        assert os.sched_getaffinity(0) == {0}
    assert os.sched_getaffinity(0) == before
    with pinned(None):
        assert os.sched_getaffinity(0) == before
    with pytest.raises(CalibrationError, match=r"cannot run on CPUs 4095 .*the server file's cpuset"), pinned({4095}):
        pass
    assert os.sched_getaffinity(0) == before
    assert len(calibration_loopback(20, {0}, {0})) == 20


def test_read_mode_follows_the_server() -> None:
    assert read_mode({"innodb_flush_method": "O_DIRECT"}) == "O_DIRECT"
    assert read_mode({"innodb_flush_method": "fsync"}) == "buffered"


def test_calibration_file_round_trip_keyed_by_testbed(tmp_path: Path) -> None:
    path = save_calibration(tmp_path, CALIBRATION)
    assert path == tmp_path / TESTBED.fingerprint / "calibration.json"
    assert load_calibration(tmp_path, TESTBED.fingerprint) == CALIBRATION
    assert load_calibration(tmp_path, "another-testbed") is None  # a changed testbed has none
    other = dataclasses.replace(UNITS, server="mariadb-11.8", build_id="build-b")
    both = merged(CALIBRATION, dataclasses.replace(CALIBRATION, servers=(other,)))
    assert [s.server for s in both.servers] == ["mariadb-local", "mariadb-11.8"]
    assert both.for_server("mariadb-local+x=1", "build-a") == UNITS  # a --head-var side: the same build


STORED = Path(__file__).parent.parent / "data" / "calibration" / "format2.json"


def test_a_stored_calibration_of_this_format_still_loads() -> None:
    """A calibration.json as `dbperf calibrate` wrote it (tests/data/calibration/README.md) reads into its records."""
    calibration = read_calibration(STORED.read_text(), str(STORED))
    assert (calibration.format, calibration.read_mode, len(calibration.io)) == (2, "O_DIRECT", 10)
    (units,) = calibration.servers
    assert units.server == "mariadb-local" and len(units.scenarios) == 2 and units.run_ids
    assert calibration.unit("fsync") is not None and calibration.unit("fsync").samples == 300  # type: ignore[union-attr]
    assert read_calibration(json.dumps(calibration.document())) == calibration  # what it writes, it reads


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d["io"][0].update(value_us="12.5"), "io[0].value_us: input should be a valid number, got '12.5'"),
        (lambda d: d["io"][1].update(samples=3.5), "io[1].samples: input should be a valid integer"),
        (lambda d: d["servers"][0].pop("statement"), "servers[0].statement: field required"),
        (lambda d: d["servers"][0]["scenarios"][0].update(cpu_us=None), "servers[0].scenarios[0].cpu_us: input"),
        (lambda d: d["io"][0].update(low_us=1e9), "io[0]: value error, unit time fsync: needs 0 <= low"),
        (lambda d: d.update(io={}), "io: input should be a valid array"),
        (lambda d: d.update(format=3), "calibration format 3 is newer than this dbperf reads (2)"),
    ],
)
def test_a_calibration_file_of_the_wrong_shape_is_one_line_naming_the_field(change, said, tmp_path: Path) -> None:
    doc = json.loads(STORED.read_text())
    change(doc)
    path = tmp_path / TESTBED.fingerprint / "calibration.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    with pytest.raises(CalibrationFileError) as caught:
        load_calibration(tmp_path, TESTBED.fingerprint)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and said in message, message
    assert message.endswith("run `dbperf calibrate` again") and "\n" not in message


@pytest.mark.parametrize("text", ["{nope", "[]", '{"format": 2, "io": [NaN]}', "[" * 100])
def test_a_calibration_file_that_is_not_one_is_one_line(text: str) -> None:
    with pytest.raises(CalibrationFileError, match=r"^here: .*run `dbperf calibrate` again$"):
        read_calibration(text, "here")


def _old_format(tmp_path: Path) -> None:
    """A calibration file of format 1 (one scenario's units, no CPU per statement)."""
    doc = CALIBRATION.document()
    server = {k: v for k, v in dataclasses.asdict(UNITS).items() if k not in {"cpu_statement", "scenarios"}}
    doc.update(format=1, servers=[{**server, "scenario": "oltp_point_select", "instr_per_txn": 42_000.0}])
    path = tmp_path / TESTBED.fingerprint / "calibration.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))


def test_an_old_calibration_says_to_measure_it_again(tmp_path: Path) -> None:
    _old_format(tmp_path)
    with pytest.raises(OldCalibrationError) as caught:
        load_calibration(tmp_path, TESTBED.fingerprint)
    message = str(caught.value)
    assert "re-run `dbperf calibrate --server mariadb-local`" in message and "\n" not in message
    shown = with_forecasts(_outcome(), TESTBED, _settings(tmp_path))  # the comparison stands, without forecast
    assert shown.verdicts[0].forecast is None
    (note,) = shown.warnings
    assert note.startswith("no forecast: ") and "re-run `dbperf calibrate --server mariadb-local`" in note


def _verdict(base: dict[str, float], head: dict[str, float], head_name: str) -> Verdict:
    metrics = tuple(
        MetricVerdict(
            metric=m, higher_is_worse=True, outcome="pass", reason="", base_median=base[m], head_median=head[m]
        )
        for m in base
    )
    return Verdict(
        mode="ab",
        scenario="oltp_point_select",
        threads=1,
        base="mariadb-local",
        head=head_name,
        metrics=metrics,
        kind="cost",
    )


def _outcome(head: str = "mariadb-local+x=1", variables: dict[str, str] | None = None) -> Outcome:
    base_run = dataclasses.replace(cost_run(100_000.0, variables=variables), threads=1)
    head_run = dataclasses.replace(base_run, run_id="head", server=head)
    return Outcome((base_run, head_run), (_verdict(BASE, HEAD, head),))


def _settings(tmp_path: Path, *, gate: bool = False):  # type: ignore[no-untyped-def]
    from harness.config.settings import resolve_settings

    settings = resolve_settings({}, root=Path(__file__).resolve().parents[2])
    return dataclasses.replace(settings, baselines_dir=tmp_path, forecast_gate=gate)


def test_pipeline_attaches_forecasts_and_gates_only_when_asked(tmp_path: Path) -> None:
    save_calibration(tmp_path, CALIBRATION)
    shown = with_forecasts(_outcome(), TESTBED, _settings(tmp_path))
    f = shown.verdicts[0].forecast
    assert f is not None and f.tps_pct == pytest.approx(100 * (140 / 240 - 1)) and not f.gating
    assert shown.exit_code == 0  # a forecast decides nothing by default
    gated = with_forecasts(_outcome(), TESTBED, _settings(tmp_path, gate=True))
    assert gated.exit_code == 1


def test_pipeline_without_calibration_says_how_to_get_one(tmp_path: Path) -> None:
    shown = with_forecasts(_outcome(), TESTBED, _settings(tmp_path))
    assert shown.verdicts[0].forecast is None and not shown.verdicts[0].warnings
    (note,) = shown.warnings  # once for the invocation, naming the base's server
    assert "no forecast" in note and "`dbperf calibrate --server mariadb-local` once" in note


def test_renderers_call_it_a_forecast_never_a_measurement(tmp_path: Path) -> None:
    save_calibration(tmp_path, CALIBRATION)
    verdicts = with_forecasts(_outcome(), TESTBED, _settings(tmp_path)).verdicts
    line = forecast_line(verdicts[0])
    assert "forecast" in line and "not measured" in line and "-41.7 %" in line
    md = "\n".join(forecast_markdown(verdicts))
    assert "Forecast at 1 client (not measured)" in md and "| syncs | 0 | 1 | 0.0 | 100.0 |" in md
    assert "-41.7 % [-63.5 %, -23.3 %]" in "\n".join(forecast_comment(verdicts))
    assert forecast_line(dataclasses.replace(verdicts[0], forecast=None)) == ""


def test_a_query_cache_on_is_said_by_the_forecast_and_the_cost_verdict(tmp_path: Path) -> None:
    cache = {"query_cache_type": "ON", "query_cache_size": "67108864"}
    save_calibration(tmp_path, CALIBRATION)
    (verdict,) = with_forecasts(_outcome(variables=cache), TESTBED, _settings(tmp_path)).verdicts
    assert verdict.forecast is not None and verdict.forecast.caveat == QUERY_CACHE_CAVEAT
    assert forecast_line(verdict).endswith(f"; {QUERY_CACHE_CAVEAT}") and "docs/forecast.md" in QUERY_CACHE_CAVEAT
    assert f"cost verdict: {QUERY_CACHE_CAVEAT}" in verdict.warnings
    (plain,) = with_forecasts(_outcome(), TESTBED, _settings(tmp_path)).verdicts
    assert plain.forecast is not None and not plain.forecast.caveat and not plain.warnings
    uncalibrated = with_forecasts(_outcome(variables=cache), TESTBED, _settings(tmp_path / "none")).verdicts[0]
    assert f"cost verdict: {QUERY_CACHE_CAVEAT}" in uncalibrated.warnings  # said without a forecast too
    assert checked_forecast(verdict.forecast, "f").caveat == QUERY_CACHE_CAVEAT  # type: ignore[union-attr]
    forged = dataclasses.replace(verdict.forecast, caveat="<b>anything</b>")
    assert checked_forecast(forged, "f").caveat == ""  # type: ignore[union-attr]
    # cost runs that filled the cache with their window's keys count its hits: said so instead
    filled = _outcome(variables=cache)
    filled = dataclasses.replace(
        filled, runs=tuple(dataclasses.replace(r, notes=(QUERY_CACHE_FILLED_NOTE,)) for r in filled.runs)
    )
    (warm,) = with_forecasts(filled, TESTBED, _settings(tmp_path)).verdicts
    assert warm.forecast is not None and warm.forecast.caveat == QUERY_CACHE_FILLED_CAVEAT
    assert f"cost verdict: {QUERY_CACHE_FILLED_CAVEAT}" in warm.warnings and QUERY_CACHE_CAVEAT not in warm.warnings
    assert checked_forecast(warm.forecast, "f").caveat == QUERY_CACHE_FILLED_CAVEAT  # type: ignore[union-attr]


def test_a_forecast_read_from_an_untrusted_file_keeps_numbers_and_drops_free_text() -> None:
    f = forecast(SideWork(BASE, 1.0, UNITS), SideWork(HEAD, 1.0, UNITS), CALIBRATION, holds="<img src=x> anything")
    read = checked_forecast(f, "verdicts[0].forecast")  # as read_document gives it: types checked, not words
    assert read is not None and read.tps_pct == f.tps_pct and read.terms == f.terms
    assert read.holds == "where it holds: see the full report" and read.calibrated == ""
    assert checked_forecast(dataclasses.replace(f, holds=ONE_CLIENT), "f").holds == ONE_CLIENT  # type: ignore[union-attr]
    assert checked_forecast(None, "f") is None
    forged = dataclasses.replace(f, terms=(dataclasses.replace(f.terms[0], component="<b>x</b>"),))
    with pytest.raises(ValueError, match="terms"):
        checked_forecast(forged, "f")


def test_stored_sweeps_give_tps_by_client_count_of_this_testbed(tmp_path: Path) -> None:
    from harness.pipeline.forecasts import stored_sweeps
    from harness.store import open_store

    store_file = tmp_path / "store.duckdb"
    store = open_store(store_file)
    store.save_many([run(1000.0, threads=1), run(1100.0, threads=1), run(1500.0, threads=2), run(1600.0, threads=4)])
    store.close()
    settings = dataclasses.replace(_settings(tmp_path), store=store_file, profile="ci")
    curve = stored_sweeps(settings, TESTBED)("oltp_point_select", "mariadb-local")
    assert curve == {1: 1050.0, 2: 1500.0, 4: 1600.0}
    assert "not at 2 clients" in holds_for(curve)  # 750 a client is 71 % of one client's 1,050
    assert stored_sweeps(settings, dataclasses.replace(TESTBED, cores=64))("oltp_point_select", "mariadb-local") == {}


def test_the_trusted_comment_shows_the_forecast_read_back_from_verdicts_json(tmp_path: Path) -> None:
    import json as json_module

    from harness.report.comment import render_comment
    from harness.report.trusted_comment import load_document

    save_calibration(tmp_path, CALIBRATION)
    outcome = with_forecasts(_outcome("mariadb-local+flush"), TESTBED, _settings(tmp_path))  # '=' is refused
    text = json_module.dumps(outcome.document(), default=str)
    verdicts = load_document(text)[0].verdicts
    assert verdicts[0].forecast is not None and verdicts[0].forecast.tps_pct == pytest.approx(100 * (140 / 240 - 1))
    assert "**Forecast at 1 client** (from counts; not measured)" in render_comment(check(verdicts))
    broken = text.replace('"tps_pct": ', '"tps_pct": "fast", "was": ', 1)
    with pytest.raises(Exception, match=r"verdicts\[0\]\.forecast\.tps_pct: input should be a valid number"):
        load_document(broken)
    with pytest.raises(Exception, match=r"verdicts\[0\]\.forecast\.tps_pct: input should be a finite number"):
        load_document(text.replace('"tps_pct": ', '"tps_pct": NaN, "was": ', 1))


def test_the_calibration_hint_names_a_server_file_not_a_side_label(tmp_path: Path) -> None:
    """A pull request's base side is `mariadb-local@base`: no server of that name exists to calibrate."""
    outcome = _outcome()
    runs = tuple(dataclasses.replace(r, server="mariadb-local@base") for r in outcome.runs)
    (note,) = with_forecasts(dataclasses.replace(outcome, runs=runs), TESTBED, _settings(tmp_path)).warnings
    assert "`dbperf calibrate --server mariadb-local` once" in note, note
