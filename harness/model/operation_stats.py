"""Per-operation statistics: counts, rates and latency percentiles of each operation type of a run.

A workload with several kinds of operation (YCSB's READ / UPDATE / INSERT / SCAN /
READ_MODIFY_WRITE, TPC-C's NEW_ORDER / PAYMENT / ...) reports each type on its own (the per-operation
protocol, scenarios/README.md); one :class:`OperationStats` per type is kept on the run.

Per-type metrics have names ``<TYPE>.<field>`` (``READ.p99_ms``, ``NEW_ORDER.ops_per_min``), one field
per ``<TYPE>.`` template of the metric catalogue (:mod:`harness.model.metrics`); ``ops_per_s`` is every
type's operations per second together.
:meth:`RunResult.metric` reads any metric of a run by name, the plain ones (``qps``) and these alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.model.latency import LatencyBucket, histogram_percentile
from harness.model.metrics import OPERATION_FIELDS, TOTAL_OPS, split_operation, valid_type

#: sysbench's latency histogram: 1024 log-scale buckets between 0.001 ms and 100 000 ms (sb_histogram.c).
BUCKETS = 1024
_DEDUCT = math.log(0.001)
_MULT = (BUCKETS - 1) / (math.log(100000.0) - _DEDUCT)


def bucket_index(value_ms: float) -> int:
    """The sysbench histogram bucket a latency falls in (sysbench's own rounding)."""
    if value_ms <= 0:
        return 0
    return min(BUCKETS - 1, max(0, math.floor((math.log(value_ms) - _DEDUCT) * _MULT + 0.5)))


def bucket_value(index: int) -> float:
    """The latency (ms) sysbench reports for bucket ``index``."""
    return math.exp(index / _MULT + _DEDUCT)


@dataclass(frozen=True)
class OperationStats:
    """One operation type of one run, over the measured window (warm-up excluded), every thread merged."""

    type: str
    count: int
    errors: int
    retries: int
    latency_sum_ms: float
    seconds: float  # the measured window the rates are over
    histogram: tuple[LatencyBucket, ...] = ()
    misses: int = 0  # operations (in count) that read a row which must exist and found none

    def __post_init__(self) -> None:
        if not valid_type(self.type):
            raise ValueError(f"operation type {self.type!r} must be upper case (READ, NEW_ORDER)")
        if self.count < 0 or self.errors < 0 or self.retries < 0 or self.misses < 0 or self.seconds < 0:
            raise ValueError(f"operation {self.type}: counts and seconds must not be negative")

    @property
    def ops_per_s(self) -> float | None:
        return self.count / self.seconds if self.seconds > 0 else None

    @property
    def ops_per_min(self) -> float | None:
        rate = self.ops_per_s
        return None if rate is None else rate * 60.0

    @property
    def avg_ms(self) -> float | None:
        return self.latency_sum_ms / self.count if self.count > 0 else None

    @property
    def errors_per_s(self) -> float | None:
        return self.errors / self.seconds if self.seconds > 0 else None

    @property
    def retries_per_s(self) -> float | None:
        return self.retries / self.seconds if self.seconds > 0 else None

    def percentile(self, pct: float) -> float | None:
        return histogram_percentile(self.histogram, pct) if self.histogram else None

    @property
    def p50_ms(self) -> float | None:
        return self.percentile(50)

    @property
    def p95_ms(self) -> float | None:
        return self.percentile(95)

    @property
    def p99_ms(self) -> float | None:
        return self.percentile(99)

    @property
    def p999_ms(self) -> float | None:
        return self.percentile(99.9)

    def get(self, field: str) -> float | None:
        """A field of :data:`OPERATION_FIELDS` by name."""
        if field not in OPERATION_FIELDS:
            return None
        value = getattr(self, field)
        return None if value is None else float(value)


def merge_histograms(histograms: Iterable[Iterable[tuple[float, int]]]) -> tuple[LatencyBucket, ...]:
    """Histograms (value ms, count) merged bucket by bucket, each value snapped to sysbench's bucket."""
    counts: dict[int, int] = {}
    for histogram in histograms:
        for value, count in histogram:
            index = bucket_index(value)
            counts[index] = counts.get(index, 0) + count
    return tuple(LatencyBucket(bucket_value(i), counts[i]) for i in sorted(counts) if counts[i] > 0)


def is_operation_metric(name: str) -> bool:
    return name == TOTAL_OPS or split_operation(name) is not None


def total_ops_per_s(operations: Sequence[OperationStats]) -> float | None:
    """Every type's operations over the longest type's window (a native run's types share one window;
    an imported type's is the tool's own ``Takes(s)``, which starts at that type's first operation)."""
    seconds = max((o.seconds for o in operations), default=0.0)
    if seconds <= 0:
        return None
    return sum(o.count for o in operations) / seconds


def operation_metric(operations: Sequence[OperationStats], name: str) -> float | None:
    """A per-type metric (or ``ops_per_s``) of these operations, None when absent."""
    if name == TOTAL_OPS:
        return total_ops_per_s(operations)
    split = split_operation(name)
    if split is None:
        return None
    found = [o for o in operations if o.type == split[0]]
    return found[0].get(split[1]) if found else None
