"""Per-operation tables: one row per scenario x server x threads x operation type (medians over repetitions).

Workloads that report their operation types (YCSB's READ / UPDATE / ..., TPC-C's NEW_ORDER / ...; the
per-operation protocol in scenarios/README.md) get this table in the terminal summary and in both
Markdown reports. Runs of kind ``cost`` are left out: their rates and latencies are those of a server
slowed down by callgrind.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

from harness.model import OperationStats, RunResult
from harness.report.mdtable import table
from harness.report.tables import fmt_value, new_table


@dataclass(frozen=True)
class OperationRow:
    """One operation type of the repetitions of one scenario x server x threads."""

    scenario: str
    server: str
    threads: int
    type: str
    runs: int
    count: int  # median over the repetitions
    share: float  # of all operations of the runs
    ops_per_s: float | None
    ops_per_min: float | None
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    errors: int  # summed over the repetitions
    retries: int
    misses: int = 0  # reads that found no row, summed over the repetitions


def _median(values: Sequence[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else None


def operation_rows(runs: Sequence[RunResult]) -> list[OperationRow]:
    """The rows of the per-operation table, grouped and ordered like the run tables."""
    groups: dict[tuple[str, str, int], list[RunResult]] = defaultdict(list)
    for run in runs:
        if run.ok and run.kind == "time" and run.operations:
            groups[(run.scenario, run.server, run.threads)].append(run)
    rows = []
    for (scenario, server, threads), members in sorted(groups.items()):
        by_type: dict[str, list[OperationStats]] = defaultdict(list)
        for run in members:
            for op in run.operations:
                by_type[op.type].append(op)
        total = sum(op.count for ops in by_type.values() for op in ops)
        for op_type, ops in by_type.items():
            rows.append(
                OperationRow(
                    scenario=scenario,
                    server=server,
                    threads=threads,
                    type=op_type,
                    runs=len(ops),
                    count=round(statistics.median(o.count for o in ops)),
                    share=sum(o.count for o in ops) / total if total else 0.0,
                    ops_per_s=_median([o.ops_per_s for o in ops]),
                    ops_per_min=_median([o.ops_per_min for o in ops]),
                    avg_ms=_median([o.avg_ms for o in ops]),
                    p50_ms=_median([o.p50_ms for o in ops]),
                    p95_ms=_median([o.p95_ms for o in ops]),
                    p99_ms=_median([o.p99_ms for o in ops]),
                    errors=sum(o.errors for o in ops),
                    retries=sum(o.retries for o in ops),
                    misses=sum(o.misses for o in ops),
                )
            )
    return rows


_HEADER = (
    "scenario", "server", "threads", "operation", "share", "ops/s", "ops/min",
    "avg ms", "p50 ms", "p95 ms", "p99 ms", "errors", "retries", "misses",
)  # fmt: skip


def _cells(row: OperationRow) -> list[str]:
    return [
        row.scenario,
        row.server,
        str(row.threads),
        row.type,
        f"{row.share:.1%}",
        fmt_value(row.ops_per_s),
        fmt_value(row.ops_per_min),
        fmt_value(row.avg_ms),
        fmt_value(row.p50_ms),
        fmt_value(row.p95_ms),
        fmt_value(row.p99_ms),
        str(row.errors),
        str(row.retries),
        str(row.misses),
    ]


def headlines(runs: Sequence[RunResult]) -> list[str]:
    """The headline a workload declares (``headline = "NEW_ORDER.ops_per_min"``, "NOPM (tpmC-like,
    unaudited)" for tpcc), per scenario x server x threads, beside the TPS of the whole mix."""
    groups: dict[tuple[str, str, int, str, str], list[RunResult]] = defaultdict(list)
    for run in runs:
        metric = run.options.get("headline", "")
        if run.ok and run.kind == "time" and metric:
            label = run.options.get("headline_label") or metric
            groups[(run.scenario, run.server, run.threads, metric, label)].append(run)
    out = []
    for (scenario, server, threads, metric, label), members in sorted(groups.items()):
        value = _median([r.metric(metric) for r in members])
        tps = _median([r.metrics.tps for r in members])
        if value is None:
            continue
        mix = f"; the whole mix {fmt_value(tps)} TPS" if tps is not None else ""
        out.append(f"{label}: {fmt_value(value)} ({scenario} on {server}, {threads} threads{mix})")
    return out


def operations_table(runs: Sequence[RunResult]) -> Table | None:
    """The terminal table (None when no run reports operation types), the declared headlines above it."""
    rows = operation_rows(runs)
    if not rows:
        return None
    lines = headlines(runs)
    title = "per operation type (median over repetitions)"
    out = new_table(
        "\n".join([*lines, title]) if lines else title,
        [(name, "left" if name in {"scenario", "server", "operation"} else "right") for name in _HEADER],
    )
    for row in rows:
        out.add_row(*_cells(row))
    return out


def operations_markdown(runs: Sequence[RunResult]) -> list[str]:
    """The Markdown section (no lines when no run reports operation types)."""
    rows = operation_rows(runs)
    if not rows:
        return []
    body = []
    for row in rows:
        cells = _cells(row)
        cells[1] = f"`{row.server}`"
        body.append(cells)
    lead = [f"**{line.split(': ', 1)[0]}**: {line.split(': ', 1)[1]}  " for line in headlines(runs)]
    return [
        "### Per operation type",
        "",
        *([*lead, ""] if lead else []),
        *table(_HEADER, ("l", "l", "r", "l", *("r" for _ in _HEADER[4:])), body),
        "",
        "<sub>medians over the ok timing repetitions; share: of all operations; errors and retries: summed "
        "(retries are deadlocks and lock-wait timeouts retried before the operation succeeded or failed); "
        "misses: reads of a row that must exist that found none, summed (any fails the run); "
        "percentiles from each type's merged latency histogram.</sub>",
        "",
    ]
