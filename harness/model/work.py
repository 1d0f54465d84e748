"""The work vector: what a transaction made the server do beside executing instructions, per transaction.

Instructions counted under callgrind are user-space work only: kernel time, fsync latency, disk reads,
lock waits and scaling across threads cost wall time but almost no instructions (docs/work-vector.md). The work
vector counts those dimensions deterministically instead, in the same cost runs:

* **system calls by kind** (``sys_*``), from callgrind's ``sysCount`` event (``--collect-systime=yes``),
  booked to the libc function that made them: cost runs only;
* **simulated instruction-cache misses** (``icache_misses``), from callgrind's cache simulation
  (``--cache-sim=yes``, ``I1mr``): the code a transaction fetches; cost runs only;
* **server counters** (``SHOW GLOBAL STATUS`` deltas around the measured window): fsyncs of data and
  log, buffer-pool reads and read requests, pages and bytes written, row-lock and log waits, temporary
  tables on disk, sort merge passes, handler reads and writes, rows read: cost and timing runs.

Each component has a minimum effect that fits it and an absolute floor: a change is worth a verdict
only when it exceeds ``min_effect x base + floor`` per transaction, so 0 -> 0.99 fsyncs per transaction
is a regression and 0.0009 -> 0.0011 is not. The gate (:mod:`harness.judge.gate`) tests
``log(value + floor / min_effect)``, on which that threshold is exactly a relative change of
``min_effect`` (a ``--min-effect`` override keeps the floor), and zeros on both sides are equal.
Components that repeat across fresh servers (docs/work-vector.md) gate; the others are shown as
information only. Each component's label, minimum effect, floor, gating and source (a system call kind
or status counters) is its entry in the metric catalogue (:mod:`harness.model.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.model.metrics import WORK_METRICS, Metric

#: The components by name (their catalogue entries, :mod:`harness.model.metrics`).
WORK: dict[str, Metric] = {w.name: w for w in WORK_METRICS}
#: The status counters the work vector reads (every alternative name).
WORK_COUNTERS: tuple[str, ...] = tuple(
    dict.fromkeys(name for w in WORK_METRICS for names in w.counters for name in names.split("|"))
)


def _counter(deltas: Mapping[str, int], names: str) -> int | None:
    return next((deltas[n] for n in names.split("|") if n in deltas), None)


def work_vector(
    events: int,
    deltas: Mapping[str, int],
    syscalls: Mapping[str, int],
    cache_misses: Mapping[str, int] | None = None,
) -> dict[str, float]:
    """Every component the run measured, per transaction (a component whose counters the server lacks is
    left out, as are system calls in runs without ``sysCount`` and cache misses in runs without them)."""
    if events <= 0:
        return {}
    out: dict[str, float] = {}
    for w in WORK_METRICS:
        if w.event:
            if cache_misses and w.event in cache_misses:
                out[w.name] = cache_misses[w.event] / events
            continue
        if w.syscall:
            if w.syscall in syscalls:
                out[w.name] = syscalls[w.syscall] / events
            continue
        values = [_counter(deltas, names) for names in w.counters]
        present = [v for v in values if v is not None]
        if present:
            out[w.name] = max(0, sum(present)) / events
    return out
