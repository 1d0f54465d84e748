"""Turn parsed go-tpc and go-ycsb logs into stored runs, with each operation type's figures.

Like :mod:`harness.sysbench.importer`: logs say nothing about the server or the machine, so imported
runs carry the scenario and server names the user gives, ``source = "import"``, ``profile =
"import"`` and a testbed marked as imported (never comparable with a measured baseline); a run id comes
from the file's content, so importing a file twice stores it once. A log that stops before its final
report is stored as a failed run with its intervals. Each operation type becomes an
:class:`~harness.model.OperationStats` on the run (:mod:`harness.imports.operations`), so imported
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

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import LogParseError
from harness.imports.gotpc import GoTpcLog, parse_go_tpc_log
from harness.imports.goycsb import YcsbPhase, parse_go_ycsb_log
from harness.imports.import_notes import TPC_RESOLUTION, ycsb_notes
from harness.imports.operations import ImportedOp, fold_errors, operation_stats, own_operations, printed_percentiles
from harness.imports.oplines import OpLine, interval_counts
from harness.model import IntervalSample, Metrics, RunResult, RunStatus, Testbed, Totals

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
    operations: tuple[ImportedOp, ...]
    #: New-Order transactions per minute (go-tpc only); see :data:`NOPM_LABEL`.
    nopm: float | None = None


def _testbed(tool: str) -> Testbed:
    return Testbed(
        cpu_model="unknown (imported log)",
        cores=0,
        memory_gb=0.0,
        kernel="unknown",
        disk="unknown",
        sysbench_version=f"{tool} (imported)",
        container_engine=None,
        hostname="imported",
    )


def _totals(
    time_s: float, events: int, errors: int, ops: Sequence[ImportedOp], whole: ImportedOp | None
) -> tuple[Totals, Metrics]:
    """Run totals and metrics; ``whole`` is the operation whose percentiles are the run's, if any.

    The mean, minimum and maximum are over the database calls, like go-ycsb's ``TOTAL``: a
    READ_MODIFY_WRITE is left out (its READ and UPDATE are counted already).
    """
    measured = [op for op in ops if op.count > 0 and op.name != _RMW]
    sums = [op.latency_sum_ms for op in measured]
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


@dataclass(frozen=True)
class _Who:
    """What the user says about the imported runs."""

    scenario: str
    server: str
    server_version: str
    threads: int
    group_id: str = ""


def _run(
    run_id: str,
    who: _Who,
    *,
    tool: str,
    script: str,
    failure: str,
    totals: Totals | None,
    metrics: Metrics,
    intervals: tuple[IntervalSample, ...],
    options: dict[str, str],
    notes: tuple[str, ...] = (),
    operations: Sequence[ImportedOp] = (),
) -> RunResult:
    now = datetime.now(UTC)
    status: RunStatus = "ok" if totals is not None and not failure else "failed"
    return RunResult(
        run_id=run_id,
        started_at=now,
        finished_at=now,
        status=status,
        failure=failure,
        source="import",
        server=who.server,
        flavour="unknown",
        provider="import",
        server_version=who.server_version,
        config_hash="",
        scenario=who.scenario,
        scenario_hash="",
        profile="import",
        script=script,
        threads=max(1, who.threads),
        group_id=who.group_id,
        repetition=1,
        warmup_s=0.0,
        time_s=totals.time_s if totals else 0.0,
        testbed=_testbed(tool),
        options=options,
        notes=notes,
        intervals=intervals,
        totals=totals if status == "ok" else None,
        metrics=metrics if status == "ok" else Metrics(),
        operations=operation_stats(operations, totals.time_s) if totals is not None and status == "ok" else (),
    )


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


def tpc_run(
    log: GoTpcLog, *, scenario: str, server: str, threads: int, server_version: str, text: str, group_id: str = ""
) -> ImportedRun:
    """One imported TPC-C run: NOPM, every transaction type, the ``[Current]`` intervals."""
    who = _Who(scenario, server, server_version, threads, group_id)
    intervals = []
    t = 0.0
    for report in log.intervals:
        ops = fold_errors(report, "_ERR")
        dt = max(op.time_s for op in ops)
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
        time_s = new_order.time_s if new_order else max(op.time_s for op in ops)
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
    run_id = "imp-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    run = _run(
        run_id,
        who,
        tool="go-tpc",
        script="go-tpc tpcc run",
        failure=failure,
        totals=totals,
        metrics=metrics,
        intervals=tuple(intervals),
        options=options,
        notes=notes,
        operations=ops,
    )
    return ImportedRun(run=run, operations=ops if log.finished else (), nopm=nopm)


# --------------------------------------------------------------------------------------------------
# go-ycsb
# --------------------------------------------------------------------------------------------------


def _ycsb_counts(ops: Sequence[ImportedOp]) -> tuple[int, int]:
    """Operations and failures. go-ycsb counts a READ_MODIFY_WRITE's READ and UPDATE besides the
    READ_MODIFY_WRITE itself; here it is one operation (sysbench's ycsb_f counts it once too)."""
    calls = sum(op.count for op in ops if op.name != _RMW)
    rmw = sum(op.count for op in ops if op.name == _RMW)
    return max(0, calls - rmw), sum(op.errors for op in ops)


def _elapsed(report: Sequence[OpLine]) -> float:
    total = next((line for line in report if line.name == "TOTAL"), None)
    return total.takes_s if total else max(line.takes_s for line in report)


def ycsb_run(
    phase: YcsbPhase, *, scenario: str, server: str, server_version: str, text: str, path: str, group_id: str = ""
) -> ImportedRun:
    """One imported go-ycsb phase (a load phase is filed under ``<scenario>-load``)."""
    command = phase.command
    name = scenario if command == "run" else f"{scenario}-load"
    who = _Who(name, server, server_version, phase.threads, group_id)
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
    digest = hashlib.sha256(f"{text}\0{phase.lineno}".encode()).hexdigest()[:12]
    run = _run(
        f"imp-{digest}",
        who,
        tool="go-ycsb",
        script=f"go-ycsb {command}",
        failure=failure,
        totals=totals,
        metrics=metrics,
        intervals=tuple(intervals),
        options=options,
        notes=notes,
        operations=ops,
    )
    return ImportedRun(run=run, operations=ops if phase.final else ())


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError as exc:
        raise LogParseError(str(path), 0, f"cannot read the file ({exc.strerror})") from exc


def import_go_tpc(
    paths: Sequence[Path], *, scenario: str, server: str, threads: int, server_version: str = "", group_id: str = ""
) -> list[ImportedRun]:
    """Parse every file first (so one bad file stores nothing), then return one run per file.

    ``group_id`` puts the runs of one import in one group (``dbperf report`` shows the newest group).
    """
    return _each(
        paths,
        lambda text, path: [
            tpc_run(
                parse_go_tpc_log(text, path),
                scenario=scenario,
                server=server,
                threads=threads,
                server_version=server_version,
                text=text,
                group_id=group_id,
            )
        ],
    )


def import_go_ycsb(
    paths: Sequence[Path], *, scenario: str, server: str, server_version: str = "", group_id: str = ""
) -> list[ImportedRun]:
    """Parse every file first, then return one run per phase (load, run) of each, in one group."""
    return _each(
        paths,
        lambda text, path: [
            ycsb_run(
                phase,
                scenario=scenario,
                server=server,
                server_version=server_version,
                text=text,
                path=path,
                group_id=group_id,
            )
            for phase in parse_go_ycsb_log(text, path).phases
        ],
    )


def _each(paths: Sequence[Path], read: Callable[[str, str], list[ImportedRun]]) -> list[ImportedRun]:
    runs: list[ImportedRun] = []
    for path in paths:
        runs.extend(read(_read(path), str(path)))
    return runs
