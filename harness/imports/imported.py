"""What every imported run shares, whichever client's log it was read from: who it is.

Logs say nothing about the server or the machine, so an imported run carries the scenario and server
names the user gives (:class:`Filing`), ``source = "import"``, ``profile = "import"`` and a testbed
marked as imported (never comparable with a measured baseline). Its id comes from the file's content,
so importing a file twice stores it once. Its record is built by the one builder,
:func:`harness.model.measurement.build_run`: a log that stops before its final report is a failed run
that keeps its intervals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from harness.model import IntervalSample, LatencyBucket, Metrics, OperationStats, RunResult, Testbed, Totals
from harness.model.measurement import Measurement, RunIdentity, build_run


@dataclass(frozen=True)
class Filing:
    """What the user says of the runs of one import: where to file them, and the server's version."""

    scenario: str
    server: str
    server_version: str = ""
    group_id: str = ""


def content_id(text: str, part: int | None = None) -> str:
    """An imported run's id: its file's content (and, for a log of several runs, the line its own starts at)."""
    data = text if part is None else f"{text}\0{part}"
    return "imp-" + hashlib.sha256(data.encode()).hexdigest()[:12]


def imported_testbed(client: str) -> Testbed:
    """The testbed of a run read from a log: only the client is known (``client``, as the run names it)."""
    return Testbed(
        cpu_model="unknown (imported log)",
        cores=0,
        memory_gb=0.0,
        kernel="unknown",
        disk="unknown",
        sysbench_version=client,
        container_engine=None,
        hostname="imported",
    )


def imported_run(
    filed: Filing,
    *,
    run_id: str,
    script: str,
    threads: int,
    client: str,
    failure: str,
    totals: Totals | None,
    metrics: Metrics | None,
    intervals: tuple[IntervalSample, ...],
    options: Mapping[str, str],
    histogram: tuple[LatencyBucket, ...] = (),
    notes: tuple[str, ...] = (),
    operations: tuple[OperationStats, ...] = (),
) -> RunResult:
    """One imported run's record: failed when ``failure`` says why (it keeps its intervals only)."""
    now = datetime.now(UTC)
    who = RunIdentity(
        run_id=run_id,
        server=filed.server,
        flavour="unknown",
        provider="import",
        scenario=filed.scenario,
        scenario_hash="",
        profile="import",
        script=script,
        threads=max(1, threads),
        repetition=1,
        warmup_s=0.0,
        time_s=totals.time_s if totals else 0.0,
        testbed=imported_testbed(client),
        source="import",
        group_id=filed.group_id,
    )
    measured = Measurement(
        started_at=now,
        finished_at=now,
        failure=failure,
        server_version=filed.server_version,
        options=options,
        notes=notes,
        intervals=intervals,
        histogram=histogram,
        totals=totals,
        metrics=metrics,
        operations=operations,
    )
    return build_run(who, measured)
