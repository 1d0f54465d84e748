"""Terminal output: live progress, run tables and the scaling table. Colour only on a terminal."""

from __future__ import annotations

import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC
from typing import TextIO

from rich.console import Console
from rich.table import Table

from harness.model import IntervalSample, RunResult
from harness.model.metrics import WORK_METRICS
from harness.report.operation_tables import operations_table
from harness.report.sweep_work import sweep_notes
from harness.report.tables import new_table, show

#: Width of piped output: wide enough that no table of dbperf's ever wraps (nothing is cut either way).
PIPE_WIDTH = 1000


class _Console(Console):
    """rich's console, except that a reader who closed the pipe (``dbperf runs | head``) is no exit 1
    (rich's own ``SystemExit(1)``, the regression code): the CLI leaves as SIGPIPE would
    (:func:`harness.cli._reader_gone`)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def console(stream: TextIO | None = None) -> Console:
    """A console that colours only when writing to a terminal (and never when NO_COLOR is set).

    On a terminal, tables fit its width (wrapping cells, or vertical when too narrow: see
    :mod:`harness.report.tables`); piped, lines are never wrapped (``COLUMNS`` sets a width).
    """
    out = stream or sys.stdout
    tty = out.isatty()
    width = None
    if not tty:
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH
    return _Console(file=out, highlight=False, soft_wrap=not tty, width=width)


def fmt(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


class TerminalReporter:
    """Progress on stderr: phases, one line per second (elapsed, QPS, p95), and each finished run."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.out = console(stream or sys.stderr)

    def phase(self, message: str) -> None:
        style = "yellow" if message.startswith("warning") else "cyan"
        self.out.print(f"[{style}]» {message}[/{style}]")

    def interval(self, label: str, sample: IntervalSample) -> None:
        tag = " [dim](warm-up)[/dim]" if sample.warmup else ""
        self.out.print(
            f"  [{sample.t_s:5.0f}s] qps {sample.qps:>10,.0f}  tps {sample.tps:>9,.0f}  "
            f"p95 {sample.latency_pct_ms:8.2f} ms  thds {sample.threads_running:>4}"
            f"{'  err/s ' + format(sample.errors / sample.interval_s, '.1f') if sample.errors else ''}{tag}"
        )

    def finished(self, run: RunResult) -> None:
        if run.ok and run.kind == "cost":
            work = run.metrics.work
            calls = (
                f", {fmt(work['sys_total'])} syscalls/txn (fsync {fmt(work.get('sys_fsync'))}, "
                f"pwrite {fmt(work.get('sys_pwrite'))}, pread {fmt(work.get('sys_pread'))})"
                if "sys_total" in work
                else ""
            )
            self.out.print(
                f"[green]✔[/green] {run.server} {run.scenario} {run.threads}t cost #{run.repetition}: "
                f"{fmt(run.metrics.instr_per_txn)} instructions/txn{calls}  (run {run.run_id})"
            )
        elif run.ok:
            m = run.metrics
            self.out.print(
                f"[green]✔[/green] {run.server} {run.scenario} {run.threads}t #{run.repetition}: "
                f"qps {fmt(m.qps)}  p95 {fmt(m.p95_ms)} ms  (run {run.run_id})"
            )
        else:
            self.out.print(f"[red]✘ {run.server} {run.scenario} {run.threads}t #{run.repetition}: {run.failure}[/red]")


#: The columns :func:`runs_table` leaves out first on a narrow terminal (:func:`harness.report.tables.show`).
RUNS_OPTIONAL = (
    "version", "TPS", "p50 ms", "p99 ms", "reconn/s", "err/s", "duration s", "rep", "CPU µs/txn", "p95 ms",
)  # fmt: skip
#: The columns :func:`run_listing` (``dbperf runs``) leaves out first on a narrow terminal.
LISTING_OPTIONAL = ("group", "rep", "started (UTC)", "p95 ms", "kind")


def runs_table(runs: Sequence[RunResult], title: str = "dbperf runs") -> Table:
    table = new_table(
        title,
        (
            ("scenario", "left"),
            ("server", "left"),
            ("version", "left"),
            ("threads", "right"),
            ("rep", "right"),
            ("status", "left"),
            ("kind", "left"),
            ("QPS", "right"),
            ("TPS", "right"),
            ("p50 ms", "right"),
            ("p95 ms", "right"),
            ("p99 ms", "right"),
            ("err/s", "right"),
            ("reconn/s", "right"),
            ("duration s", "right"),
            ("CPU µs/txn", "right"),
            ("instr/txn", "right"),
        ),
    )
    for run in runs:
        m = run.metrics
        status = "[green]ok[/green]" if run.ok else "[red]failed[/red]"
        table.add_row(
            run.scenario,
            run.server,
            run.server_version or "-",
            str(run.threads),
            str(run.repetition),
            status,
            run.kind,
            fmt(m.qps),
            fmt(m.tps),
            fmt(m.p50_ms, 3),
            fmt(m.p95_ms, 3),
            fmt(m.p99_ms, 3),
            fmt(m.errors_per_s),
            fmt(m.reconnects_per_s),
            fmt(run.totals.time_s if run.totals else None, 1),
            fmt(m.cpu_per_txn, 1),
            fmt(m.instr_per_txn, 0),
        )
    return table


