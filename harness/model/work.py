"""The work vector: what a transaction made the server do beside executing instructions, per transaction.

Instructions counted under callgrind are user-space work only: kernel time, fsync latency, disk reads,
lock waits and scaling across threads cost wall time but almost no instructions (docs/work-vector.md). The work
vector counts those dimensions deterministically instead, in the same cost runs:

* **system calls by kind** (``sys_*``), from callgrind's ``sysCount`` event (``--collect-systime=yes``),
  booked to the libc function that made them: cost runs only;
* **server counters** (``SHOW GLOBAL STATUS`` deltas around the measured window): fsyncs of data and
  log, buffer-pool reads and read requests, pages and bytes written, row-lock and log waits, temporary
  tables on disk, sort merge passes, handler reads and writes, rows read: cost and timing runs.

Each component has a minimum effect that fits it and an absolute floor: a change is worth a verdict
only when it exceeds ``min_effect x base + floor`` per transaction, so 0 -> 0.99 fsyncs per transaction
is a regression and 0.0009 -> 0.0011 is not. The gate (:mod:`harness.judge.gate`) tests
``log(value + floor / min_effect)``, on which that threshold is exactly a relative change of
``min_effect`` (a ``--min-effect`` override keeps the floor), and zeros on both sides are equal.
Components that repeat across fresh servers (docs/work-vector.md) gate; the others are shown as
information only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class WorkMetric:
    """One component of the work vector: where it comes from, and how it is judged.

    ``syscall`` names a system call kind (cost runs' ``sysCount``); ``counters`` the status counters
    summed (lower case; for each, the first of its ``|``-separated alternatives the server has: MariaDB
    and MySQL name some differently). ``gating`` components fail a build; the rest are information.
    """

    name: str
    label: str
    min_effect: float
    floor: float
    gating: bool
    syscall: str = ""
    counters: tuple[str, ...] = ()
    unit: str = "/txn"


_SYS = 0.10  # syscall kinds: a tenth more calls of a kind is a real change in what the server asks the kernel
_COUNT = 0.10  # counters of events (fsyncs, page reads, temporary tables)
_ROWS = 0.02  # row and handler counts, read requests: deterministic to about 0.1 %

#: The components, in report order.
WORK_METRICS: tuple[WorkMetric, ...] = (
    # the total carries the noisy kinds too (futex, poll and clock follow thread timing), so it never gates
    WorkMetric("sys_total", "syscalls/txn", 0.02, 0.5, False, syscall="total"),
    # MySQL 9.7 insert makes some inside dispatch with flush=2 too, following wall time (0.14 +-0.06, 2.1 +-0.11)
    WorkMetric("sys_fsync", "fsync+fdatasync/txn", _SYS, 0.25, True, syscall="fsync"),
    WorkMetric("sys_pwrite", "pwrite/txn", _SYS, 0.25, True, syscall="pwrite"),
    WorkMetric("sys_pread", "pread/txn", _SYS, 0.05, True, syscall="pread"),
    WorkMetric("sys_net", "send+recv/txn", _SYS, 0.05, False, syscall="net"),
    WorkMetric("sys_futex", "futex/txn", _SYS, 0.05, False, syscall="futex"),
    WorkMetric("sys_clock", "clock_gettime/txn", _SYS, 0.5, False, syscall="clock"),
    WorkMetric("sys_other", "other syscalls/txn", _SYS, 0.5, False, syscall="other"),
    # background flushes (once a second with flush=2) follow wall time: 0.004-0.3 per transaction in cost
    # runs, so a floor of a quarter fsync per transaction; one more fsync per commit is still far beyond it
    WorkMetric("data_fsyncs", "data fsyncs/txn", _COUNT, 0.25, True, counters=("innodb_data_fsyncs",)),
    WorkMetric("log_fsyncs", "log fsyncs/txn", _COUNT, 0.25, True, counters=("innodb_os_log_fsyncs",)),
    WorkMetric("bp_reads", "buffer-pool reads/txn", _COUNT, 0.05, True, counters=("innodb_buffer_pool_reads",)),
    WorkMetric(  # background threads add to it on writes: CV 2.6 % (insert), 13.5 % (delete) in cost runs
        "bp_read_requests",
        "buffer-pool read requests/txn",
        _ROWS,
        0.5,
        False,
        counters=("innodb_buffer_pool_read_requests",),
    ),
    WorkMetric("pages_written", "pages written/txn", _COUNT, 0.05, False, counters=("innodb_pages_written",)),
    WorkMetric("data_written", "data bytes written/txn", _COUNT, 64.0, False, counters=("innodb_data_written",)),
    # the redo the transactions generated: MySQL's log sequence number moves by it, while its
    # Innodb_os_log_written counts 512-byte blocks as the log writer writes them, a partial block again at every
    # wake-up, which follows wall time. MariaDB's Innodb_os_log_written is its LSN's movement (docs/work-vector.md).
    WorkMetric(
        "redo_written",
        "redo bytes written/txn",
        _COUNT,
        64.0,
        True,
        counters=("innodb_redo_log_current_lsn|innodb_os_log_written",),
    ),
    WorkMetric("row_lock_waits", "row-lock waits/txn", _COUNT, 0.05, False, counters=("innodb_row_lock_waits",)),
    WorkMetric("log_waits", "log waits/txn", _COUNT, 0.05, False, counters=("innodb_log_waits",)),
    WorkMetric("tmp_disk_tables", "tmp tables on disk/txn", _COUNT, 0.05, True, counters=("created_tmp_disk_tables",)),
    WorkMetric("sort_merge_passes", "sort merge passes/txn", _COUNT, 0.05, True, counters=("sort_merge_passes",)),
    WorkMetric(
        "handler_reads",
        "handler reads/txn",
        _ROWS,
        0.5,
        True,
        counters=(
            "handler_read_first",
            "handler_read_key",
            "handler_read_last",
            "handler_read_next",
            "handler_read_prev",
            "handler_read_rnd",
            "handler_read_rnd_next",
        ),
    ),
    WorkMetric(
        "handler_writes",
        "handler writes/txn",
        _ROWS,
        0.5,
        True,
        counters=("handler_write", "handler_update", "handler_delete"),
    ),
    WorkMetric("rows_read", "rows read/txn", _ROWS, 0.5, True, counters=("rows_read|innodb_rows_read",)),
)
WORK: dict[str, WorkMetric] = {w.name: w for w in WORK_METRICS}
#: The status counters the work vector reads (every alternative name).
WORK_COUNTERS: tuple[str, ...] = tuple(
    dict.fromkeys(name for w in WORK_METRICS for names in w.counters for name in names.split("|"))
)


def _counter(deltas: Mapping[str, int], names: str) -> int | None:
    return next((deltas[n] for n in names.split("|") if n in deltas), None)


def work_vector(events: int, deltas: Mapping[str, int], syscalls: Mapping[str, int]) -> dict[str, float]:
    """Every component the run measured, per transaction (a component whose counters the server lacks is
    left out, as are system calls in runs without ``sysCount``)."""
    if events <= 0:
        return {}
    out: dict[str, float] = {}
    for w in WORK_METRICS:
        if w.syscall:
            if w.syscall in syscalls:
                out[w.name] = syscalls[w.syscall] / events
            continue
        values = [_counter(deltas, names) for names in w.counters]
        present = [v for v in values if v is not None]
        if present:
            out[w.name] = max(0, sum(present)) / events
    return out
