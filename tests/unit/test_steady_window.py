"""The steady-window rule (harness.judge.steady): a timing window shorter than 5 x its p95 is flagged, and
the latency verdicts of its comparison are INCONCLUSIVE with that reason instead of decided on it; QPS is
still judged. Seeded synthetic pairs whose p95 doubles, so the test alone would call p95 a regression."""

from __future__ import annotations

import math
import random
from dataclasses import replace

from support.factories import run, scenario

from harness.judge import steady
from harness.judge.gate import PairedCase, judge_pairs
from harness.model import RunResult
from harness.report.trusted_comment import _CAUSES


def _windowed(r: RunResult, seconds: float) -> RunResult:
    assert r.totals is not None
    return replace(r, totals=replace(r.totals, time_s=seconds), time_s=seconds)


def _pairs(window_s: float, base_p95: float, seed: int = 7) -> list[tuple[RunResult, RunResult]]:
    rng = random.Random(seed)

    def noisy(x: float) -> float:
        return x * math.exp(rng.gauss(0, 0.03))

    return [
        (
            _windowed(run(noisy(1000.0), p95=noisy(base_p95), threads=128), window_s),
            _windowed(run(noisy(700.0), p95=noisy(base_p95 * 2), threads=128, server="head"), window_s),
        )
        for _ in range(10)
    ]


def _judge(window_s: float, base_p95: float) -> dict[str, object]:
    scen = scenario("threadpool_read_write", threads=(128,), gate_metrics=("qps", "p95_ms"))
    (verdict,) = judge_pairs([PairedCase(scen, 128, "base", "head", _pairs(window_s, base_p95))])
    return {"verdict": verdict, **{m.metric: m for m in verdict.metrics}}


def test_a_window_shorter_than_five_p95s_leaves_latency_undecided_and_says_why():
    found = _judge(window_s=3.0, base_p95=1800.0)  # 3 s window, p95 1.8 s base and 3.6 s head
    p95, p99, qps, verdict = found["p95_ms"], found["p99_ms"], found["qps"], found["verdict"]
    assert p95.outcome == "inconclusive" and p95.cause == steady.CAUSE  # the test alone says regression
    assert "The test alone said" in p95.reason and "regression" in p95.reason.lower()
    assert p99.outcome == "inconclusive" and p99.cause == steady.CAUSE
    assert qps.outcome == "regression" and qps.cause == "regression"  # throughput is still judged
    notes = [w for w in verdict.warnings if "not a steady state" in w]
    assert [n.split(":")[0] for n in notes] == ["base", "head"]
    assert "in 10 of 10 run(s)" in notes[0] and "shorter than 5 x its p95" in notes[0]
    assert steady.CAUSE in _CAUSES  # the trusted comment accepts the cause in verdicts.json


def test_a_window_of_many_p95s_is_decided_as_before():
    found = _judge(window_s=10.0, base_p95=150.0)  # 10 s against 0.3 s: 33 p95s per client
    assert found["p95_ms"].outcome == "regression" and found["p95_ms"].cause == "regression"
    assert not [w for w in found["verdict"].warnings if "steady" in w]


def test_the_boundary_is_five_p95s():
    at = _windowed(run(100.0, p95=2000.0), 10.0)  # exactly 5 x 2 s
    assert not steady.unsteady(at)
    assert steady.unsteady(_windowed(run(100.0, p95=2001.0), 10.0))
    assert not steady.unsteady(run(100.0, p95=1.0, status="failed"))
