"""The metric catalogue: one record per metric, the one place its facts are written.

The store schema, the judge, the reports, the Bencher export and the trend site read a metric's label,
unit, direction, run kinds, gating, minimum effect, floor and store column from here; adding a metric
is one entry in :data:`CATALOGUE` plus its collection (a :class:`~harness.model.run.Metrics` field, or
a work-vector component's ``syscall`` / ``counters``) and, when it is a new column of ``runs``, a store
migration (:mod:`harness.store.schema`).

Three families share the catalogue:

* **run metrics** (``qps``, ``p95_ms``, ``instr_per_txn``, ...): fields of ``Metrics``, most of them
  columns of the store's ``runs`` table; ``capacity_*`` come from thread sweeps and have no column;
* **per-operation templates** (``<TYPE>.p99_ms``): one entry per field of an operation type; a name
  such as ``NEW_ORDER.p99_ms`` resolves to its template (:func:`find`). They are shown by their names;
* **the work vector** (:mod:`harness.model.work`): what a transaction made the server do beside
  executing instructions, per transaction, with a minimum effect and an absolute floor each. A change
  is worth a verdict only when it exceeds ``min_effect x base + floor``; components that repeat across
  fresh servers (docs/work-vector.md) gate along with ``instr_per_txn``, the others are information.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

#: A timing run (wall-clock QPS, latency, CPU time) or a cost run (instructions counted under callgrind;
#: its QPS and latency are those of a server slowed 20-50x and never reported).
RunKind = Literal["time", "cost"]
#: The name prefix of a per-operation template (``<TYPE>.p99_ms``).
OPERATION = "<TYPE>."
_TYPE = re.compile(r"^[A-Z][A-Z0-9_]*$")


@dataclass(frozen=True)
class Metric:
    """One metric: what users see, how it is judged, where it is kept.

    ``label`` is its name in tables and charts; ``term`` its name in a verdict's sentence when that
    differs (``p95`` rose, in the ``p95 (ms)`` column). ``kinds`` are the kinds of run whose
    comparisons judge it (in report order; empty: reported, never judged); ``gateable`` names a metric
    a scenario may list in ``gate`` and ``[min_effect]``; ``gating`` is whether it decides the exit code
    unless the scenario says otherwise (run metrics: the default ``gate``; work-vector components: along
    with ``instr_per_txn``). ``min_effect`` is the default minimum effect (a fraction) and ``floor`` the
    absolute change per transaction below which a work-vector change is no change. ``store_column`` is
    its column of ``runs`` ("" when it is derived: from the probes, a sweep, the operations table).
    ``bmf`` / ``bmf_unit`` its Bencher measure; ``trend`` the runs the trend site charts it from
    (``timing`` or ``cost``), with ``chart_title`` and ``chart_format`` (d3). ``prior_noise`` is the SD
    of per-pair log ratios the design check assumes without history; ``sweep_limit`` the change across
    a thread sweep worth a note. ``syscall`` / ``counters`` / ``event`` collect a work-vector component: a
    system call kind (callgrind's ``sysCount``), status counters summed (lower case; for each, the first of
    its ``|``-separated alternatives the server has: MariaDB and MySQL name some differently), or one of
    callgrind's simulated cache events (``I1mr``).
    """

    name: str
    label: str
    unit: str = ""
    higher_is_worse: bool = False
    kinds: tuple[RunKind, ...] = ()
    gateable: bool = False
    gating: bool = False
    min_effect: float = 0.0
    floor: float = 0.0
    store_column: str = ""
    term: str = ""
    bmf: str = ""
    bmf_unit: str = ""
    trend: str = ""
    chart_title: str = ""
    chart_format: str = ""
    prior_noise: float | None = None
    sweep_limit: float | None = None
    syscall: str = ""
    counters: tuple[str, ...] = ()
    event: str = ""

    @property
    def work(self) -> bool:
        """A component of the work vector (collected from system calls, status counters or cache events)."""
        return bool(self.syscall or self.counters or self.event)

    @property
    def per_operation(self) -> bool:
        return self.name.startswith(OPERATION)

    @property
    def field(self) -> str:
        """A per-operation template's field (``p99_ms``), else the name."""
        return self.name.removeprefix(OPERATION)


