"""Records passed between pipeline stages.

Every record is a frozen dataclass, validated when it is created (as pyperf does with its runs), so a
stage can trust what it is handed. Stages never mutate a record; they build a new one.

The pipeline::

    config -> testbed -> provision -> dataset -> run -> store -> judge -> report
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Literal

Flavour = Literal["mariadb", "mysql"]
ProviderKind = Literal["local", "container", "external"]
RunStatus = Literal["ok", "failed"]
Outcome = Literal["pass", "regression", "improvement", "inconclusive", "no_baseline", "failed"]

#: Metrics dbperf judges, with the direction in which they get worse.
METRICS: dict[str, bool] = {
    # name: higher_is_worse
    "qps": False,
    "tps": False,
    "p95_ms": True,
    "p99_ms": True,
    "cpu_per_txn": True,
    "instr_per_txn": True,
}

METRIC_LABELS: dict[str, str] = {
    "qps": "QPS",
    "tps": "TPS",
    "p95_ms": "p95 (ms)",
    "p99_ms": "p99 (ms)",
    "cpu_per_txn": "CPU µs/txn",
    "instr_per_txn": "instructions/txn",
}


def stable_hash(payload: object, length: int = 12) -> str:
    """Short SHA-256 of a JSON rendering with sorted keys: the same content gives the same hash."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


@dataclass(frozen=True)
class ServerTarget:
    """A server to benchmark: what it is, how to start it, how to configure it."""

    name: str
    flavour: Flavour
    version: str
    provider: ProviderKind
    description: str = ""
    image: str | None = None
    binary: str | None = None
    config_file: Path | None = None
    variables: Mapping[str, str] = field(default_factory=dict)
    cpuset: str | None = None
    client_cpuset: str | None = None
    cpus: float | None = None
    memory_limit: str | None = None
    host: str = "127.0.0.1"
    port: int | None = None
    user: str | None = None
    password_env: str | None = None
    database: str = "sbtest"
    source: Path | None = None

    def with_variables(self, overrides: Mapping[str, str], name: str | None = None) -> ServerTarget:
        """A copy of this target with some server variables overridden (``--head-var``)."""
        merged = {**self.variables, **overrides}
        suffix = ",".join(f"{k}={v}" for k, v in sorted(overrides.items()))
        return ServerTarget(
            **{
                **self.__dict__,
                "variables": merged,
                "name": name or f"{self.name}+{suffix}",
            }
        )

    def identity(self) -> dict[str, object]:
        """What makes two targets the same configuration (hashed into the config hash)."""
        config_text = None
        if self.config_file is not None and self.config_file.exists():
            config_text = self.config_file.read_text()
        return {
            "flavour": self.flavour,
            "version": self.version,
            "provider": self.provider,
            "image": self.image,
            "binary": self.binary,
            "config": config_text,
            "variables": dict(sorted(self.variables.items())),
            "cpuset": self.cpuset,
            "cpus": self.cpus,
            "memory_limit": self.memory_limit,
        }


@dataclass(frozen=True)
class Scenario:
    """A pinned sysbench workload resolved for one profile (quick, ci or full)."""

    name: str
    script: str
    profile: str
    threads: tuple[int, ...]
    warmup_s: int
    time_s: int
    repetitions: int
    tables: int
    table_size: int
    rand_type: str = "uniform"
    description: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    writes: bool = False
    fresh_server: bool = True
    min_effects: Mapping[str, float] = field(default_factory=dict)
    gate_metrics: tuple[str, ...] = ("qps", "p95_ms")
    percentile: int = 95
    source: Path | None = None
    definition_hash: str = ""

    def __post_init__(self) -> None:
        if not self.threads or any(t < 1 for t in self.threads):
            raise ValueError(f"scenario {self.name}: thread counts must be positive, got {self.threads}")
        if self.time_s < 1 or self.warmup_s < 0 or self.repetitions < 1:
            raise ValueError(f"scenario {self.name}: time_s >= 1, warmup_s >= 0, repetitions >= 1")

    def dataset_key(self) -> dict[str, object]:
        """What a prepared dataset depends on (besides the server build and sysbench version)."""
        return {"script": self.script, "tables": self.tables, "table_size": self.table_size}

    def with_overrides(
        self,
        *,
        threads: Sequence[int] | None = None,
        time_s: int | None = None,
        warmup_s: int | None = None,
        repetitions: int | None = None,
    ) -> Scenario:
        """A copy with command-line overrides applied (the definition hash stays: it names the file)."""
        values = dict(self.__dict__)
        if threads:
            values["threads"] = tuple(threads)
        if time_s is not None:
            values["time_s"] = time_s
        if warmup_s is not None:
            values["warmup_s"] = warmup_s
        if repetitions is not None:
            values["repetitions"] = repetitions
        return Scenario(**values)


