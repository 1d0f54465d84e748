"""Builders of records for the tests (no servers): scenarios, runs, cost runs, testbeds."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from harness.model import Metrics, Probes, RunResult, Scenario, Testbed, Totals


def make_testbed(**fields: Any) -> Testbed:
    """The unit tests' machine with ``fields`` changed: the one place the tests build a :class:`Testbed`."""
    values: dict[str, Any] = {
        "cpu_model": "Test CPU",
        "cores": 2,
        "memory_gb": 24.0,
        "kernel": "6.1",
        "disk": "vda (ssd)",
        "sysbench_version": "1.0.20",
        "container_engine": None,
        "hostname": "unit",
    }
    values.update(fields)
    return Testbed(**values)


TESTBED = make_testbed()


def scenario(name: str = "oltp_point_select", **overrides: object) -> Scenario:
    values: dict[str, object] = {
        "name": name,
        "script": name,
        "profile": "ci",
        "threads": (8,),
        "warmup_s": 1,
        "time_s": 10,
        "repetitions": 10,
        "tables": 4,
        "table_size": 1000,
        "definition_hash": "scen-hash",
        "min_effects": {
            "qps": 0.05,
            "tps": 0.05,
            "p95_ms": 0.10,
            "p99_ms": 0.2,
            "cpu_per_txn": 0.05,
            "instr_per_txn": 0.02,
        },
        "gate_metrics": ("qps", "p95_ms", "cpu_per_txn", "instr_per_txn"),
    }
    values.update(overrides)
    return Scenario(**values)  # type: ignore[arg-type]


def run(
    qps: float,
    *,
    p95: float = 1.0,
    cpu: float | None = 20.0,
    instr: float | None = None,
    server: str = "mariadb-local",
    threads: int = 8,
    status: str = "ok",
    config_hash: str = "cfg",
    label: str = "",
) -> RunResult:
    now = datetime(2026, 11, 1, tzinfo=UTC)
    totals = Totals(time_s=10.0, events=int(qps * 10), reads=int(qps * 10), writes=0, other=0, errors=0, reconnects=0)
    ok = status == "ok"
    return RunResult(
        run_id=uuid.uuid4().hex[:16],
        started_at=now,
        finished_at=now,
        status="ok" if ok else "failed",
        failure="" if ok else "server died",
        server=server,
        flavour="mariadb",
        provider="local",
        server_version="10.11.19-MariaDB",
        config_hash=config_hash,
        scenario="oltp_point_select",
        scenario_hash="scen-hash",
        profile="ci",
        script="oltp_point_select",
        threads=threads,
        repetition=1,
        warmup_s=1,
        time_s=10,
        testbed=TESTBED,
        label=label,
        totals=totals if ok else None,
        probes=Probes(),
        metrics=Metrics(
            qps=qps,
            tps=qps,
            p50_ms=p95 / 2,
            p95_ms=p95,
            p99_ms=p95 * 2,
            errors_per_s=0.0,
            reconnects_per_s=0.0,
            cpu_per_txn=cpu,
            instr_per_txn=instr,
        )
        if ok
        else Metrics(),
    )


def cost_run(
    instr: float,
    *,
    functions: dict[str, float] | None = None,
    build_id: str = "build-a",
    requested_hash: str = "req-a",
    tool: str = "valgrind-3.19.0",
    variables: dict[str, str] | None = None,
    events: int = 1000,
    work: dict[str, float] | None = None,
) -> RunResult:
    """A cost run: instructions per transaction (and a profile with ``functions`` per transaction), and
    the work vector per transaction when ``work`` is given."""
    from dataclasses import replace

    from harness.model import CostProfile, FunctionCost

    base = run(1.0, threads=1)
    names = functions or {"mysql_select": instr * 0.6, "0x0000000000d93de0": instr * 0.4}
    profile = CostProfile(
        total_ir=int(instr * events),
        functions=tuple(FunctionCost(name, int(value * events), int(value * events)) for name, value in names.items()),
    )
    totals = Totals(time_s=30.0, events=events, reads=events, writes=0, other=0, errors=0, reconnects=0)
    return replace(
        base,
        kind="cost",
        backend="callgrind",
        tool=tool,
        arch="x86_64",
        build_id=build_id,
        requested_hash=requested_hash,
        variables=variables or {"max_statement_time": "0.000000", "port": "3306"},
        totals=totals,
        metrics=replace(Metrics.cost(totals, instr * events), work=work or {}),
        cost_profile=profile,
    )


def find_nodes(node: Any, key: str, value: str) -> list[dict[str, Any]]:
    """Every dict inside a nested JSON-like value (a Vega spec or scenegraph) whose ``key`` is ``value``."""
    out: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get(key) == value:
            out.append(node)
        for child in node.values():
            out += find_nodes(child, key, value)
    elif isinstance(node, list):
        for child in node:
            out += find_nodes(child, key, value)
    return out


class Said:
    """A reporter that keeps the phases it is told and ignores intervals and finished runs."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def phase(self, message: str) -> None:
        self.lines.append(message)

    def interval(self, label: str, sample: object) -> None:
        del label, sample

    def finished(self, run: RunResult) -> None:
        del run