def _run(name: str, label: str, unit: str, worse: bool, **facts: object) -> Metric:
    return Metric(name, label, unit, worse, store_column=name, **facts)  # type: ignore[arg-type]


def _op(field: str, label: str, unit: str, worse: bool, **facts: object) -> Metric:
    return Metric(OPERATION + field, label, unit, worse, **facts)  # type: ignore[arg-type]


def _work(name: str, label: str, min_effect: float, floor: float, gating: bool, **source: object) -> Metric:
    return Metric(name, label, "/txn", True, ("cost",), gating=gating, min_effect=min_effect, floor=floor, **source)  # type: ignore[arg-type]


_TIME: tuple[RunKind, ...] = ("time",)
_BOTH: tuple[RunKind, ...] = ("time", "cost")
_SYS = 0.10  # syscall kinds: a tenth more calls of a kind is a real change in what the server asks the kernel
_COUNT = 0.10  # counters of events (fsyncs, page reads, temporary tables)
_ROWS = 0.02  # row and handler counts, read requests: deterministic to about 0.1 %
_HANDLER_READS = ("first", "key", "last", "next", "prev", "rnd", "rnd_next")

#: Every metric, in report order. One per family is judged: TPS is the same data as QPS (reported,
#: never judged twice).
CATALOGUE: tuple[Metric, ...] = (
    # -- run metrics (noise assumed without history: that measured on shared 2-core VMs, architecture.md)
    _run("qps", "QPS", "queries/s", False, kinds=_TIME, gateable=True, gating=True, min_effect=0.05,
         bmf="throughput", bmf_unit="queries / second", trend="timing", chart_title="QPS", chart_format=",.0f",
         prior_noise=0.12),
    _run("tps", "TPS", "transactions/s", False),
    _run("p50_ms", "p50 (ms)", "ms", True),
    _run("p95_ms", "p95 (ms)", "ms", True, kinds=_TIME, gateable=True, gating=True, min_effect=0.10, term="p95",
         bmf="p95-latency", bmf_unit="milliseconds (ms)", trend="timing", chart_title="p95 latency (ms)",
         chart_format=".3f", prior_noise=0.40),
    _run("p99_ms", "p99 (ms)", "ms", True, kinds=_TIME, gateable=True, min_effect=0.20, term="p99",
         bmf="p99-latency", bmf_unit="milliseconds (ms)", prior_noise=0.80),
    _run("p999_ms", "p99.9 (ms)", "ms", True),
    _run("errors_per_s", "errors/s", "/s", True),
    _run("reconnects_per_s", "reconnects/s", "/s", True),
    # server CPU microseconds per transaction; may rise with contention: 30 % across a sweep is flagged
    _run("cpu_per_txn", "CPU µs/txn", "µs/txn", True, kinds=_TIME, gateable=True, min_effect=0.05, term="CPU/txn",
         bmf="cpu-per-txn", bmf_unit="microseconds (µs)", prior_noise=0.06, sweep_limit=0.30),
    # charted from cost runs only: a timing run's count (perf, on other machines) is a different count
    _run("instr_per_txn", "instructions/txn", "instructions/txn", True, kinds=_BOTH, gateable=True,
         min_effect=0.005, bmf="instructions-per-txn", bmf_unit="instructions", trend="cost",
         chart_title="instructions/txn (cost runs)", chart_format=",.0f", prior_noise=0.0003),
    _run("instr_per_query", "instructions/query", "instructions/query", True),
    # capacity at a latency SLO from a thread sweep (A/B timing only, harness.judge.capacity): interpolated
    # between client counts, so a wider minimum effect than QPS alone
    Metric("capacity_clients", "clients at SLO", "clients", gateable=True, min_effect=0.20,
           term="clients at the SLO"),
    Metric("capacity_qps", "QPS at SLO", "queries/s", gateable=True, min_effect=0.10, term="QPS at the SLO"),
    # -- per-operation metrics (scenarios/README.md); ops_per_s is every type's operations together
    Metric("ops_per_s", "ops/s", "operations/s"),
    _op("ops_per_s", "ops/s", "operations/s", False, bmf="throughput"),
    _op("ops_per_min", "ops/min", "operations/min", False),
    _op("avg_ms", "avg (ms)", "ms", True),
    _op("p50_ms", "p50 (ms)", "ms", True),
    _op("p95_ms", "p95 (ms)", "ms", True, bmf="p95-latency"),
    _op("p99_ms", "p99 (ms)", "ms", True, bmf="p99-latency"),
    _op("errors_per_s", "errors/s", "/s", True),
    _op("retries_per_s", "retries/s", "/s", True),
    # -- the work vector: system calls by kind (cost runs only) ...
    # the total carries the noisy kinds too (futex, poll and clock follow thread timing), so it never gates
    _work("sys_total", "syscalls/txn", 0.02, 0.5, False, syscall="total"),
    # MySQL 9.7 insert makes some inside dispatch with flush=2 too, following wall time (0.14 +-0.06, 2.1 +-0.11)
    _work("sys_fsync", "fsync+fdatasync/txn", _SYS, 0.25, True, syscall="fsync"),
    _work("sys_pwrite", "pwrite/txn", _SYS, 0.25, True, syscall="pwrite"),
    _work("sys_pread", "pread/txn", _SYS, 0.05, True, syscall="pread"),
    _work("sys_net", "send+recv/txn", _SYS, 0.05, False, syscall="net"),
    _work("sys_futex", "futex/txn", _SYS, 0.05, False, syscall="futex"),
    _work("sys_clock", "clock_gettime/txn", _SYS, 0.5, False, syscall="clock"),
    _work("sys_other", "other syscalls/txn", _SYS, 0.5, False, syscall="other"),
    # ... the simulated 32 KiB L1 instruction cache's misses (cost runs only): the code a transaction fetches,
    # which the forecast prices (docs/forecast.md); in the first cost run of each side only (the simulation
    # doubles the window), so never judged: instructions already judge the code
    _work("icache_misses", "L1i misses/txn (simulated)", _SYS, 50.0, False, event="I1mr"),
    # ... and server counters (SHOW GLOBAL STATUS deltas around the window; cost and timing runs).
    # background flushes (once a second with flush=2) follow wall time: 0.004-0.3 per transaction in cost
    # runs, so a floor of a quarter fsync per transaction; one more fsync per commit is still far beyond it
    _work("data_fsyncs", "data fsyncs/txn", _COUNT, 0.25, True, counters=("innodb_data_fsyncs",)),
    _work("log_fsyncs", "log fsyncs/txn", _COUNT, 0.25, True, counters=("innodb_os_log_fsyncs",)),
    _work("bp_reads", "buffer-pool reads/txn", _COUNT, 0.05, True, counters=("innodb_buffer_pool_reads",)),
    # background threads add to it on writes: CV 2.6 % (insert), 13.5 % (delete) in cost runs
    _work("bp_read_requests", "buffer-pool read requests/txn", _ROWS, 0.5, False,
          counters=("innodb_buffer_pool_read_requests",)),
    _work("pages_written", "pages written/txn", _COUNT, 0.05, False, counters=("innodb_pages_written",)),
    _work("data_written", "data bytes written/txn", _COUNT, 64.0, False, counters=("innodb_data_written",)),
    # the redo the transactions generated: MySQL's log sequence number moves by it, while its
    # Innodb_os_log_written counts 512-byte blocks as the log writer writes them, a partial block again at every
    # wake-up, which follows wall time. MariaDB's Innodb_os_log_written is its LSN's movement (docs/work-vector.md).
    _work("redo_written", "redo bytes written/txn", _COUNT, 64.0, True,
          counters=("innodb_redo_log_current_lsn|innodb_os_log_written",)),
    _work("row_lock_waits", "row-lock waits/txn", _COUNT, 0.05, False, counters=("innodb_row_lock_waits",)),
    _work("log_waits", "log waits/txn", _COUNT, 0.05, False, counters=("innodb_log_waits",)),
    _work("tmp_disk_tables", "tmp tables on disk/txn", _COUNT, 0.05, True, counters=("created_tmp_disk_tables",)),
    _work("sort_merge_passes", "sort merge passes/txn", _COUNT, 0.05, True, counters=("sort_merge_passes",)),
    # rows read and handler calls per transaction repeat to about 0.1 % (docs/work-vector.md): 5 % across
    # a thread sweep is flagged
    _work("handler_reads", "handler reads/txn", _ROWS, 0.5, True, sweep_limit=0.05,
          counters=tuple(f"handler_read_{k}" for k in _HANDLER_READS)),
    _work("handler_writes", "handler writes/txn", _ROWS, 0.5, True, sweep_limit=0.05,
          counters=("handler_write", "handler_update", "handler_delete")),
    _work("rows_read", "rows read/txn", _ROWS, 0.5, True, sweep_limit=0.05, counters=("rows_read|innodb_rows_read",)),
)  # fmt: skip