@dataclass(frozen=True)
class Testbed:
    """The machine a run happened on; baselines only compare runs with the same fingerprint."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name

    cpu_model: str
    cores: int
    memory_gb: float
    kernel: str
    disk: str
    sysbench_version: str
    container_engine: str | None
    hostname: str = ""

    @property
    def fingerprint(self) -> str:
        """Hash of what changes results; the hostname is deliberately left out (fixed-hardware pools)."""
        return stable_hash(
            {
                "cpu": self.cpu_model,
                "cores": self.cores,
                "mem": round(self.memory_gb),
                "kernel": self.kernel,
                "disk": self.disk,
                "sysbench": self.sysbench_version,
                "engine": self.container_engine,
            }
        )


@dataclass(frozen=True)
class IntervalSample:
    """One report interval, with sysbench's raw counts (not rates)."""

    t_s: float
    interval_s: float
    threads_running: int
    events: int
    reads: int
    writes: int
    other: int
    errors: int
    reconnects: int
    latency_pct_ms: float
    warmup: bool = False

    @property
    def qps(self) -> float:
        return (self.reads + self.writes + self.other) / self.interval_s if self.interval_s > 0 else 0.0

    @property
    def tps(self) -> float:
        return self.events / self.interval_s if self.interval_s > 0 else 0.0


@dataclass(frozen=True)
class LatencyBucket:
    """One non-empty bucket of sysbench's latency histogram (``--histogram=on``)."""

    value_ms: float
    count: int


def histogram_percentile(buckets: Sequence[LatencyBucket], pct: float) -> float | None:
    """The ``pct`` percentile of a histogram the way sysbench computes it (first bucket reaching it)."""
    total = sum(b.count for b in buckets)
    if total == 0:
        return None
    need = total * pct / 100.0
    running = 0
    ordered = sorted(buckets, key=lambda b: b.value_ms)
    for bucket in ordered:
        running += bucket.count
        if running >= need:
            return bucket.value_ms
    return ordered[-1].value_ms


@dataclass(frozen=True)
class Totals:
    """Cumulative counts over the measured window (warm-up excluded)."""

    time_s: float
    events: int
    reads: int
    writes: int
    other: int
    errors: int
    reconnects: int
    latency_min_ms: float | None = None
    latency_avg_ms: float | None = None
    latency_max_ms: float | None = None
    latency_pct_ms: float | None = None

    @property
    def queries(self) -> int:
        return self.reads + self.writes + self.other


@dataclass(frozen=True)
class Probes:
    """Readings taken on the server side over the measured window."""

    server_cpu_s: float | None = None
    instructions: float | None = None
    instructions_note: str = ""
    status_deltas: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Metrics:
    """The numbers people judge, derived once from totals, histogram and probes."""

    qps: float | None = None
    tps: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None
    errors_per_s: float | None = None
    reconnects_per_s: float | None = None
    cpu_per_txn: float | None = None  # server CPU microseconds per transaction
    instr_per_txn: float | None = None

    def get(self, name: str) -> float | None:
        value = getattr(self, name, None)
        return None if value is None else float(value)

    @staticmethod
    def derive(totals: Totals | None, histogram: Sequence[LatencyBucket], probes: Probes) -> Metrics:
        if totals is None or totals.time_s <= 0:
            return Metrics()
        events = totals.events
        cpu = probes.server_cpu_s * 1e6 / events if probes.server_cpu_s is not None and events > 0 else None
        instr = probes.instructions / events if probes.instructions is not None and events > 0 else None
        has_hist = bool(histogram)
        return Metrics(
            qps=totals.queries / totals.time_s,
            tps=events / totals.time_s,
            p50_ms=histogram_percentile(histogram, 50) if has_hist else None,
            p95_ms=histogram_percentile(histogram, 95) if has_hist else totals.latency_pct_ms,
            p99_ms=histogram_percentile(histogram, 99) if has_hist else None,
            p999_ms=histogram_percentile(histogram, 99.9) if has_hist else None,
            errors_per_s=totals.errors / totals.time_s,
            reconnects_per_s=totals.reconnects / totals.time_s,
            cpu_per_txn=cpu,
            instr_per_txn=instr,
        )


