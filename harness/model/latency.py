"""A latency histogram's buckets and percentiles (sysbench's ``--histogram`` and the per-operation protocol)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


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
