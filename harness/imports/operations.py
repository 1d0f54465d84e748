"""Each operation type of an imported run: the tool's figures (:class:`ImportedOp`), then dbperf's
:class:`~harness.model.OperationStats`, stored and reported like a native run's.

go-tpc and go-ycsb print a few percentiles of each type, not its histogram, while ``OperationStats``
keeps a histogram in sysbench's buckets and reads its percentiles from it. :func:`quantile_histogram`
builds the histogram of the printed points: ``ceil(count * q)`` operations at or below each printed
q-th percentile, the rest at the maximum. Its p50, p95 and p99 are then the printed ones, to the width
of sysbench's buckets (about 1.8 %, so within 0.9 %); nothing is made up between them. A layout without
a 50th, 95th and 99th percentile (go-tpc before 2020-11, go-ycsb before 2023-01) gets no histogram:
its per-type percentiles stay empty rather than wrong (the counts, rates and mean are kept).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.imports.oplines import OpLine
from harness.model import LatencyBucket, OperationStats
from harness.model.operations import merge_histograms


@dataclass(frozen=True)
class ImportedOp:
    """One operation type of an imported run: its successes, failures, rate and latency (ms).

    ``count`` counts successes only (go-tpc's ``NEW_ORDER``, go-ycsb's ``READ``), ``errors`` the
    failures (``NEW_ORDER_ERR``, ``READ_ERROR``); the latency figures are the successes'.
    """

    name: str
    count: int
    errors: int
    time_s: float
    rate_per_s: float
    latency_sum_ms: float | None = None
    avg_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None


def fold_errors(lines: Sequence[OpLine], suffix: str, aggregate: str = "") -> tuple[ImportedOp, ...]:
    """One :class:`ImportedOp` per type: ``NAME`` and ``NAME<suffix>`` together; ``aggregate`` left out."""
    ok = {line.name: line for line in lines if not line.name.endswith(suffix) and line.name != aggregate}
    failed = {line.name[: -len(suffix)]: line for line in lines if line.name.endswith(suffix)}
    ops = []
    for name in sorted(ok.keys() | failed.keys()):
        line, err = ok.get(name), failed.get(name)
        if line is None:
            assert err is not None
            ops.append(ImportedOp(name=name, count=0, errors=err.count, time_s=err.takes_s, rate_per_s=0.0))
            continue
        ops.append(
            ImportedOp(
                name=name,
                count=line.count,
                errors=err.count if err else 0,
                time_s=line.takes_s,
                rate_per_s=line.rate_per_s,
                latency_sum_ms=line.sum_ms if line.sum_ms is not None else _mean_sum(line),
                avg_ms=line.avg_ms,
                min_ms=line.min_ms,
                max_ms=line.max_ms,
                p50_ms=line.p50_ms,
                p90_ms=line.p90_ms,
                p95_ms=line.p95_ms,
                p99_ms=line.p99_ms,
                p999_ms=line.p999_ms,
            )
        )
    return tuple(ops)


def _mean_sum(line: OpLine) -> float | None:
    return line.avg_ms * line.count if line.avg_ms is not None else None


def quantile_histogram(op: ImportedOp) -> tuple[LatencyBucket, ...]:
    """A histogram in sysbench's buckets whose p50, p95 and p99 are ``op``'s printed ones (see the module)."""
    printed = (
        (50.0, op.p50_ms),
        (90.0, op.p90_ms),
        (95.0, op.p95_ms),
        (99.0, op.p99_ms),
        (99.9, op.p999_ms),
        (100.0, op.max_ms),
    )
    if op.count == 0 or op.p50_ms is None or op.p95_ms is None or op.p99_ms is None:
        return ()
    points = [(q, v) for q, v in printed if v is not None]
    if points[-1][0] < 100.0:
        points.append((100.0, points[-1][1]))
    below = 0
    pairs = []
    for q, value in points:
        upto = min(op.count, math.ceil(op.count * q / 100.0 - 1e-9))
        if upto > below:
            pairs.append((value, upto - below))
            below = upto
    return merge_histograms([pairs])


def operation_stats(ops: Sequence[ImportedOp], seconds: float) -> tuple[OperationStats, ...]:
    """dbperf's per-type records of ``ops``, their rates over the run's ``seconds``."""
    return tuple(
        OperationStats(
            type=op.name,
            count=op.count,
            errors=op.errors,
            retries=0,  # neither tool retries, or counts retries
            latency_sum_ms=op.latency_sum_ms or 0.0,
            seconds=seconds,
            histogram=quantile_histogram(op),
        )
        for op in ops
    )
