"""Thread-pool-like sweeps for the capacity-at-an-SLO tests: paired cases and what they judge to."""

from __future__ import annotations

import math
import random

from harness.judge.gate import PairedCase
from support.factories import run, scenario

SLO = 50.0


def sweep_scenario(slo: float | None = SLO, threads: tuple[int, ...] = (16, 1024)):
    return scenario(
        "threadpool_select",
        threads=threads,
        slo_p95_ms=slo,
        gate_metrics=("qps", "p95_ms", "capacity_clients", "capacity_qps"),
        min_effects={"qps": 0.05, "p95_ms": 0.10, "capacity_clients": 0.20, "capacity_qps": 0.10},
    )


def sweep_cases(pairs: int, head_p95_at_top: float, seed: int, slo: float | None = SLO) -> list[PairedCase]:
    """A thread-pool-like sweep: base p95 at 1024 clients about 150 ms (beyond the SLO), head as given."""
    rng = random.Random(seed)
    scen = sweep_scenario(slo)
    cases = []
    for threads in scen.threads:
        made = []
        for _ in range(pairs):

            def noisy(x: float) -> float:
                return x * math.exp(rng.gauss(0, 0.08))

            if threads == 16:
                base = run(noisy(20000.0), p95=noisy(2.0), threads=16)
                head = run(noisy(19500.0), p95=noisy(2.1), threads=16, server="mariadb-local-threadpool")
            else:
                base = run(noisy(12000.0), p95=noisy(150.0), threads=1024)
                head = run(noisy(19000.0), p95=noisy(head_p95_at_top), threads=1024, server="mariadb-local-threadpool")
            made.append((base, head))
        cases.append(PairedCase(scen, threads, "mariadb-local", "mariadb-local-threadpool", made))
    return cases


def capacity_of(verdicts):
    """The capacity metrics of the one verdict that has curves, and that verdict."""
    (found,) = [v for v in verdicts if v.curves]
    return {m.metric: m for m in found.metrics}, found
