"""Verdicts and runs for the report tests, and the golden-file check (DBPERF_UPDATE_GOLDEN=1 rewrites)."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import model
from harness.model import (
    DefinitionChange,
    LatencyBucket,
    Metrics,
    MetricVerdict,
    OperationStats,
    RunResult,
    Totals,
    Verdict,
)
from harness.model.operation_stats import bucket_index, bucket_value
from harness.model.query_plan import PlanCheck
from harness.model.verdict_document import Check, VerdictDocument
from support.factories import make_testbed

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

TESTBED = make_testbed(
    cpu_model="AMD EPYC 7763 64-Core",
    cores=16,
    memory_gb=62.7,
    kernel="6.1.0-28-amd64",
    disk="nvme0n1 (ssd)",
    container_engine="docker 26.1.5",
    hostname="bench-01",
)

VERSIONS = {"mariadb-10.11": "10.11.6-MariaDB", "mariadb-11.8": "11.8.1-MariaDB"}


def make_run(
    index: int,
    *,
    server: str = "mariadb-11.8",
    scenario: str = "oltp_read_only",
    threads: int = 8,
    qps: float = 20000.0,
    p95: float = 4.5,
    failure: str = "",
) -> RunResult:
    started = T0 + timedelta(minutes=index)
    common: dict[str, object] = {
        "run_id": f"run-{server}-{scenario}-{threads}-{index:02d}",
        "started_at": started,
        "finished_at": started + timedelta(seconds=40),
        "server": server,
        "flavour": "mariadb",
        "provider": "container",
        "server_version": VERSIONS.get(server, "9.7.0"),
        "config_hash": f"cfg-{server[-4:]}",
        "scenario": scenario,
        "scenario_hash": "5ce7a1",
        "profile": "ci",
        "script": scenario,
        "threads": threads,
        "repetition": index,
        "warmup_s": 5.0,
        "time_s": 30.0,
        "testbed": TESTBED,
        "git_sha": "4f2a9c1e0b7d3a5f6e8c9d0a1b2c3d4e5f6a7b8c",
        "group_id": "pr-123",
    }
    if failure:
        return RunResult(status="failed", failure=failure, **common)  # type: ignore[arg-type]
    totals = Totals(30.0, int(qps * 30 / 14), int(qps * 30 * 0.8), 0, int(qps * 30 * 0.2), 0, 0)
    metrics = Metrics(
        qps=qps, tps=qps / 14, p50_ms=p95 / 2, p95_ms=p95, p99_ms=p95 * 1.5, errors_per_s=0.0,
        reconnects_per_s=0.0, cpu_per_txn=210.0 + index, instr_per_txn=1_234_000.0 + 1000 * index,
    )  # fmt: skip
    return RunResult(status="ok", totals=totals, metrics=metrics, **common)  # type: ignore[arg-type]


def runs_for(*servers: str, threads: int = 8, scenario: str = "oltp_read_only") -> list[RunResult]:
    runs = []
    for server in servers:
        base = 20000.0 if server == "mariadb-10.11" else 18500.0
        runs += [
            make_run(i, server=server, threads=threads, scenario=scenario, qps=base + 150 * i, p95=4.5 + 0.05 * i)
            for i in range(5)
        ]
    return runs


#: The short clauses harness.judge.classify writes for each outcome (its own tests check the wording).
SUMMARIES = {
    "regression": "{worse} beyond the {effect} minimum effect (adjusted p = {p})",
    "improvement": "{better} beyond the {effect} minimum effect (adjusted p = {p})",
    "pass": "rules out a {worse} of {effect} or more",
    "inconclusive": "cannot rule out a {worse} of {effect}",
}


def mv(metric: str, outcome: str, estimate: float, low: float, high: float, **kw: object) -> MetricVerdict:
    higher_is_worse = model.METRICS[metric]
    effect = {"qps": 5.0, "p95_ms": 10.0, "cpu_per_txn": 5.0, "instr_per_txn": 2.0}.get(metric, 5.0)
    base = {"qps": 20150.0, "p95_ms": 4.6, "cpu_per_txn": 212.0, "instr_per_txn": 1_236_000.0}[metric]
    values: dict[str, object] = {
        "metric": metric,
        "higher_is_worse": higher_is_worse,
        "outcome": outcome,
        "reason": f"{outcome.capitalize()}: {estimate:+.1f} % (the 95.0 % interval {low:+.1f} % to {high:+.1f} %)",
        "base_median": base,
        "head_median": base * (1 + estimate / 100),
        "estimate_pct": estimate,
        "ci_low_pct": low,
        "ci_high_pct": high,
        "p_value": 0.004,
        "p_adjusted": 0.012,
        "bound_pct": effect,
        "noise_pct": 2.1,
        "n_base": 5,
        "n_head": 5,
        "method": "signed-rank",
        "cause": outcome if outcome != "inconclusive" else "noise",
    }
    values.update(kw)
    values.setdefault(
        "summary",
        SUMMARIES[outcome].format(
            effect=f"{effect:g} %",
            worse="rise" if higher_is_worse else "drop",
            better="fall" if higher_is_worse else "rise",
            p=f"{values['p_adjusted']:.2g}",
        ),
    )
    return MetricVerdict(**values)  # type: ignore[arg-type]


def verdict(scenario: str, threads: int, *metrics: MetricVerdict, **kw: object) -> Verdict:
    values: dict[str, object] = {
        "mode": "ab",
        "scenario": scenario,
        "threads": threads,
        "base": "mariadb-10.11",
        "head": "mariadb-11.8",
        "metrics": metrics,
        "base_version": VERSIONS["mariadb-10.11"],
        "head_version": VERSIONS["mariadb-11.8"],
    }
    values.update(kw)
    return Verdict(**values)  # type: ignore[arg-type]


def no_baseline() -> Verdict:  # the shape harness.gate.no_baseline_verdict builds
    reason = (
        "no baseline for oltp_read_only on mariadb-11.8 (ci profile) on this testbed; record one with: "
        "dbperf baseline record --scenario oltp_read_only --server mariadb-11.8 --profile ci"
    )
    metric = MetricVerdict(metric="baseline", higher_is_worse=False, outcome="no_baseline", reason=reason, gating=False)
    return verdict("oltp_read_only", 8, metric, mode="baseline", base="baseline", base_version="", head_version="")


def failed() -> Verdict:  # the shape harness.gate.failed_verdict builds
    metric = MetricVerdict(
        metric="run", higher_is_worse=False, outcome="failed",
        reason="run failed: FATAL: error 2013: Lost connection to server during query",
    )  # fmt: skip
    return verdict("oltp_read_write", 16, metric, base_version="", head_version="")


CASES: dict[str, tuple[list[Verdict], list[RunResult]]] = {
    "regression": (
        [
            verdict(
                "oltp_read_only",
                8,
                mv("qps", "regression", -7.9, -10.2, -5.6, p_adjusted=0.0021),
                mv("p95_ms", "regression", 12.4, 10.6, 14.9, p_adjusted=0.0021),
                mv("cpu_per_txn", "pass", 0.8, -1.1, 2.3, gating=False),
            )
        ],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "improvement": (
        [
            verdict(
                "oltp_read_only",
                8,
                mv("qps", "improvement", 6.3, 4.1, 8.8),
                mv("p95_ms", "improvement", -11.0, -13.5, -10.2),
            )
        ],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "pass": (
        [verdict("oltp_read_only", 8, mv("qps", "pass", 0.4, -1.8, 2.2), mv("p95_ms", "pass", -0.5, -3.0, 2.4))],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "inconclusive": (
        [
            verdict(
                "oltp_read_only",
                8,
                mv(
                    "qps",
                    "inconclusive",
                    -3.1,
                    -9.7,
                    2.9,
                    noise_pct=8.0,
                    repetitions_needed=24,
                    seconds_needed=24 * 32.0,
                    p_adjusted=0.31,
                ),
                mv("p95_ms", "pass", 1.0, -2.0, 4.1),
                warnings=("head qps varied 14 % (CV) between repetitions: unstable",),
            )
        ],
        runs_for("mariadb-10.11", "mariadb-11.8"),
    ),
    "no_baseline": ([no_baseline()], runs_for("mariadb-11.8")),
    "failed": (
        [failed()],
        [
            *runs_for("mariadb-10.11", "mariadb-11.8", scenario="oltp_read_write", threads=16)[:7],
            make_run(
                7,
                server="mariadb-11.8",
                scenario="oltp_read_write",
                threads=16,
                failure="FATAL: error 2013: Lost connection to server during query",
            ),
        ],
    ),
}


def many_rows() -> tuple[list[Verdict], list[RunResult]]:
    verdicts = []
    for scenario in ("oltp_point_select", "oltp_read_only", "oltp_read_write"):
        for threads in (1, 2, 4, 8, 16):
            metrics = [mv("qps", "pass", 0.3, -1.2, 1.9), mv("p95_ms", "pass", -0.4, -2.2, 1.5)]
            if scenario == "oltp_read_write" and threads == 16:
                metrics[0] = mv("qps", "regression", -6.2, -8.8, -5.1)
            if scenario == "oltp_point_select" and threads == 1:
                metrics[1] = mv("p95_ms", "inconclusive", 4.0, -1.0, 11.5, noise_pct=12.5, repetitions_needed=40)
            verdicts.append(verdict(scenario, threads, *metrics))
    runs = [r for t in (1, 2, 4, 8, 16) for r in runs_for("mariadb-10.11", "mariadb-11.8", threads=t)]
    return verdicts, runs


GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"

UPDATE = os.environ.get("DBPERF_UPDATE_GOLDEN") == "1"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: regenerate with DBPERF_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from the golden file; if intended, regenerate with DBPERF_UPDATE_GOLDEN=1"


def synthetic(op: str, median_ms: float, seed: int, count: int = 4000, seconds: float = 10.0) -> OperationStats:
    """An operation type whose latencies scatter log-normally around ``median_ms`` (seeded)."""
    rng = random.Random(seed)
    counts: dict[int, int] = {}
    total = 0.0
    for _ in range(count):
        ms = median_ms * rng.lognormvariate(0, 0.4)
        total += ms
        counts[bucket_index(ms)] = counts.get(bucket_index(ms), 0) + 1
    buckets = tuple(LatencyBucket(bucket_value(i), c) for i, c in sorted(counts.items()))
    return OperationStats(op, round(count * rng.uniform(0.98, 1.02)), 0, 0, total, seconds, buckets)


def check(
    verdicts: Sequence[Verdict] = (),
    runs: Sequence[RunResult] = (),
    *,
    title: str = "dbperf performance check",
    warnings: Sequence[str] = (),
    plans: Sequence[PlanCheck] = (),
    changes: Sequence[DefinitionChange] = (),
) -> Check:
    """What render_markdown and render_comment take: the verdicts' document, the runs, a title and notes."""
    document = VerdictDocument(tuple(verdicts), tuple(changes), tuple(plans))
    return Check(document, tuple(runs), title, tuple(warnings))