_BY_NAME: dict[str, Metric] = {m.name: m for m in CATALOGUE}
#: The fields of a per-operation metric (``p99_ms`` of ``READ.p99_ms``), in catalogue order.
OPERATION_FIELDS: tuple[str, ...] = tuple(m.field for m in CATALOGUE if m.per_operation)
#: Every type's operations per second together (a run-level metric of per-operation workloads).
TOTAL_OPS = "ops_per_s"


def valid_type(name: str) -> bool:
    """Operation types are upper-case identifiers (READ, NEW_ORDER)."""
    return bool(_TYPE.match(name))


def split_operation(name: str) -> tuple[str, str] | None:
    """``READ.p99_ms`` -> ("READ", "p99_ms"); None for a name that is not a per-type metric."""
    op, sep, field = name.partition(".")
    if not sep or not valid_type(op) or OPERATION + field not in _BY_NAME:
        return None
    return op, field


def find(name: str) -> Metric | None:
    """The catalogue entry of a metric name (``NEW_ORDER.p99_ms``: its template), None when unknown."""
    found = _BY_NAME.get(name)
    if found is not None and not found.per_operation:
        return found
    split = split_operation(name)
    return _BY_NAME[OPERATION + split[1]] if split else None


def metric(name: str) -> Metric:
    """The catalogue entry of a metric name; KeyError when the catalogue has none."""
    found = find(name)
    if found is None:
        raise KeyError(name)
    return found


