"""Each operation type of an imported run: the tool's figures (one :class:`~harness.imports.oplines.OpLine`
per type, its failures folded in by :func:`fold_errors`), then dbperf's
:class:`~harness.model.OperationStats`, stored and reported like a native run's.

go-tpc and go-ycsb print a few percentiles of each type, not its histogram, while ``OperationStats``
keeps a histogram in sysbench's buckets and reads its percentiles from it. :func:`quantile_histogram`
builds the histogram of the printed points: ``ceil(count * q)`` operations at or below each printed
q-th percentile, the rest at the maximum. Its p50, p95 and p99 are then the printed ones, to the width
of sysbench's buckets (about 1.8 %, so within 0.9 %); nothing is made up between them. A layout without
a 50th, 95th and 99th percentile (go-tpc before 2020-11, go-ycsb before 2023-01) gets no histogram:
its per-type percentiles stay empty rather than wrong (the counts, rates and mean are kept), and the
percentiles it did print are kept as printed (:func:`printed_percentiles`, a note on the run).

Each type's rate is the tool's own: its count over its own ``Takes(s)`` (go-tpc's TPM, go-ycsb's OPS),
not over the run's duration. go-ycsb counts the READ and UPDATE inside each READ_MODIFY_WRITE as READ
and UPDATE too; :func:`own_operations` takes them out, so no operation is counted inside another
(every figure go-ycsb printed is kept verbatim in the run's options, ``printed.<OPERATION>``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from harness.imports.oplines import OpLine
from harness.model import LatencyBucket, OperationStats
from harness.model.operation_stats import merge_histograms


def fold_errors(lines: Sequence[OpLine], suffix: str, aggregate: str = "") -> tuple[OpLine, ...]:
    """One :class:`~harness.imports.oplines.OpLine` per type: ``NAME`` with the failures of ``NAME<suffix>``
    as its ``errors`` and its latency sum (printed, or its mean times its count); ``aggregate`` left out."""
    ok = {line.name: line for line in lines if not line.name.endswith(suffix) and line.name != aggregate}
    failed = {line.name[: -len(suffix)]: line for line in lines if line.name.endswith(suffix)}
    ops = []
    for name in sorted(ok.keys() | failed.keys()):
        line, err = ok.get(name), failed.get(name)
        if line is None:
            assert err is not None
            ops.append(
                OpLine(lineno=err.lineno, name=name, takes_s=err.takes_s, count=0, rate_per_s=0.0, errors=err.count)
            )
            continue
        ops.append(
            replace(
                line,
                errors=err.count if err else 0,
                sum_ms=line.sum_ms if line.sum_ms is not None else _mean_sum(line),
            )
        )
    return tuple(ops)


def own_operations(ops: Sequence[OpLine], outer: str, inner: Sequence[str]) -> tuple[OpLine, ...]:
    """``ops`` with the ``inner`` calls each ``outer`` operation made taken out of their counts.

    go-ycsb's READ_MODIFY_WRITE makes one READ and one UPDATE, and go-ycsb counts them as READ and
    UPDATE besides; each RMW's own count is taken out of theirs (a type left with no operation of its
    own is dropped). Their latency figures stay go-ycsb's, over every call of that kind.
    """
    nested = next((op.count for op in ops if op.name == outer), 0)
    if nested == 0:
        return tuple(ops)
    out = []
    for op in ops:
        if op.name in inner:
            count = max(0, op.count - nested)
            if count == 0 and op.errors == 0:
                continue
            share = count / op.count if op.count else 0.0
            out.append(
                replace(
                    op,
                    count=count,
                    rate_per_s=op.rate_per_s * share,
                    sum_ms=op.avg_ms * count if op.avg_ms is not None else None,
                )
            )
            continue
        out.append(op)
    return tuple(out)


_PERCENTILES = (("p50", "p50_ms"), ("p90", "p90_ms"), ("p95", "p95_ms"), ("p99", "p99_ms"), ("p99.9", "p999_ms"))


def printed_percentiles(ops: Sequence[OpLine]) -> str:
    """Every percentile printed for each type, ``READ p99 2.55 ms, p99.9 3.65 ms; ...`` (max and 99.99th too)."""
    parts = []
    for op in ops:
        points = [(label, getattr(op, field)) for label, field in _PERCENTILES]
        points += [("p99.99", op.p9999_ms), ("max", op.max_ms)]
        shown = ", ".join(f"{label} {value:g} ms" for label, value in points if value is not None)
        if shown:
            parts.append(f"{op.name} {shown}")
    return "; ".join(parts)


def _mean_sum(line: OpLine) -> float | None:
    return line.avg_ms * line.count if line.avg_ms is not None else None


def quantile_histogram(op: OpLine) -> tuple[LatencyBucket, ...]:
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


def _own_seconds(op: OpLine, run_s: float) -> float:
    """The type's window, so that its rate is the printed one: ``count / rate`` (``Takes(s)`` to more
    than its printed one decimal), ``Takes(s)`` without a rate, the run's without either."""
    if op.count > 0 and op.rate_per_s > 0:
        return op.count / op.rate_per_s
    return op.takes_s if op.takes_s > 0 else run_s


def operation_stats(ops: Sequence[OpLine], seconds: float) -> tuple[OperationStats, ...]:
    """dbperf's per-type records of ``ops``, each type's rate the tool's own (its count over its own
    ``Takes(s)``, as printed: :func:`_own_seconds`)."""
    return tuple(
        OperationStats(
            type=op.name,
            count=op.count,
            errors=op.errors,
            retries=0,  # neither tool retries, or counts retries
            latency_sum_ms=op.sum_ms or 0.0,
            seconds=_own_seconds(op, seconds),
            histogram=quantile_histogram(op),
        )
        for op in ops
    )