def run_listing(runs: Sequence[RunResult], title: str) -> Table:
    """``dbperf runs``: when each run started (UTC), its id and its group (for ``--group``), what it was, the
    headline numbers; a run's full row is ``dbperf report --group ID``."""
    table = new_table(
        title,
        (
            ("started (UTC)", "left"),
            ("run id", "left"),
            ("group", "left"),
            ("scenario", "left"),
            ("server", "left"),
            ("threads", "right"),
            ("rep", "right"),
            ("kind", "left"),
            ("status", "left"),
            ("QPS", "right"),
            ("p95 ms", "right"),
            ("instr/txn", "right"),
        ),
    )
    for run in runs:
        m = run.metrics
        table.add_row(
            run.started_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            run.run_id,
            run.group_id or "-",
            run.scenario,
            run.server,
            str(run.threads),
            str(run.repetition),
            run.kind,
            "[green]ok[/green]" if run.ok else "[red]failed[/red]",
            fmt(m.qps),
            fmt(m.p95_ms, 3),
            fmt(m.instr_per_txn, 0),
        )
    return table


COLUMNS_SCALING = ("scenario", "server", "threads", "QPS", "p95 ms", "reps")


def scaling_table(runs: Sequence[RunResult]) -> Table | None:
    """Threads vs median QPS and p95 per server (None when there is only one thread count)."""
    ok = [r for r in runs if r.ok]
    if len({r.threads for r in ok}) < 2:
        return None
    groups: dict[tuple[str, str], dict[int, list[RunResult]]] = defaultdict(lambda: defaultdict(list))
    for run in ok:
        groups[(run.scenario, run.server)][run.threads].append(run)
    table = new_table(
        "scaling (median over repetitions)",
        [(name, "left" if name in {"scenario", "server"} else "right") for name in COLUMNS_SCALING],
    )
    for (scenario, server), by_threads in sorted(groups.items()):
        for threads in sorted(by_threads):
            group = by_threads[threads]
            qps = [r.metrics.qps for r in group if r.metrics.qps is not None]
            p95 = [r.metrics.p95_ms for r in group if r.metrics.p95_ms is not None]
            table.add_row(
                scenario,
                server,
                str(threads),
                fmt(statistics.median(qps) if qps else None),
                fmt(statistics.median(p95) if p95 else None, 3),
                str(len(group)),
            )
    return table


def work_rows(runs: Sequence[RunResult]) -> list[tuple[str, str, str, str, str, str, str]]:
    """(scenario, server, threads, kind, component, median, min-max) per transaction over the ok runs, for
    every work-vector component some run measured above zero (timing runs: the server's counters)."""
    groups: dict[tuple[str, str, int, str], list[RunResult]] = defaultdict(list)
    for run in runs:
        if run.ok and run.metrics.work:
            groups[(run.scenario, run.server, run.threads, run.kind)].append(run)
    rows = []
    for (scenario, server, threads, kind), group in sorted(groups.items()):
        for w in WORK_METRICS:
            values = [r.metrics.work[w.name] for r in group if w.name in r.metrics.work]
            if not values or not any(values):
                continue
            spread = f"{fmt(min(values), 3)}-{fmt(max(values), 3)}" if len(values) > 1 else "-"
            label = w.label + ("" if w.gating else " (info)")
            rows.append((scenario, server, str(threads), kind, label, fmt(statistics.median(values), 3), spread))
    return rows


def print_summary(runs: Sequence[RunResult], stream: TextIO | None = None) -> None:
    out = console(stream)
    show(out, runs_table(runs, title="dbperf summary"), RUNS_OPTIONAL)
    rows = work_rows(runs)
    if rows:
        columns = ("scenario", "server", "threads", "kind", "per transaction", "median", "min-max")
        work = new_table(
            "work per transaction (system calls: cost runs; server counters: every run; zeros left out)",
            [(name, "right" if name in {"threads", "median", "min-max"} else "left") for name in columns],
        )
        for row in rows:
            work.add_row(*row)
        show(out, work)
    scaling = scaling_table(runs)
    if scaling is not None:
        show(out, scaling)
    per_type = operations_table(runs)
    if per_type is not None:
        show(out, per_type)
    for note in sweep_notes(runs):  # a sweep whose work per transaction moved with the thread count
        out.print(f"warning: {note}", style="yellow", markup=False)
    failed = [r for r in runs if not r.ok]
    stored = len(runs)
    out.print(f"{stored} run(s) stored, {len(failed)} failed.")