def label(name: str) -> str:
    """What tables and charts call a metric (per-operation metrics and unknown names: the name itself)."""
    found = find(name)
    return name if found is None or found.per_operation else found.label


def term(name: str) -> str:
    """What a verdict's sentence calls a metric (``p95``; per-operation metrics: the name itself)."""
    found = find(name)
    return name if found is None or found.per_operation else found.term or found.label


def unit(name: str) -> str:
    found = find(name)
    return "" if found is None else found.unit


def higher_is_worse(name: str) -> bool:
    """The direction in which a metric gets worse (unknown names: lower, like a rate)."""
    found = find(name)
    return found is not None and found.higher_is_worse


def is_work(name: str) -> bool:
    found = _BY_NAME.get(name)
    return found is not None and found.work


def kind_metrics(kind: RunKind) -> tuple[str, ...]:
    """The metrics a kind of run's comparisons judge, in report order."""
    return tuple(m.name for m in CATALOGUE if kind in m.kinds)


#: Metrics a scenario may gate on and give a minimum effect, with the direction in which they get worse
#: (per-operation ones are named by pattern instead: ``ops_per_s``, ``READ.p99_ms``).
METRICS: dict[str, bool] = {m.name: m.higher_is_worse for m in CATALOGUE if m.gateable}
#: The components of the work vector, in report order.
WORK_METRICS: tuple[Metric, ...] = tuple(m for m in CATALOGUE if m.work)
#: The metrics the trend site charts, in order.
TREND_METRICS: tuple[str, ...] = tuple(m.name for m in CATALOGUE if m.trend)
#: The metrics a scenario gates on when it names none.
DEFAULT_GATE: tuple[str, ...] = tuple(m.name for m in CATALOGUE if m.gateable and m.gating)
#: The metric columns of the store's ``runs`` table, in order.
STORE_COLUMNS: tuple[str, ...] = tuple(m.store_column for m in CATALOGUE if m.store_column)
