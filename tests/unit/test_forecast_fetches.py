"""The code a transaction fetches, priced (docs/forecast.md, "The code a statement fetches"): the three-unknown
solve of a server's CPU per statement, per instruction and per simulated instruction-cache miss against
known units, its fallbacks, the forecast's L1i term by hand, and the pipeline's refusal to price runs that
did not count it with a calibration that does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.factories import TESTBED, cost_run, run

from harness.judge.cost_forecast import SideWork, forecast
from harness.measure.calibration import save_calibration
from harness.measure.server_units import server_units, solve_fetches
from harness.model import MetricVerdict, RunResult, Verdict
from harness.model.forecast import ICACHE, ICACHE_TERM, Calibration, ScenarioWork, ServerUnits, UnitTime
from harness.model.outcome import Outcome
from harness.pipeline.forecasts import with_forecasts

# synthetic units: 20 µs of server CPU per statement, 0.1 ns per instruction, 10 ns per L1i miss, 35 µs
# outside per statement
S, P, Q, OUT = 20.0, 0.0001, 0.01, 35.0


def _cpu(statements: float, instr: float, misses: float) -> float:
    return statements * S + instr * P + misses * Q


def _runs(
    name: str, statements: int, instr: float, misses: float | None, cpus: list[float]
) -> tuple[list[RunResult], list[RunResult]]:
    """Timing runs of ``name`` at the given server CPU per transaction (wall: OUT more per statement) and its
    cost run, with its L1i misses per transaction in the work vector (None: not counted)."""
    timed = [
        dataclasses.replace(run(1e6 / (cpu + statements * OUT), cpu=cpu, threads=1), scenario=name) for cpu in cpus
    ]
    counted = cost_run(instr)
    assert counted.totals is not None
    totals = dataclasses.replace(counted.totals, reads=counted.totals.events * statements)
    work = {} if misses is None else {ICACHE: misses}
    metrics = dataclasses.replace(counted.metrics, work=work)
    return timed, [dataclasses.replace(counted, scenario=name, totals=totals, metrics=metrics)]


# the calibration's three scenarios, counts as measured on 2026-11-29 (rounded)
POINT = ("oltp_point_select", 1, 42_400.0, 2_950.0)
READ_ONLY = ("oltp_read_only", 16, 3_585_000.0, 47_500.0)
EMPTY = ("calibration_begin_commit", 2, 12_900.0, 512.0)


def _scenario(spec: tuple[str, int, float, float], noise: float = 0.0, misses: bool = True):  # type: ignore[no-untyped-def]
    name, statements, instr, icache = spec
    cpu = _cpu(statements, instr, icache)
    return _runs(name, statements, instr, icache if misses else None, [cpu - noise, cpu + noise])


def test_three_scenarios_solve_back_to_known_units() -> None:
    units = server_units([_scenario(POINT), _scenario(READ_ONLY, noise=10.0), _scenario(EMPTY)])
    assert not units.fallback and not units.icache_note and units.icache_miss is not None
    assert units.cpu_statement.value_us == pytest.approx(S)
    assert units.instruction.value_us == pytest.approx(P)
    assert units.icache_miss.value_us == pytest.approx(Q)
    assert units.statement.value_us == pytest.approx(OUT)
    assert [w.icache_per_txn for w in units.scenarios] == [2_950.0, 47_500.0, 512.0]
    # the spread: every corner of the read-only runs' 10 µs either way, solved again
    works = units.scenarios
    corners = [solve_fetches(works, [POINT_CPU, ro, EMPTY_CPU]) for ro in (RO_CPU - 10.0, RO_CPU + 10.0)]
    assert units.icache_miss.low_us == pytest.approx(min(c[2] for c in corners))
    assert units.icache_miss.high_us == pytest.approx(max(c[2] for c in corners))
    assert units.icache_miss.low_us < Q < units.icache_miss.high_us
    assert "32 KiB" in units.icache_miss.how and "calibration_begin_commit" in units.icache_miss.how


POINT_CPU, RO_CPU, EMPTY_CPU = (_cpu(*spec[1:]) for spec in (POINT, READ_ONLY, EMPTY))


def test_without_miss_counts_the_first_two_scenarios_solve_and_say_why() -> None:
    units = server_units([_scenario(POINT, misses=False), _scenario(READ_ONLY, misses=False), _scenario(EMPTY)])
    assert units.icache_miss is None and "counted no instruction-cache misses" in units.icache_note
    assert not units.fallback and units.instruction.value_us > 0  # the two-unknown solve, as before
    two = server_units([_scenario(POINT), _scenario(READ_ONLY)])
    assert two.icache_miss is None and two.icache_note == "two scenarios measured"


def test_a_negative_three_scenario_solve_falls_back_and_says_so() -> None:
    # BEGIN and COMMIT far too slow for their code: the solve gives a negative price per miss
    name, statements, instr, icache = EMPTY
    slow = _runs(name, statements, instr, icache, [400.0, 400.0])
    units = server_units([_scenario(POINT), _scenario(READ_ONLY), slow])
    assert units.icache_miss is None
    assert "three-scenario solve gave" in units.icache_note and "(noise)" in units.icache_note


def _u(name: str, value: float) -> UnitTime:
    return UnitTime(name, value, value * 0.9, value * 1.1, 10)


UNITS = ServerUnits(
    server="mariadb-local",
    build_id="build-a",
    version="10.11.19",
    instruction=_u("instruction", P),
    cpu_statement=_u("cpu_statement", S),
    statement=_u("statement", OUT),
    scenarios=(ScenarioWork("oltp_point_select", 42_400.0, 1.0, 62.0, 100.0, 2_950.0),),
    icache_miss=_u("icache_miss", Q),
)
CALIBRATION = Calibration(
    testbed=TESTBED.fingerprint,
    measured_at="2026-11-29T09:00:00+00:00",
    data_dir="/tmp",
    read_mode="O_DIRECT",
    load="1.00, 1.00, 1.00 before, 1.00, 1.00, 1.00 after",
    io=(_u("fdatasync", 100.0), _u("page_read", 50.0), _u("write", 10.0)),
    servers=(UNITS,),
)
# a point select, and one a warm query cache answers: a quarter of the instructions, a ninth of the code
BASE = {"instr_per_txn": 42_400.0, ICACHE: 2_950.0}
HEAD = {"instr_per_txn": 11_200.0, ICACHE: 320.0}


def test_a_change_of_code_fetched_is_priced_by_hand() -> None:
    f = forecast(SideWork(BASE, 1.0, UNITS), SideWork(HEAD, 1.0, UNITS), CALIBRATION)
    # base 4.24 + 29.5 + 20 + 35 = 88.74 µs; head 1.12 + 3.2 + 55 = 59.32 µs
    assert (f.base_us, f.head_us) == (pytest.approx(88.74), pytest.approx(59.32))
    assert f.tps_pct == pytest.approx(100 * (88.74 / 59.32 - 1))  # +49.6 %
    fetched = next(t for t in f.terms if t.component == ICACHE_TERM)
    assert (fetched.base_us, fetched.head_us) == (pytest.approx(29.5), pytest.approx(3.2))
    assert sum(t.base_us for t in f.terms) == pytest.approx(f.base_us)
    assert "code fetched" not in f.note
    # without the unit (a calibration from before it): instructions alone, and the note says so
    old = dataclasses.replace(UNITS, icache_miss=None)
    g = forecast(SideWork(BASE, 1.0, old), SideWork(HEAD, 1.0, old), CALIBRATION)
    assert g.head_us - g.base_us == pytest.approx(-31_200 * P)
    assert "the code fetched (a calibration from before it; one price per instruction used)" in g.note
    assert ICACHE_TERM not in {t.component for t in g.terms}


def _outcome(base: dict[str, float], head: dict[str, float], mode: str = "ab") -> Outcome:
    """A cost comparison whose verdict holds the instructions, and whose runs the L1i misses: only each
    side's first run simulated the caches (harness.measure.cost)."""
    metrics = (
        MetricVerdict(
            metric="instr_per_txn", higher_is_worse=True, outcome="pass", reason="",
            base_median=base["instr_per_txn"], head_median=head["instr_per_txn"],
        ),
    )  # fmt: skip
    head_name = "mariadb-local+qc" if mode == "ab" else "mariadb-local"
    verdict = Verdict(
        mode=mode, scenario="oltp_point_select", threads=1, base="mariadb-local", head=head_name,  # type: ignore[arg-type]
        metrics=metrics, kind="cost",
    )  # fmt: skip

    def side(server: str, work: dict[str, float]) -> list[RunResult]:
        first = dataclasses.replace(cost_run(work["instr_per_txn"]), threads=1, build_id="build-a", server=server)
        counted = {ICACHE: work[ICACHE]} if ICACHE in work else {}
        runs = [dataclasses.replace(first, metrics=dataclasses.replace(first.metrics, work=counted))]
        return [*runs, *(dataclasses.replace(first, run_id=f"{server}-{n}", repetition=n) for n in (2, 3))]

    runs = side(head_name, head) if mode == "baseline" else [*side("mariadb-local", base), *side(head_name, head)]
    return Outcome(tuple(runs), (verdict,))


