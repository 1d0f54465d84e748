"""The one place a :class:`~harness.model.RunResult` is built: who a run is, and what was measured of it.

A run's record is two halves. :class:`RunIdentity` is who the run is, known before it starts (its
server, scenario, place in its group, the machine); :class:`Measurement` is what came of it (its
figures, or why it failed, and what it learnt of its server). :func:`build_run` joins them with the
rules every run follows, measured by dbperf (``measure/context.py``), read from another client's log
(``harness/imports/``) or read back from the store (``store/rows.py``):

* a run with a failure is failed, any other ok (an ok run needs its totals: ``RunResult`` refuses it
  without them);
* a failed run keeps its intervals, probes and what it learnt of its server, never totals, metrics or
  per-operation figures: they are not a measurement;
* an ok run's metrics are the ones given (a cost run's, an import's, the stored ones), else derived
  from its totals, histogram and probes (:meth:`~harness.model.Metrics.derive`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from harness.model.latency import LatencyBucket
from harness.model.metrics import RunKind
from harness.model.operation_stats import OperationStats
from harness.model.run import (
    CostProfile,
    IntervalSample,
    Metrics,
    Probes,
    RunResult,
    Testbed,
    Totals,
)


@dataclass(frozen=True)
class RunIdentity:
    """Who a run is: decided before it starts (an import: what the user says and the log's file)."""

    run_id: str
    server: str
    flavour: str
    provider: str
    scenario: str
    scenario_hash: str
    profile: str
    script: str
    threads: int
    repetition: int
    warmup_s: float
    time_s: float
    testbed: Testbed
    source: str = "run"
    git_sha: str = ""
    group_id: str = ""
    label: str = ""
    kind: RunKind = "time"
    server_cpuset: str = ""
    client_cpuset: str = ""


@dataclass(frozen=True)
class Measurement:
    """What was measured of one run: its outcome, its figures, and what it learnt of its server."""

    started_at: datetime
    finished_at: datetime
    failure: str = ""  # why the run failed; empty: it did not
    server_version: str = ""
    config_hash: str = ""
    variables: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    intervals: tuple[IntervalSample, ...] = ()
    histogram: tuple[LatencyBucket, ...] = ()
    totals: Totals | None = None
    probes: Probes = field(default_factory=Probes)
    metrics: Metrics | None = None  # None: derived from the totals, histogram and probes
    operations: tuple[OperationStats, ...] = ()
    # how instructions were counted, on what build (see RunResult)
    backend: str = ""
    tool: str = ""
    arch: str = ""
    build_id: str = ""
    requested_hash: str = ""
    cost_profile: CostProfile | None = None


def build_run(who: RunIdentity, measured: Measurement) -> RunResult:
    """The run's record: ``who`` it is and what was ``measured``, under the rules of this module."""
    ok = not measured.failure
    if not ok:
        metrics = Metrics()
    elif measured.metrics is not None:
        metrics = measured.metrics
    else:
        metrics = Metrics.derive(measured.totals, measured.histogram, measured.probes)
    return RunResult(
        run_id=who.run_id,
        started_at=measured.started_at,
        finished_at=measured.finished_at,
        status="ok" if ok else "failed",
        failure=measured.failure,
        source=who.source,
        server=who.server,
        flavour=who.flavour,
        provider=who.provider,
        server_version=measured.server_version,
        config_hash=measured.config_hash,
        scenario=who.scenario,
        scenario_hash=who.scenario_hash,
        profile=who.profile,
        script=who.script,
        threads=who.threads,
        repetition=who.repetition,
        warmup_s=who.warmup_s,
        time_s=who.time_s,
        testbed=who.testbed,
        git_sha=who.git_sha,
        group_id=who.group_id,
        label=who.label,
        kind=who.kind,
        server_cpuset=who.server_cpuset,
        client_cpuset=who.client_cpuset,
        variables=measured.variables,
        options=measured.options,
        notes=measured.notes,
        intervals=measured.intervals,
        histogram=measured.histogram,
        totals=measured.totals if ok else None,
        probes=measured.probes,
        metrics=metrics,
        operations=measured.operations if ok else (),
        backend=measured.backend,
        tool=measured.tool,
        arch=measured.arch,
        build_id=measured.build_id,
        requested_hash=measured.requested_hash,
        cost_profile=measured.cost_profile,
    )
