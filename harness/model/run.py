"""The run records: the testbed, the samples and totals of one sysbench run, and the metrics derived."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar, Literal

from harness.model.ids import stable_hash
from harness.model.latency import LatencyBucket, histogram_percentile
from harness.model.metrics import RunKind
from harness.model.operation_stats import OperationStats, is_operation_metric, operation_metric, total_ops_per_s
from harness.model.work import WORK, work_vector

RunStatus = Literal["ok", "failed"]


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
    #: The hardware class the machine was given (a fleet's runner label, ``--testbed-class``), or "".
    hardware_class: str = ""

    @property
    def fingerprint(self) -> str:
        """Hash of what changes results; the hostname is deliberately left out (fixed-hardware pools).

        A hardware class joins it when set, so two classes never share a series or a baseline even on
        look-alike machines; without one the fingerprint is what it always was.
        """
        identity: dict[str, object] = {
            "cpu": self.cpu_model,
            "cores": self.cores,
            "mem": round(self.memory_gb),
            "kernel": self.kernel,
            "disk": self.disk,
            "sysbench": self.sysbench_version,
            "engine": self.container_engine,
        }
        if self.hardware_class:
            identity["class"] = self.hardware_class
        return stable_hash(identity)


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
    #: System calls in the window by kind and their ``total`` (cost runs: callgrind's sysCount).
    syscalls: Mapping[str, int] = field(default_factory=dict)
    #: The window's simulated cache misses by callgrind event (``I1mr``, ...: cost runs with ``--cache-sim``).
    cache_misses: Mapping[str, int] = field(default_factory=dict)


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
    instr_per_query: float | None = None
    #: The work vector per transaction (:mod:`harness.model.work`): system calls by kind, server counters.
    work: Mapping[str, float] = field(default_factory=dict)

    def get(self, name: str) -> float | None:
        if name in WORK:
            return self.work.get(name)
        value = getattr(self, name, None)
        return None if value is None or isinstance(value, Mapping) else float(value)

    @staticmethod
    def derive(totals: Totals | None, histogram: Sequence[LatencyBucket], probes: Probes) -> Metrics:
        if totals is None or totals.time_s <= 0:
            return Metrics()
        events = totals.events
        cpu = probes.server_cpu_s * 1e6 / events if probes.server_cpu_s is not None and events > 0 else None
        instr = probes.instructions / events if probes.instructions is not None and events > 0 else None
        queries = totals.queries
        per_query = probes.instructions / queries if probes.instructions is not None and queries > 0 else None
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
            instr_per_query=per_query,
            work=work_vector(events, probes.status_deltas, probes.syscalls, probes.cache_misses),
        )

    @staticmethod
    def cost(totals: Totals, instructions: float, probes: Probes | None = None) -> Metrics:
        """A cost run's metrics: instructions per transaction and per query, the work vector, nothing timed."""
        probes = probes or Probes()
        return Metrics(
            instr_per_txn=instructions / totals.events if totals.events > 0 else None,
            instr_per_query=instructions / totals.queries if totals.queries > 0 else None,
            work=work_vector(totals.events, probes.status_deltas, probes.syscalls, probes.cache_misses),
        )


@dataclass(frozen=True)
class FunctionCost:
    """One function of a cost run's profile: instructions in it (self) and under it (inclusive)."""

    name: str
    self_ir: int
    inclusive_ir: int
    calls: int = 0


@dataclass(frozen=True)
class CostProfile:
    """Where a cost run's instructions went (callgrind, collection toggled on statement dispatch).

    ``functions`` holds every function with a cost, by self cost; names that are addresses (``0x...``:
    static functions and stripped internals) are kept as such; ``syscalls`` counts the window's
    system calls by kind. ``dump`` is the gzip of the raw
    callgrind file, for kcachegrind or callgrind_annotate.
    """

    total_ir: int
    functions: tuple[FunctionCost, ...] = ()
    dump: bytes = field(default=b"", repr=False)
    #: System calls in the window by kind (``fsync``, ``pwrite``, ``pread``, ``net``, ``futex``, ``clock``,
    #: ``other``) and their ``total``; empty when the dump has no ``sysCount`` event.
    syscalls: Mapping[str, int] = field(default_factory=dict)
    #: The window's simulated cache misses by callgrind event (``I1mr``, ``D1mr``...); empty without them.
    cache_misses: Mapping[str, int] = field(default_factory=dict)

    @property
    def unnamed_ir(self) -> int:
        return sum(f.self_ir for f in self.functions if f.name.startswith("0x"))


@dataclass(frozen=True)
class RunResult:
    """One sysbench run (one repetition at one thread count) against one server."""

    run_id: str
    started_at: datetime
    finished_at: datetime
    status: RunStatus
    server: str
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
    kind: RunKind = "time"
    backend: str = ""  # how instructions were counted: "callgrind" (cost runs), "perf" (counters), or ""
    build_id: str = ""  # the server build: ELF build-id of the binary, or the image id
    requested_hash: str = ""  # hash of the configuration dbperf asked for (portable across machines)
    tool: str = ""  # the counting tool and its version, e.g. valgrind-3.19.0
    arch: str = ""  # machine architecture the instructions were counted on
    notes: tuple[str, ...] = ()  # what the measurement itself noticed (still warming up, ...)
    intervals: tuple[IntervalSample, ...] = ()
    histogram: tuple[LatencyBucket, ...] = ()
    totals: Totals | None = None
    probes: Probes = field(default_factory=Probes)
    metrics: Metrics = field(default_factory=Metrics)
    cost_profile: CostProfile | None = None
    #: Per-operation statistics of a workload that reports them (the per-operation protocol), by type.
    operations: tuple[OperationStats, ...] = ()

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

    def metric(self, name: str) -> float | None:
        """Any metric by name: a :class:`Metrics` field, or a per-operation one (``READ.p99_ms``, ``ops_per_s``)."""
        if is_operation_metric(name):
            return operation_metric(self.operations, name)
        return self.metrics.get(name)

    def summary_dict(self) -> dict[str, object]:
        """The flat JSON document of ``dbperf run --json``."""
        m = self.metrics
        return {
            "run_id": self.run_id,
            "group_id": self.group_id or None,
            "status": self.status,
            "failure": self.failure or None,
            "server": self.server,
            "kind": self.kind,
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
            "instructions_per_query": m.instr_per_query,
            "ops_per_s": total_ops_per_s(self.operations),
            "operations": [operation_dict(o) for o in self.operations],
            "work_per_txn": dict(m.work),
            "backend": self.backend or None,
            "notes": list(self.notes),
            "config_hash": self.config_hash,
            "testbed": self.testbed.fingerprint,
            "git_sha": self.git_sha,
            "started_at": self.started_at.isoformat(),
        }


def operation_dict(op: OperationStats) -> dict[str, object]:
    """One operation type in ``dbperf run --json``."""
    return {
        "type": op.type,
        "count": op.count,
        "errors": op.errors,
        "retries": op.retries,
        "misses": op.misses,
        "ops_per_s": op.ops_per_s,
        "avg_ms": op.avg_ms,
        "p50_ms": op.p50_ms,
        "p95_ms": op.p95_ms,
        "p99_ms": op.p99_ms,
    }
