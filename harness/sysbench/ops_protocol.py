"""The per-operation protocol: ``DBPERF-OPS {json}`` lines a workload script writes, one per thread.

Each sysbench thread of a script that uses ``scenarios/lua/dbperf_ops.lua`` writes in
``thread_done()``, with one ``io.write``::

    DBPERF-OPS {"thread": 0, "ops": {"READ": {"count": 9, "errors": 0, "retries": 0, "misses": 0,
                                             "latency_ms_sum": 1.23, "hist": [[0.105, 3], [0.107, 6]]}}}

``misses`` (optional, 0 when absent) counts the operations that read a row which must exist and found
none; the script decides which reads must find their row (YCSB's reads of acknowledged records).
:func:`miss_failure` turns any miss into the run's failure: a workload that reads records it never
wrote measures something else (scenarios/README.md, the per-operation protocol).

:func:`parse_operations` merges the threads: counts add up, histograms are merged bucket by bucket
(each value snapped to sysbench's 1024 log-scale buckets), and the rates are over the measured
window's seconds. A line that starts with the prefix and is not such a document raises
:class:`~harness.errors.LogParseError` with its line number: a workload that reports wrongly is a bug
to fix, not data to drop.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.errors import LogParseError
from harness.model.metrics import valid_type
from harness.model.operation_stats import OperationStats, merge_histograms
from harness.sysbench.failures import SysbenchFailure

OPS_PREFIX = "DBPERF-OPS "
_EXPECTED = 'DBPERF-OPS {"thread": N, "ops": {"TYPE": {"count": c, "errors": e, "retries": r, ...}}}'


@dataclass
class _Merged:
    count: int = 0
    errors: int = 0
    retries: int = 0
    misses: int = 0
    latency_sum_ms: float = 0.0
    histograms: list[list[tuple[float, int]]] = field(default_factory=list)


def _nonneg_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{value!r} is not a count")
    return value


def _histogram(value: object) -> list[tuple[float, int]]:
    if not isinstance(value, list):
        raise TypeError("hist is not a list")
    out = []
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], int | float) or pair[0] <= 0:
            raise ValueError(f"hist entry {pair!r} is not [value_ms, count]")
        out.append((float(pair[0]), _nonneg_int(pair[1])))
    return out


def _add(merged: dict[str, _Merged], document: object) -> None:
    if not isinstance(document, dict) or not isinstance(document.get("ops"), dict):
        raise TypeError("no 'ops' object")
    for op, entry in document["ops"].items():
        if not valid_type(op):
            raise ValueError(f"operation type {op!r} is not upper case")
        if not isinstance(entry, dict):
            raise TypeError(f"{op} is not an object")
        into = merged.setdefault(op, _Merged())
        into.count += _nonneg_int(entry.get("count"))
        into.errors += _nonneg_int(entry.get("errors", 0))
        into.retries += _nonneg_int(entry.get("retries", 0))
        into.misses += _nonneg_int(entry.get("misses", 0))
        latency = entry.get("latency_ms_sum", 0.0)
        if not isinstance(latency, int | float) or latency < 0:
            raise ValueError(f"{op}.latency_ms_sum {latency!r} is not a duration")
        into.latency_sum_ms += float(latency)
        into.histograms.append(_histogram(entry.get("hist", [])))


def parse_operations(
    lines: Iterable[str], seconds: float, *, path: str = "<sysbench output>"
) -> tuple[OperationStats, ...]:
    """Every thread's ``DBPERF-OPS`` line merged into one record per type, by type name.

    ``seconds`` is the measured window (sysbench's cumulative time) the rates are over. Output without
    such lines gives ``()``: the workload does not report per operation.
    """
    merged: dict[str, _Merged] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.startswith(OPS_PREFIX):
            continue
        try:
            _add(merged, json.loads(line[len(OPS_PREFIX) :]))
        except (ValueError, TypeError) as exc:
            raise LogParseError(path, lineno, f"expected {_EXPECTED}: {exc}") from exc
    return tuple(
        OperationStats(
            type=op,
            count=m.count,
            errors=m.errors,
            retries=m.retries,
            latency_sum_ms=m.latency_sum_ms,
            seconds=seconds,
            histogram=merge_histograms(m.histograms),
            misses=m.misses,
        )
        for op, m in sorted(merged.items())
    )


def miss_failure(operations: Iterable[OperationStats]) -> SysbenchFailure | None:
    """The run's failure when any operation read a row that must exist and found none, else None."""
    missed = [op for op in operations if op.misses > 0]
    if not missed:
        return None
    counts = ", ".join(f"{op.misses:,} of {op.count:,} {op.type}" for op in missed)
    return SysbenchFailure(
        kind="consistency",
        error_code=None,
        excerpt="",
        cause=f"the workload read records that do not exist ({counts} found no row), so it measured "
        "something other than its definition.",
        fix="the workload script must read only records whose insert was acknowledged "
        "(scenarios/README.md, the per-operation protocol); rerun after fixing it.",
    )