def _settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    from harness.config.settings import resolve_settings

    save_calibration(tmp_path, CALIBRATION)
    return dataclasses.replace(resolve_settings({}, root=Path(__file__).resolve().parents[2]), baselines_dir=tmp_path)


def test_the_code_fetched_comes_from_each_sides_runs_that_simulated_the_caches(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    priced = with_forecasts(_outcome(BASE, HEAD), TESTBED, settings).verdicts[0]
    assert priced.forecast is not None and priced.forecast.tps_pct == pytest.approx(100 * (88.74 / 59.32 - 1))
    fetched = next(t for t in priced.forecast.terms if t.component == ICACHE_TERM)
    assert (fetched.base_count, fetched.head_count) == (2_950.0, 320.0)
    assert "not seen" not in priced.forecast.note


def test_runs_that_did_not_count_the_code_are_not_priced_by_a_calibration_that_does(tmp_path: Path) -> None:
    counts = {"instr_per_txn": 42_400.0}
    refused = with_forecasts(_outcome(counts, counts), TESTBED, _settings(tmp_path)).verdicts[0]
    assert refused.forecast is None
    assert any("did not count the code they fetched" in w and "run the comparison again" in w for w in refused.warnings)


def test_against_a_baseline_the_heads_code_fetched_stands_for_both_and_is_said(tmp_path: Path) -> None:
    against = with_forecasts(_outcome(BASE, HEAD, mode="baseline"), TESTBED, _settings(tmp_path)).verdicts[0]
    f = against.forecast
    assert f is not None
    fetched = next(t for t in f.terms if t.component == ICACHE_TERM)
    assert fetched.base_count == fetched.head_count == 320.0
    assert "not seen: the baseline's code fetched (a baseline keeps no L1i misses" in f.note
