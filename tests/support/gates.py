"""Cost runs with an oltp_insert work vector, judged by the cost gate (tests/unit/test_work_gate.py and others)."""

from __future__ import annotations

import numpy as np

from harness.judge.gate import PairedCase, judge_pairs
from support.factories import cost_run, scenario

#: One oltp_insert cost run's work vector (flush 2, mariadb-local 10.11), and each component's CV.
INSERT = {
    "sys_total": (7.06, 0.0005),
    "sys_fsync": (0.0, 0.0),
    "sys_pwrite": (1.0, 0.0),
    "sys_pread": (0.0, 0.0),
    "sys_net": (1.002, 0.0),
    "sys_clock": (5.05, 0.002),
    "data_fsyncs": (0.006, 0.3),
    "bp_reads": (0.0, 0.0),
    "bp_read_requests": (8.65, 0.001),
    "handler_writes": (1.0, 0.0),
    "redo_written": (364.4, 0.001),
}


def runs(rng: np.random.Generator, instr: float, n: int = 3, **changes: float):
    out = []
    for _ in range(n):
        work = {}
        for name, (mean, cv) in INSERT.items():
            value = changes.get(name, mean)
            work[name] = max(0.0, value * (1.0 + rng.normal(0.0, cv)))
        out.append(cost_run(instr * (1.0 + rng.normal(0.0, 2e-5)), work=work))
    return out


GATE = ("qps", "p95_ms", "cpu_per_txn", "instr_per_txn")


def sc():
    return scenario("oltp_insert", min_effects={"instr_per_txn": 0.005}, gate_metrics=GATE)


def judge(base, head):
    return judge_pairs([PairedCase(sc(), 1, "base", "head", list(zip(base, head, strict=True)), "cost")])[0]
