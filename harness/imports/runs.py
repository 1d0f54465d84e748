"""Turn parsed go-tpc and go-ycsb logs into stored runs, with each operation type's figures.

Like every import (:mod:`harness.imports.imported`), runs are filed as the user says, with a testbed
marked as imported and an id from the file's content. A log that stops before its final report is
stored as a failed run with its intervals. Each operation type becomes an
:class:`~harness.model.OperationStats` on the run (:mod:`harness.imports.printed_operations`), so imported
per-type figures are stored and reported like those of dbperf's own TPC-C and YCSB workloads.

What the tools do not print is left empty, never made up: neither counts queries (QPS is empty), and
a percentile of the whole mix is only known when the tool printed one (go-ycsb's ``TOTAL`` line, or a
log with a single operation type). The mean latency of the mix is exact (go-tpc prints each type's
``Sum(ms)``, go-ycsb its mean and count). Interval latency is 0.0 (not in the logs; sysbench's own
value when ``--percentile=0``).

go-tpc's ``tpmC`` is stored and shown as **NOPM**, "tpmC-like (unaudited)": New-Order transactions
per minute of an unaudited run, never an audited tpmC.

Every figure the tool printed in its final report is kept as printed, under the tool's definition, in
the run's options (``printed.<OPERATION>``, the line's text), and a note on each run says each tool's
histogram resolution beside its percentiles (:mod:`harness.imports.import_notes`). A
go-ycsb phase stored under one of dbperf's ycsb_a..f whose properties differ from it gets a note naming
both (:mod:`harness.imports.ycsb_reference`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from harness.imports.gotpc import GoTpcFormat, GoTpcLog
from harness.imports.goycsb import GoYcsbFormat, YcsbPhase
from harness.imports.import_notes import TPC_RESOLUTION, ycsb_notes
from harness.imports.imported import Filing, content_id, imported_run
from harness.imports.logformat import read_logs
from harness.imports.oplines import OpLine, interval_counts
from harness.imports.printed_operations import fold_errors, operation_stats, own_operations, printed_percentiles
from harness.model import IntervalSample, Metrics, RunResult, Totals

_RMW = "READ_MODIFY_WRITE"
#: The headline's name wherever it is shown (never "tpmC": that is reserved for audited results).
NOPM_LABEL = "NOPM (tpmC-like, unaudited)"
#: go-ycsb properties kept with an imported run (others may hold host names or passwords).
YCSB_PROPERTIES = (
    "workload",
    "recordcount",
    "operationcount",
    "threadcount",
    "target",
    "requestdistribution",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "fieldcount",
    "fieldlength",
    "maxscanlength",
    "scanlengthdistribution",
    "readallfields",
    "warmuptime",
    "maxexecutiontime",
    "measurement.interval",
    "batch.size",
)


@dataclass(frozen=True)
class ImportedRun:
    """A run read from a log, and its operation types (what the store's per-type table takes)."""

    run: RunResult
    operations: tuple[OpLine, ...]
    #: New-Order transactions per minute (go-tpc only); see :data:`NOPM_LABEL`.
    nopm: float | None = None


def _totals(
    time_s: float, events: int, errors: int, ops: Sequence[OpLine], whole: OpLine | None
) -> tuple[Totals, Metrics]:
    """Run totals and metrics; ``whole`` is the operation whose percentiles are the run's, if any.

    The mean, minimum and maximum are over the database calls, like go-ycsb's ``TOTAL``: a
    READ_MODIFY_WRITE is left out (its READ and UPDATE are counted already).
    """
    measured = [op for op in ops if op.count > 0 and op.name != _RMW]
    sums = [op.sum_ms for op in measured]
    calls = sum(op.count for op in measured)
    avg = sum(s for s in sums if s is not None) / calls if calls and None not in sums else None
    maxima = [op.max_ms for op in measured]
    minima = [op.min_ms for op in measured]
    totals = Totals(
        time_s=time_s,
        events=events,
        reads=0,
        writes=0,
        other=0,
        errors=errors,
        reconnects=0,
        latency_min_ms=whole.min_ms
        if whole
        else (min(m for m in minima if m is not None) if measured and None not in minima else None),
        latency_avg_ms=whole.avg_ms if whole and whole.avg_ms is not None else avg,
        latency_max_ms=whole.max_ms
        if whole
        else (max(m for m in maxima if m is not None) if measured and None not in maxima else None),
        latency_pct_ms=whole.p95_ms if whole else None,
    )
    metrics = Metrics(
        tps=events / time_s if time_s > 0 else None,
        p50_ms=whole.p50_ms if whole else None,
        p95_ms=whole.p95_ms if whole else None,
        p99_ms=whole.p99_ms if whole else None,
        p999_ms=whole.p999_ms if whole else None,
        errors_per_s=errors / time_s if time_s > 0 else None,
    )
    return totals, metrics


def _sample(t_s: float, interval_s: float, threads: int, events: int, errors: int) -> IntervalSample:
    return IntervalSample(
        t_s=t_s,
        interval_s=interval_s,
        threads_running=threads,
        events=events,
        reads=0,
        writes=0,
        other=0,
        errors=errors,
        reconnects=0,
        latency_pct_ms=0.0,
    )


# --------------------------------------------------------------------------------------------------
# go-tpc
# --------------------------------------------------------------------------------------------------


def tpc_run(log: GoTpcLog, filed: Filing, *, threads: int, text: str) -> ImportedRun:
    """One imported TPC-C run: NOPM, every transaction type, the ``[Current]`` intervals."""
    intervals = []
    t = 0.0
    for report in log.intervals:
        ops = fold_errors(report, "_ERR")
        dt = max(op.takes_s for op in ops)
        t += dt
        intervals.append(_sample(t, dt, threads, sum(o.count for o in ops), sum(o.errors for o in ops)))
    ops = fold_errors(log.summary, "_ERR")
    options = {"file": log.path, "tool": "go-tpc"}
    options.update({f"printed.{line.name}": line.printed for line in log.summary})
    nopm = None
    totals = None
    metrics = Metrics()
    failure = ""
    notes: tuple[str, ...] = ()
    if log.finished:
        new_order = next((op for op in ops if op.name == "NEW_ORDER"), None)
        nopm = log.tpmc if log.tpmc is not None else (new_order.rate_per_s * 60 if new_order else None)
        time_s = new_order.takes_s if new_order else max(op.takes_s for op in ops)
        events, errors = sum(op.count for op in ops), sum(op.errors for op in ops)
        single = [op for op in ops if op.count > 0]
        totals, metrics = _totals(time_s, events, errors, ops, single[0] if len(single) == 1 else None)
        if nopm is not None:
            options["nopm"] = f"{nopm:.1f}"
            options["headline"], options["headline_label"] = "NEW_ORDER.ops_per_min", NOPM_LABEL
            notes = (f"{NOPM_LABEL}: {nopm:.1f} New-Order transactions per minute (go-tpc prints it as 'tpmC')",)
        notes = (*notes, f"percentiles as go-tpc printed them: {printed_percentiles(ops)}; {TPC_RESOLUTION}")
        if log.tpm_total is not None:
            options["tpm_total"] = f"{log.tpm_total:.1f}"
        if log.efficiency_pct is not None:
            options["efficiency_pct"] = f"{log.efficiency_pct:.1f}"
    else:
        failure = "the log has no '[Summary]' report (an interrupted run); its intervals are kept"
        if log.failures:
            failure += f"; go-tpc said: {log.failures[-1]}"
    run = imported_run(
        filed,
        run_id=content_id(text),
        script="go-tpc tpcc run",
        threads=threads,
        client="go-tpc (imported)",
        failure=failure,
        totals=totals,
        metrics=metrics,
        intervals=tuple(intervals),
        options=options,
        notes=notes,
        operations=operation_stats(ops, totals.time_s) if totals else (),
    )
    return ImportedRun(run=run, operations=ops if log.finished else (), nopm=nopm)


# --------------------------------------------------------------------------------------------------
# go-ycsb
# --------------------------------------------------------------------------------------------------


def _ycsb_counts(ops: Sequence[OpLine]) -> tuple[int, int]:
    """Operations and failures. go-ycsb counts a READ_MODIFY_WRITE's READ and UPDATE besides the
    READ_MODIFY_WRITE itself; here it is one operation (sysbench's ycsb_f counts it once too)."""
    calls = sum(op.count for op in ops if op.name != _RMW)
    rmw = sum(op.count for op in ops if op.name == _RMW)
    return max(0, calls - rmw), sum(op.errors for op in ops)


def _elapsed(report: Sequence[OpLine]) -> float:
    total = next((line for line in report if line.name == "TOTAL"), None)
    return total.takes_s if total else max(line.takes_s for line in report)


def ycsb_run(phase: YcsbPhase, filed: Filing, *, text: str, path: str) -> ImportedRun:
    """One imported go-ycsb phase (a load phase is filed under ``<scenario>-load``)."""
    command = phase.command
    name = filed.scenario if command == "run" else f"{filed.scenario}-load"
    intervals = []
    previous: tuple[OpLine, ...] = ()
    t_prev = 0.0
    for report in phase.reports:
        t = _elapsed(report)
        events, errors = _ycsb_counts(fold_errors(interval_counts(report, previous), "_ERROR", "TOTAL"))
        intervals.append(_sample(t, max(t - t_prev, 0.0), phase.threads, events, errors))
        previous, t_prev = report, t
    options = {"file": path, "tool": "go-ycsb", "phase": command}
    options.update({f"ycsb.{k}": phase.properties[k] for k in YCSB_PROPERTIES if k in phase.properties})
    options.update({f"printed.{line.name}": line.printed for line in phase.final})
    if phase.wall_s is not None:
        options["wall_s"] = f"{phase.wall_s:.3f}"
    printed = fold_errors(phase.final, "_ERROR", "TOTAL")
    ops = own_operations(printed, _RMW, ("READ", "UPDATE"))
    notes = ycsb_notes(printed, ops, name if command == "run" else "", phase.properties)
    totals = None
    metrics = Metrics()
    failure = ""
    if phase.final:
        events, errors = _ycsb_counts(printed)
        whole_line = next((line for line in phase.final if line.name == "TOTAL"), None)
        whole = fold_errors([whole_line], "_ERROR")[0] if whole_line else None
        if whole is None:
            single = [op for op in ops if op.count > 0]
            whole = single[0] if len(single) == 1 else None
        totals, metrics = _totals(_elapsed(phase.final), events, errors, printed, whole)
    elif phase.finished:
        sink = phase.properties.get("measurement.output_file", "")
        failure = "go-ycsb printed no report after 'Run finished'" + (
            f" (measurement.output_file={sink} sent it to that file)" if sink else ""
        )
    else:
        failure = "the log has no 'Run finished' report (an interrupted run); its intervals are kept"
    run = imported_run(
        replace(filed, scenario=name),
        run_id=content_id(text, phase.lineno),
        script=f"go-ycsb {command}",
        threads=phase.threads,
        client="go-ycsb (imported)",
        failure=failure,
        totals=totals,
        metrics=metrics,
        intervals=tuple(intervals),
        options=options,
        notes=notes,
        operations=operation_stats(ops, totals.time_s) if totals else (),
    )
    return ImportedRun(run=run, operations=ops if phase.final else ())


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------


def import_go_tpc(
    paths: Sequence[Path], *, scenario: str, server: str, threads: int, server_version: str = "", group_id: str = ""
) -> list[ImportedRun]:
    """Parse every file first (so one bad file stores nothing), then return one run per file.

    ``group_id`` puts the runs of one import in one group (``dbperf report`` shows the newest group).
    """
    filed = Filing(scenario, server, server_version, group_id)
    return [tpc_run(read.log, filed, threads=threads, text=read.text) for read in read_logs(GoTpcFormat(), paths)]


def import_go_ycsb(
    paths: Sequence[Path], *, scenario: str, server: str, server_version: str = "", group_id: str = ""
) -> list[ImportedRun]:
    """Parse every file first, then return one run per phase (load, run) of each, in one group."""
    filed = Filing(scenario, server, server_version, group_id)
    return [
        ycsb_run(phase, filed, text=read.text, path=read.path)
        for read in read_logs(GoYcsbFormat(), paths)
        for phase in read.log.phases
    ]
