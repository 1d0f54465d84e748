"""Capacity at a latency SLO from thread sweeps: the curve rule against hand-computed values, the A/B
verdict on seeded synthetic sweeps with and without a change, the design check counting its tests, and
the renderers (the sweep's range in tables, the p95-against-throughput chart)."""

from __future__ import annotations

import math
import random

import pytest
from support.capacity import SLO, capacity_of, sweep_cases, sweep_scenario
from support.factories import run
from support.reports import check

from harness.judge import capacity
from harness.judge.gate import PairedCase, judge_pairs
from harness.model import SweepPoint
from harness.model.verdict import CAPACITY_METRICS
from harness.pipeline import design_check
from harness.report.capacity_chart import capacity_png, capacity_spec
from harness.report.markdown import render_markdown


def _sweep(*rows: tuple[int, float, float]) -> tuple[SweepPoint, ...]:
    return tuple(SweepPoint(t, q, p) for t, q, p in rows)


def test_clients_and_qps_are_interpolated_where_p95_reaches_the_slo():
    # 16 clients: 10 ms; 64 clients: 100 ms. log(50/10) / log(100/10) = 0.69897 of the way, on log scales
    curve = capacity.curve("base", 1, _sweep((16, 2000.0, 10.0), (64, 1600.0, 100.0)), SLO)
    f = math.log(5) / math.log(10)
    assert curve.reached == "within"
    assert curve.clients_at_slo == pytest.approx(math.exp(math.log(16) + f * math.log(4)))  # 16 x 4^0.699
    assert curve.clients_at_slo == pytest.approx(42.16, abs=0.01)
    assert curve.qps_at_slo == pytest.approx(2000 - f * 400)  # 1720.4 QPS


def test_a_sweep_that_never_reaches_the_slo_gives_lower_bounds():
    curve = capacity.curve("head", 1, _sweep((16, 2000.0, 5.0), (1024, 2100.0, 40.0)), SLO)
    assert (curve.reached, curve.clients_at_slo, curve.qps_at_slo) == ("beyond", 1024.0, 2100.0)


def test_a_sweep_that_misses_the_slo_everywhere_is_extrapolated_below_its_first_count():
    curve = capacity.curve("head", 1, _sweep((16, 2000.0, 100.0), (64, 1900.0, 400.0)), SLO)
    assert curve.reached == "below"
    assert curve.clients_at_slo == pytest.approx(8.0)
    assert curve.qps_at_slo == pytest.approx(1000.0)


def test_the_knee_is_where_throughput_stops_rising_while_p95_climbs():
    sweep = _sweep((1, 500.0, 1.0), (4, 1800.0, 1.5), (16, 1850.0, 5.0), (64, 1870.0, 20.0))
    assert capacity.knee(sweep) == 4
    assert capacity.knee(_sweep((1, 500.0, 1.0), (4, 1800.0, 1.5))) is None


def test_a_bad_slo_is_refused():
    with pytest.raises(ValueError, match="above 0"):
        capacity.curve("base", 1, _sweep((16, 1.0, 1.0)), 0.0)


def test_a_thread_pool_that_keeps_p95_low_at_many_clients_is_a_capacity_improvement():
    metrics, verdict = capacity_of(judge_pairs(sweep_cases(10, head_p95_at_top=30.0, seed=1)))
    assert verdict.threads_label == "16-1024" and verdict.slo_p95_ms == SLO
    assert metrics["capacity_clients"].outcome == "improvement"
    assert metrics["capacity_qps"].outcome == "improvement"
    head = next(w for w in verdict.warnings if "(head)" in w)  # the head is censored at the edge, in every sweep
    assert "met p95 ≤ 50 ms at every client count in 10 of 10 sweeps" in head
    assert "median 1,024 clients" in head and "(at least)" in head
    assert len(verdict.curves) == 20


def test_the_same_sweep_on_both_sides_is_never_a_regression():
    for seed in range(20):
        rng = random.Random(seed)
        scen = sweep_scenario()
        cases = []
        for threads in scen.threads:
            made = []
            for _ in range(8):
                qps, p95 = (20000.0, 2.0) if threads == 16 else (12000.0, 150.0)
                made.append(
                    tuple(
                        run(qps * math.exp(rng.gauss(0, 0.08)), p95=p95 * math.exp(rng.gauss(0, 0.08)), threads=threads)
                        for _ in range(2)
                    )
                )
            cases.append(PairedCase(scen, threads, "a", "b", made))
        metrics, _ = capacity_of(judge_pairs(cases))
        assert all(m.outcome in {"pass", "inconclusive"} for m in metrics.values()), seed


def test_a_head_that_loses_the_slo_is_a_capacity_regression():
    cases = [
        PairedCase(c.scenario, c.threads, c.head, c.base, [(h, b) for b, h in c.pairs])
        for c in sweep_cases(10, head_p95_at_top=30.0, seed=2)
    ]
    metrics, _ = capacity_of(judge_pairs(cases))
    assert metrics["capacity_clients"].outcome == "regression"


def test_no_slo_or_one_client_count_judges_no_capacity():
    assert not [v for v in judge_pairs(sweep_cases(8, head_p95_at_top=30.0, seed=3, slo=None)) if v.curves]
    assert not capacity.judged(sweep_scenario(threads=(16,)))
    assert capacity.judged(sweep_scenario())


def test_the_design_check_counts_the_capacity_tests():
    from harness.model import Server

    server = Server(name="mariadb-local", flavour="mariadb", version="10.11", provider="local")
    scen = sweep_scenario()
    metrics = CAPACITY_METRICS
    planned = [design_check.Planned("threadpool_select capacity", scen, server, "time", "ab", 8, 8, metrics)]
    assert [t.metric for t in design_check.tests_of(planned)] == list(CAPACITY_METRICS)


def test_the_chart_and_the_report_show_the_sweep():
    verdicts = judge_pairs(sweep_cases(4, head_p95_at_top=30.0, seed=4))
    _, verdict = capacity_of(verdicts)
    spec = capacity_spec(verdict)
    assert spec is not None and "SLO p95 50 ms" in str(spec)
    png = capacity_png(verdict)
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    text = render_markdown(check(verdicts, [], title="t"))
    assert "| threadpool_select | 16-1024 | clients at SLO |" in text
    assert capacity_spec(next(v for v in verdicts if not v.curves)) is None


def test_what_was_judged_keeps_the_sweep_apart_from_its_top_thread_count():
    from harness.report.verdicts import judged_lines

    lines = judged_lines(judge_pairs(sweep_cases(10, head_p95_at_top=30.0, seed=1)))
    assert any(line.startswith("threadpool_select 16-1024t: judged by timing clients at SLO") for line in lines)
    assert any("threadpool_select 1024t" in line and "by timing QPS" in line for line in lines), lines
