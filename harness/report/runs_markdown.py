"""Markdown of plain runs, no verdicts (``dbperf report``): one row per scenario x server x threads,
medians over the repetitions, a median-QPS pivot by thread count when the table is long, then the
same closing sections as the verdict report (:mod:`harness.report.mdsections`)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from harness.model import METRICS, RunResult, Testbed
from harness.report.mdsections import ChartLinks, closing, run_notes, testbeds
from harness.report.mdtable import COLLAPSE_ABOVE, details, table
from harness.report.operation_tables import operations_markdown
from harness.report.tables import fmt_value
from harness.report.terminal import work_rows


@dataclass(frozen=True)
class RunGroup:
    """The repetitions of one scenario x server x threads, summarised."""

    scenario: str
    server: str
    threads: int
    versions: tuple[str, ...]
    ok: int
    failed: int
    medians: dict[str, float | None]
    qps_min: float | None
    qps_max: float | None
    qps_cv_pct: float | None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def summarise_runs(runs: Sequence[RunResult]) -> list[RunGroup]:
    """One :class:`RunGroup` per scenario x server x threads, sorted."""
    groups: dict[tuple[str, str, int], list[RunResult]] = defaultdict(list)
    for run in runs:
        groups[(run.scenario, run.server, run.threads)].append(run)
    result = []
    for (scenario, server, threads), members in sorted(groups.items()):
        ok = [r for r in members if r.ok]
        medians: dict[str, float | None] = {}
        for name in (*METRICS, "p50_ms"):
            values = [v for r in ok if (v := r.metrics.get(name)) is not None and math.isfinite(v)]
            medians[name] = _median(values)
        qps = [v for r in ok if (v := r.metrics.qps) is not None and math.isfinite(v)]
        cv = None
        if len(qps) >= 2 and statistics.fmean(qps) > 0:
            cv = statistics.stdev(qps) / statistics.fmean(qps) * 100.0
        result.append(
            RunGroup(
                scenario=scenario,
                server=server,
                threads=threads,
                versions=tuple(sorted({r.server_version for r in members if r.server_version})),
                ok=len(ok),
                failed=len(members) - len(ok),
                medians=medians,
                qps_min=min(qps) if qps else None,
                qps_max=max(qps) if qps else None,
                qps_cv_pct=cv,
            )
        )
    return result


_RUNS_HEADER = (
    "scenario", "server", "threads", "runs", "QPS (median)", "QPS min–max", "QPS CV",
    "p95 ms", "p99 ms", "CPU µs/txn", "instr/txn",
)  # fmt: skip


_RUNS_ALIGN = ("l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r")


def _runs_row(group: RunGroup) -> list[str]:
    runs = f"{group.ok}" + (f" (+{group.failed} failed)" if group.failed else "")
    spread = "-" if group.qps_min is None else f"{fmt_value(group.qps_min)}–{fmt_value(group.qps_max)}"
    cv = "-" if group.qps_cv_pct is None else f"{group.qps_cv_pct:.1f} %"
    m = group.medians
    return [
        group.scenario,
        f"`{group.server}`",
        str(group.threads),
        runs,
        fmt_value(m["qps"]),
        spread,
        cv,
        fmt_value(m["p95_ms"]),
        fmt_value(m["p99_ms"]),
        fmt_value(m["cpu_per_txn"]),
        fmt_value(m["instr_per_txn"]),
    ]


def _qps_pivot(groups: Sequence[RunGroup]) -> list[str]:
    """Median QPS with one column per thread count (like the tables of scaling write-ups)."""
    threads = sorted({g.threads for g in groups})
    cells: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for g in groups:
        cells[(g.scenario, g.server)][g.threads] = fmt_value(g.medians["qps"])
    header = ["scenario", "server", *(f"{t} thr" for t in threads)]
    align = ["l", "l", *("r" for _ in threads)]
    rows = (
        [scenario, f"`{server}`", *(row.get(t, "-") for t in threads)]
        for (scenario, server), row in sorted(cells.items())
    )
    return ["Median QPS by thread count:", "", *table(header, align, rows)]


def _work_section(runs: Sequence[RunResult]) -> list[str]:
    """The work per transaction (medians over the ok runs), components above zero only."""
    rows = work_rows(runs)
    if not rows:
        return []
    header = ("scenario", "server", "threads", "kind", "per transaction", "median", "min–max")
    body = table(header, ("l", "l", "r", "l", "l", "r", "r"), ([*row[:5], row[5], row[6]] for row in rows))
    if len(rows) > COLLAPSE_ABOVE:
        body = details(f"Work per transaction ({len(rows)} rows)", body)
    note = (
        "<sub>system calls: cost runs (callgrind's sysCount); server counters: SHOW GLOBAL STATUS over the "
        "measured window, every run; (info): shown, never gating.</sub>"
    )
    return ["### Work per transaction", "", *body, "", note, ""]


def render_runs_markdown(
    runs: Sequence[RunResult],
    *,
    title: str = "dbperf runs",
    testbed: Testbed | None = None,
    warnings: Sequence[str] = (),
    chart_links: ChartLinks = (),
) -> str:
    """Markdown of plain runs: one row per scenario x server x threads (medians over repetitions)."""
    groups = summarise_runs(runs)
    failed = sum(1 for r in runs if not r.ok)
    scenarios = len({g.scenario for g in groups})
    servers = len({g.server for g in groups})
    status = "❌" if failed else "✅"
    lines = [
        f"## {title}",
        "",
        f"{status} **{len(runs)} run(s)**, {failed} failed: {scenarios} scenario(s) on {servers} server(s).",
        "",
    ]
    if groups:
        body = table(_RUNS_HEADER, _RUNS_ALIGN, (_runs_row(g) for g in groups))
        if len(groups) > COLLAPSE_ABOVE:
            body = [
                *_qps_pivot(groups),
                "",
                *details(f"All {len(groups)} rows (scenario × server × threads)", body),
            ]
        lines += [
            *body,
            "",
            "<sub>medians over the ok repetitions; CV: coefficient of variation of QPS.</sub>",
            "",
        ]
    lines += operations_markdown(runs)
    lines += _work_section(runs)
    all_warnings = [*warnings, *run_notes(runs)]
    if len(testbeds(runs, None)) > 1 and testbed is None:
        all_warnings.append("these runs come from more than one testbed: compare them with care")
    noisy = [g for g in groups if g.qps_cv_pct is not None and g.qps_cv_pct > 10.0]
    all_warnings += [
        f"{g.scenario} `{g.server}` {g.threads}t: QPS varies by {g.qps_cv_pct:.1f} % between repetitions"
        for g in noisy
        if g.qps_cv_pct is not None
    ]
    lines += closing((), runs, all_warnings, testbed, chart_links)
    return "\n".join(lines).rstrip() + "\n"