@dataclass(frozen=True)
class RunResult:
    """One sysbench run (one repetition at one thread count) against one server."""

    run_id: str
    started_at: datetime
    finished_at: datetime
    status: RunStatus
    target: str
    flavour: str
    provider: str
    server_version: str
    config_hash: str
    scenario: str
    scenario_hash: str
    profile: str
    script: str
    threads: int
    repetition: int
    warmup_s: float
    time_s: float
    testbed: Testbed
    git_sha: str = ""
    failure: str = ""
    source: str = "run"
    variables: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)
    server_cpuset: str = ""
    client_cpuset: str = ""
    group_id: str = ""
    label: str = ""
    intervals: tuple[IntervalSample, ...] = ()
    histogram: tuple[LatencyBucket, ...] = ()
    totals: Totals | None = None
    probes: Probes = field(default_factory=Probes)
    metrics: Metrics = field(default_factory=Metrics)

    def __post_init__(self) -> None:
        if self.status == "ok" and self.totals is None:
            raise ValueError(f"run {self.run_id}: an ok run needs cumulative totals")
        if self.status == "failed" and not self.failure:
            raise ValueError(f"run {self.run_id}: a failed run needs a reason")
        if self.threads < 1:
            raise ValueError(f"run {self.run_id}: threads must be >= 1")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary_dict(self) -> dict[str, object]:
        """The flat JSON document of ``dbperf run --json``."""
        m = self.metrics
        return {
            "run_id": self.run_id,
            "status": self.status,
            "failure": self.failure or None,
            "target": self.target,
            "server_version": self.server_version,
            "scenario": self.scenario,
            "profile": self.profile,
            "threads": self.threads,
            "repetition": self.repetition,
            "duration_s": self.totals.time_s if self.totals else None,
            "qps": m.qps,
            "tps": m.tps,
            "p50_ms": m.p50_ms,
            "p95_ms": m.p95_ms,
            "p99_ms": m.p99_ms,
            "errors_per_s": m.errors_per_s,
            "reconnects_per_s": m.reconnects_per_s,
            "cpu_us_per_txn": m.cpu_per_txn,
            "instructions_per_txn": m.instr_per_txn,
            "config_hash": self.config_hash,
            "testbed": self.testbed.fingerprint,
            "git_sha": self.git_sha,
            "started_at": self.started_at.isoformat(),
        }


@dataclass(frozen=True)
class MetricVerdict:
    """The judgement of one metric of one scenario x threads comparison."""

    metric: str
    higher_is_worse: bool
    outcome: Outcome
    reason: str
    base_median: float | None = None
    head_median: float | None = None
    estimate_pct: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    bound_pct: float | None = None
    noise_pct: float | None = None
    n_base: int = 0
    n_head: int = 0
    pairs_needed: int | None = None
    gating: bool = True
    confidence: float | None = None  # achieved confidence of the interval (exact rank intervals come in steps)


@dataclass(frozen=True)
class Verdict:
    """All metric verdicts for one scenario x threads comparison (A/B or against a baseline)."""

    mode: Literal["ab", "baseline"]
    scenario: str
    threads: int
    base: str
    head: str
    metrics: tuple[MetricVerdict, ...]
    base_version: str = ""
    head_version: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def outcome(self) -> Outcome:
        # failed and no-baseline describe the whole comparison; other outcomes count when they gate
        outcomes = {m.outcome for m in self.metrics if m.gating or m.outcome in {"failed", "no_baseline"}}
        order: tuple[Outcome, ...] = ("failed", "regression", "no_baseline", "inconclusive", "improvement")
        for o in order:
            if o in outcomes:
                return o
        return "pass"
