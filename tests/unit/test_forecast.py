"""The forecast against hand-computed values (docs/forecast.md): each side's time per transaction, the
change of single-client TPS, its interval over every corner of the units' ranges, where it holds, and
the pipeline step that attaches it to cost verdicts (with a calibration file, fakes for the runs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.factories import TESTBED, cost_run, run
from support.reports import check

from harness.judge.cost_forecast import SideWork, forecast, holds_for, outcome_of
from harness.measure.calibration import (
    load_calibration,
    merged,
    read_mode,
    save_calibration,
    server_units,
    spread,
)
from harness.model import MetricVerdict, Verdict
from harness.model.forecast import ONE_CLIENT, Calibration, ServerUnits, UnitTime
from harness.model.outcome import Outcome
from harness.pipeline.forecasts import with_forecasts
from harness.report.forecast_sections import checked_forecast, forecast_comment, forecast_line, forecast_markdown


def _unit(name: str, value: float, low: float, high: float) -> UnitTime:
    return UnitTime(name, value, low, high, 100)


UNITS = ServerUnits(
    server="mariadb-local",
    build_id="build-a",
    version="10.11.19",
    scenario="oltp_point_select",
    instruction=_unit("instruction", 0.001, 0.0008, 0.0012),  # 1 ns per instruction, 0.8-1.2
    statement=_unit("statement", 30.0, 25.0, 35.0),
    instr_per_txn=42_000.0,
    statements_per_txn=1.0,
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


def test_server_units_from_timing_and_cost_runs() -> None:
    # 10,000 TPS = 100 us per transaction, 40 us of it server CPU; 40,000 instructions, 1 statement
    timed = [run(10_000.0, cpu=40.0, threads=1), run(8_000.0, cpu=50.0, threads=1)]
    counted = [cost_run(40_000.0)]
    units = server_units(timed, counted)
    assert units.instruction.value_us == pytest.approx((0.001 + 0.00125) / 2)
    assert (units.statement.low_us, units.statement.high_us) == (pytest.approx(60.0), pytest.approx(75.0))
    assert units.statements_per_txn == 1.0


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


def _outcome(head: str = "mariadb-local+x=1") -> Outcome:
    base_run = dataclasses.replace(cost_run(100_000.0), threads=1)
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
