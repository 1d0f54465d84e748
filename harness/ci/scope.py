"""What each comparison of a pull-request plan measures, and what the plan leaves out (and why).

Cost runs (instructions and the work vector under callgrind, :mod:`harness.model.work`) are cheap and
decisive: a 0.5 % change in instructions per transaction, one more fsync or buffer-pool read per
transaction, decides in 3 runs a side. They are blind to what costs wall time without instructions:
lock waits, scaling across threads, scheduling, kernel time. So, per comparison:

* **cost always** (on every affected server);
* **timing as well** only when the change is of a kind cost cannot see -- a setting listed as such in
  :data:`SENSITIVITY` or not listed at all (not covered by the work vector), a new build or image, a
  different CPU placement, a changed workload -- **and** the timing test has power at the minimum
  effect on this runner (:data:`MIN_POWER`, at the design check's pairs and the measured or assumed
  noise). Otherwise timing is left out and the plan says so: ``timing on mariadb-local
  oltp_read_write left out: power 6 % at the 5 % minimum effect with 12 pairs (qps); cost judges it``.

``--cost`` / ``--no-cost`` override the decision for every comparison (cost only / timing only), and
an A/A check of a harness change keeps both kinds (it proves that both paths still run).
``--servers`` narrows the fan-out to servers by name or shell pattern (``local``: every server dbperf
starts from a local binary, the pull-request runner's kind); what it drops is listed too.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from harness.ci.assess import assess_plan
from harness.ci.records import BASE_SUFFIX, CiPlan, Comparison
from harness.ci.targets import BINLOG, CACHES, DURABILITY, OVERHEAD, PLANS, TEMP, THREADS, canonical
from harness.config.servers import load_server
from harness.config.settings import Settings
from harness.errors import ConfigError
from harness.model import METRICS, RunKind
from harness.model.operation_stats import is_operation_metric
from harness.pipeline.design_check import DesignError

#: Timing is kept where its best wall-clock test (QPS or the latency percentile) would find a change of
#: the minimum effect at least this often; below, a timing verdict would be INCONCLUSIVE anyway.
MIN_POWER = 0.5


def wall_clock(metric: str) -> bool:
    """Whether a gating metric is measured on the wall clock, which cost cannot stand in for (its power
    decides whether timing runs): the judged metrics of :data:`harness.model.metrics.METRICS` that are not
    a cost per transaction (QPS, the percentiles, capacity at the SLO), and every per-operation metric
    (:data:`harness.model.metrics`'s ``<TYPE>.`` templates: operations per second or minute, latencies in ms,
    ``ops_per_s`` and ``NEW_ORDER.p95_ms`` alike)."""
    if is_operation_metric(metric):
        return True
    return metric in METRICS and not metric.endswith(_PER_TXN)


_PER_TXN = "_per_txn"  # instructions, CPU time and the work vector per transaction: cost's own measures
#: The ``--servers`` word for every server that dbperf starts from a local binary.
LOCAL = "local"


@dataclass(frozen=True)
class Sensitivity:
    """Whether cost runs can see the effect of settings named like ``pattern`` (a shell pattern)."""

    pattern: str
    timing: bool  # True: the effect is on wall time that instructions and the work vector cannot see
    why: str
    #: the class of setting (:data:`harness.ci.targets.CLASSES`) whose scenarios exercise it; "": the default set
    exercise: str = ""


#: Per changed setting or server field: can cost see its effect? The first matching row decides; a name
#: that no row matches needs timing (the work vector does not cover it). docs/pull-request-checks.md
#: shows this table.
SENSITIVITY: tuple[Sensitivity, ...] = (
    # concurrency, scheduling and contention: wall time, not instructions
    Sensitivity("thread_handling", True, "thread scheduling", THREADS),
    Sensitivity("thread_pool_*", True, "thread scheduling", THREADS),
    Sensitivity("thread_cache_size", True, "thread scheduling", THREADS),
    Sensitivity("innodb_thread_concurrency", True, "concurrency limit", THREADS),
    Sensitivity("innodb_concurrency_tickets", True, "concurrency limit", THREADS),
    Sensitivity("innodb_commit_concurrency", True, "concurrency limit", THREADS),
    Sensitivity("max_connections", True, "connection limit", THREADS),
    Sensitivity("back_log", True, "connection queue", THREADS),
    Sensitivity("*_instances", True, "contention between threads", THREADS),
    Sensitivity("innodb_adaptive_hash_index_parts", True, "contention between threads", THREADS),
    Sensitivity("innodb_spin_wait_*", True, "spinning under contention", THREADS),
    Sensitivity("innodb_sync_spin_loops", True, "spinning under contention", THREADS),
    Sensitivity("innodb_lock_wait_timeout", True, "lock waits"),
    Sensitivity("innodb_deadlock_detect", True, "lock waits"),
    Sensitivity("transaction_isolation", True, "lock waits"),
    Sensitivity("tx_isolation", True, "lock waits"),
    Sensitivity("metadata_locks_*", True, "lock waits"),
    # background I/O threads and the kernel's share
    Sensitivity("innodb_*_io_threads", True, "background I/O threads"),
    Sensitivity("innodb_use_native_aio", True, "kernel I/O"),
    Sensitivity("innodb_io_capacity*", True, "background flushing rate"),
    Sensitivity("innodb_page_cleaners", True, "background flushing threads"),
    Sensitivity("innodb_purge_threads", True, "background purge threads"),
    # the optimiser's statistics: a counted MySQL server's prewarm computes them exactly, whatever the sampling
    Sensitivity("innodb_stats_*", True, "table statistics (exact in MySQL cost runs)", PLANS),
    # what the work vector counts per transaction (docs/work-vector.md)
    Sensitivity("innodb_buffer_pool_size", False, "buffer-pool reads/txn (bp_reads)", CACHES),
    Sensitivity("innodb_flush_log_at_trx_commit", False, "fsyncs/txn (log_fsyncs, sys_fsync)", DURABILITY),
    Sensitivity("sync_binlog", False, "fsyncs/txn (sys_fsync)", BINLOG),
    Sensitivity("innodb_flush_method", False, "fsyncs and writes/txn (sys_fsync, sys_pwrite)", DURABILITY),
    Sensitivity("innodb_doublewrite", False, "writes/txn (sys_pwrite, pages written)", DURABILITY),
    Sensitivity("innodb_log_file_size", False, "redo written and fsyncs/txn", DURABILITY),
    Sensitivity("innodb_redo_log_capacity", False, "redo written and fsyncs/txn", DURABILITY),
    Sensitivity("innodb_log_buffer_size", False, "log waits and redo writes/txn", DURABILITY),
    Sensitivity("log_bin", False, "writes and fsyncs/txn", BINLOG),
    Sensitivity("binlog_*", False, "writes and fsyncs/txn", BINLOG),
    Sensitivity("tmp_table_size", False, "temporary tables on disk/txn", TEMP),
    Sensitivity("max_heap_table_size", False, "temporary tables on disk/txn", TEMP),
    Sensitivity("sort_buffer_size", False, "sort merge passes/txn", TEMP),
    # what instructions per transaction count
    Sensitivity("join_buffer_size", False, "instructions/txn", PLANS),
    Sensitivity("read_buffer_size", False, "instructions/txn", TEMP),
    Sensitivity("read_rnd_buffer_size", False, "instructions/txn", TEMP),
    Sensitivity("query_cache_*", False, "instructions/txn", CACHES),
    Sensitivity("optimizer_*", False, "instructions/txn and query plans", PLANS),
    Sensitivity("innodb_adaptive_hash_index", False, "instructions/txn", CACHES),
    Sensitivity("innodb_change_buffering", False, "instructions and buffer-pool reads/txn"),
    Sensitivity("performance_schema*", False, "instructions/txn", OVERHEAD),
    Sensitivity("character_set_*", False, "instructions/txn", OVERHEAD),
    Sensitivity("collation_*", False, "instructions/txn", OVERHEAD),
    Sensitivity("max_allowed_packet", False, "instructions/txn", OVERHEAD),
    Sensitivity("max_statement_time", False, "instructions/txn", OVERHEAD),
    # server fields (servers/*.toml): a new build changes code and locking alike; placement is wall time
    Sensitivity("version", True, "a new build: its locking and scaling"),
    Sensitivity("image", True, "a new build: its locking and scaling"),
    Sensitivity("binary", True, "a new build: its locking and scaling"),
    Sensitivity("flavour", True, "a new build: its locking and scaling"),
    Sensitivity("provider", True, "containers and local processes differ in kernel time"),
    Sensitivity("cpuset", True, "CPU placement"),
    Sensitivity("client_cpuset", True, "CPU placement"),
    Sensitivity("cpus", True, "CPU placement"),
    Sensitivity("memory_limit", True, "memory pressure"),
    Sensitivity("host", False, "where the server is, not what it does"),
    Sensitivity("port", False, "where the server is, not what it does"),
    Sensitivity("database", False, "where the server is, not what it does"),
)
_UNLISTED = "not covered by the work vector"


def sensitivity(name: str) -> Sensitivity:
    """The row of :data:`SENSITIVITY` for a changed setting or field (unlisted names need timing); the name
    is matched as the server reads it (:func:`harness.ci.targets.canonical`)."""
    found = canonical(name, [r.pattern for r in SENSITIVITY if "*" not in r.pattern])
    for row in SENSITIVITY:
        if fnmatch.fnmatchcase(found, row.pattern):
            return row
    return Sensitivity(name, True, _UNLISTED)


def class_of(name: str) -> str:
    """The class of setting whose scenarios exercise a changed setting ("" for none: the default set)."""
    return sensitivity(name).exercise


def timing_reason(comparison: Comparison) -> str:
    """Why this comparison needs timing runs ("" when cost sees all of its change)."""
    if comparison.kind == "scenario":
        return "a changed workload"
    if not comparison.changed:
        return "a change cost cannot classify"
    blind = [(name, row) for name in comparison.changed for row in (sensitivity(name),) if row.timing]
    return ", ".join(f"{name} ({row.why})" for name, row in blind)


def _server_matches(settings: Settings, name: str, patterns: Sequence[str]) -> bool:
    bare = name.removesuffix(BASE_SUFFIX)
    for pattern in patterns:
        if pattern == LOCAL:
            try:
                if load_server(bare, settings.servers_dir).provider == "local":
                    return True
            except ConfigError:
                continue
        elif fnmatch.fnmatchcase(bare, pattern):
            return True
    return False


def narrow(settings: Settings, the_plan: CiPlan, servers: Sequence[str]) -> CiPlan:
    """Keep the comparisons and recordings whose head server matches one of ``servers`` (names, shell
    patterns, or ``local``); the rest are listed in ``left_out``. No patterns: the plan as it is."""
    patterns = [p.strip() for item in servers for p in item.split(",") if p.strip()]
    if not patterns:
        return the_plan
    kept = [c for c in the_plan.comparisons if _server_matches(settings, c.head.server, patterns)]
    dropped = [c for c in the_plan.comparisons if c not in kept]
    kept_rec = [r for r in the_plan.recordings if _server_matches(settings, r.side.server, patterns)]
    dropped_rec = [r for r in the_plan.recordings if r not in kept_rec]
    known = sorted(p.stem for p in settings.servers_dir.glob("*.toml"))
    for pattern in patterns:
        if pattern != LOCAL and not fnmatch.filter(known, pattern):
            raise ConfigError(f"--servers {pattern} matches no server (known: {', '.join(known) or 'none'}, local)")
    left_out = [
        f"{server} ({n} comparison(s) or recording(s)): not selected by --servers {','.join(patterns)}"
        for server, n in _count(
            [c.head.server for c in dropped] + [r.side.server for r in dropped_rec],
        )
    ]
    return dataclasses.replace(
        the_plan,
        comparisons=tuple(kept),
        recordings=tuple(kept_rec),
        left_out=the_plan.left_out + tuple(left_out),
    )


def _count(names: list[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return sorted(counts.items())


def _with_kinds(the_plan: CiPlan, kinds: Sequence[tuple[RunKind, ...]]) -> CiPlan:
    return dataclasses.replace(
        the_plan,
        comparisons=tuple(dataclasses.replace(c, kinds=k) for c, k in zip(the_plan.comparisons, kinds, strict=True)),
    )


def _label(comparison: Comparison) -> str:
    return f"{comparison.head_server} {comparison.scenario}"


def decide(settings: Settings, the_plan: CiPlan) -> CiPlan:
    """Each comparison's kinds: cost always, timing where the change needs it and timing has power.

    ``--cost`` / ``--no-cost`` (``settings.cost``) decide for every comparison instead."""
    if settings.cost is not None:
        forced: tuple[RunKind, ...] = ("cost",) if settings.cost else ("time",)
        return _with_kinds(the_plan, [forced] * len(the_plan.comparisons))
    wanted: list[tuple[RunKind, ...]] = []
    reasons: list[str] = []
    seen_by_cost: dict[str, list[str]] = {}  # why cost sees it -> the comparisons
    for c in the_plan.comparisons:
        reason = "" if c.kind == "harness-aa" else timing_reason(c)
        reasons.append(reason)
        if c.kind == "harness-aa" or reason:
            wanted.append(("time", "cost"))
        else:
            wanted.append(("cost",))
            seen = "; ".join(f"{n}: {sensitivity(n).why}" for n in c.changed)
            seen_by_cost.setdefault(seen, []).append(_label(c))
    left_out = [
        f"timing on {', '.join(labels)}: cost sees the change ({seen}), so cost judges it"
        for seen, labels in seen_by_cost.items()
    ]
    candidate = _with_kinds(the_plan, wanted)
    if not any("time" in k for c, k in zip(the_plan.comparisons, wanted, strict=True) if c.kind != "harness-aa"):
        return dataclasses.replace(candidate, left_out=the_plan.left_out + tuple(left_out))
    try:
        tests = assess_plan(settings, candidate).tests
        refused = ""
    except DesignError as exc:  # forced repetitions too few for timing: then timing cannot decide anything
        tests, refused = (), str(exc)
    final: list[tuple[RunKind, ...]] = []
    for c, kinds, reason in zip(candidate.comparisons, wanted, reasons, strict=True):
        if c.kind == "harness-aa" or "time" not in kinds:
            final.append(kinds)
            continue
        prefix = f"{c.head_server} {c.scenario} "
        own = [a for a in tests if a.label.startswith(prefix) and a.label.endswith(" time") and wall_clock(a.metric)]
        best = max(own, key=lambda a: a.power, default=None)
        if best is not None and best.power >= MIN_POWER:
            final.append(kinds)
            continue
        final.append(("cost",))
        power = (
            f"power {best.power * 100:.0f} % at the {best.min_effect * 100:g} % minimum effect with "
            f"{best.repetitions} ({best.metric}, noise {best.noise * 100:.2g} % {best.noise_source})"
            if best
            else f"timing cannot decide at these repetitions ({refused})"
            if refused
            else "no wall-clock metric gates it"
        )
        left_out.append(
            f"timing on {_label(c)}: {power}; cost judges it, blind to {reason}: for a timing verdict "
            f"run `dbperf ci run --servers {c.head.server} --scenario {c.scenario} --no-cost` with more repetitions"
        )
    return dataclasses.replace(_with_kinds(the_plan, final), left_out=the_plan.left_out + tuple(left_out))
