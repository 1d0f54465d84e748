"""Who a run is (decided before it starts), and a measured run's record from what it measured."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from harness.model import (
    CostProfile,
    IntervalSample,
    LatencyBucket,
    Metrics,
    OperationStats,
    Probes,
    RunKind,
    RunResult,
    Scenario,
    Server,
    Testbed,
    Totals,
)
from harness.model.history import one_off_note
from harness.model.ids import config_hash
from harness.model.measurement import Measurement, RunIdentity, build_run
from harness.servers.provider import ServerInstance, read_variables


@dataclass(frozen=True)
class CostIdentity:
    """What a cost run's count depends on besides the scenario: how it was counted, on what build and config."""

    backend: str
    tool: str
    arch: str
    build_id: str
    requested_hash: str


@dataclass(frozen=True)
class RunContext:
    """Who a run is, decided before it starts."""

    server: Server
    scenario: Scenario
    threads: int
    repetition: int
    testbed: Testbed
    git_sha: str
    group_id: str = ""
    label: str = ""
    kind: RunKind = "time"
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])


@dataclass
class Served:
    """What a run has learnt of its server so far, filled in as it goes (a failed run keeps it)."""

    version: str = ""
    config: str = ""
    variables: dict[str, str] = field(default_factory=dict)

    def read(self, instance: ServerInstance) -> None:
        """The server's version and effective variables, and the hash of those."""
        self.variables = read_variables(instance.endpoint)
        self.version, self.config = instance.version, config_hash(self.variables)


def identity(ctx: RunContext) -> RunIdentity:
    """Who the run of ``ctx`` is, as its record says."""
    return RunIdentity(
        run_id=ctx.run_id,
        server=ctx.server.name,
        flavour=ctx.server.flavour,
        provider=ctx.server.provider,
        scenario=ctx.scenario.name,
        # a cost count depends on the [cost] settings (event counts, seeds), not on the profile's durations
        scenario_hash=ctx.scenario.cost_hash if ctx.kind == "cost" else ctx.scenario.definition_hash,
        profile=ctx.scenario.profile,
        script=ctx.scenario.script,
        threads=ctx.threads,
        repetition=ctx.repetition,
        warmup_s=ctx.scenario.warmup_s,
        time_s=ctx.scenario.time_s,
        testbed=ctx.testbed,
        git_sha=ctx.git_sha,
        group_id=ctx.group_id,
        label=ctx.label,
        kind=ctx.kind,
        server_cpuset=ctx.server.cpuset or "",
        client_cpuset=ctx.server.client_cpuset or "",
    )


def build_result(
    ctx: RunContext,
    started: datetime,
    *,
    failure: str = "",
    server_version: str = "",
    config: str = "",
    variables: Mapping[str, str] | None = None,
    options: Mapping[str, str] | None = None,
    intervals: tuple[IntervalSample, ...] = (),
    histogram: tuple[LatencyBucket, ...] = (),
    totals: Totals | None = None,
    probes: Probes | None = None,
    notes: tuple[str, ...] = (),
    metrics: Metrics | None = None,
    cost: CostIdentity | None = None,
    cost_profile: CostProfile | None = None,
    build_id: str = "",
    operations: tuple[OperationStats, ...] = (),
) -> RunResult:
    """A measured run's record (failed when ``failure`` says why), through the one builder,
    :func:`harness.model.measurement.build_run`: identity from the context, the measurement from the run."""
    readings = probes or Probes()
    measured = Measurement(
        started_at=started,
        finished_at=datetime.now(UTC),
        failure=failure,
        server_version=server_version,
        config_hash=config,
        variables=variables or {},
        options=options or {},
        notes=(*((one_off_note(ctx.server.one_off),) if ctx.server.one_off else ()), *notes),
        intervals=intervals,
        histogram=histogram,
        totals=totals,
        probes=readings,
        metrics=metrics,
        operations=operations,
        backend=cost.backend if cost else ("perf" if readings.instructions is not None else ""),
        tool=cost.tool if cost else "",
        arch=cost.arch if cost else "",
        build_id=cost.build_id if cost else build_id,
        requested_hash=cost.requested_hash if cost else "",
        cost_profile=cost_profile,
    )
    return build_run(identity(ctx), measured)
