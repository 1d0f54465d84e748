"""What the runs of one invocation share: the dataset cache, the testbed, where results are saved, and a
reporter that tells people what is happening."""

from __future__ import annotations

import errno
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from harness.dataset import DatasetCache
from harness.errors import HarnessError
from harness.measure.context import CostIdentity, RunContext, Served, build_result
from harness.measure.fallback import Unsaved
from harness.measure.provision import Provisioner, ProvisionMemo, ServerSetup
from harness.model import IntervalSample, RunResult, Scenario, Server, Testbed
from harness.servers.callgrind import Callgrind
from harness.servers.provider import ServerInstance
from harness.servers.variables import unmet_settings


class Reporter(Protocol):
    """Where a measurement tells people what it is doing."""

    def phase(self, message: str) -> None: ...

    def interval(self, label: str, sample: IntervalSample) -> None: ...

    def finished(self, run: RunResult) -> None: ...


class QuietReporter:
    """A reporter that says nothing (tests, benchmarks, the pytest plugin with progress off)."""

    def phase(self, message: str) -> None:
        pass

    def interval(self, label: str, sample: IntervalSample) -> None:
        pass

    def finished(self, run: RunResult) -> None:
        pass


def _os_failure(exc: OSError) -> str:
    """An operating-system error met while running, as one line that says where and what to do."""
    where = f" ({exc.filename})" if exc.filename else ""
    text = f"{exc.strerror or exc}{where}"
    if exc.errno == errno.ENOSPC:
        return (
            f"{text}: the disk filled up while the run went on; free space there, or point TMPDIR (server data "
            "folders, sysbench's and callgrind's files) at a disk with room"
        )
    return f"{text}: the run could not go on; fix what the system says, then run it again"


@dataclass
class Ledger:
    """What an invocation learns and owes while its runs go (the one mutable part of a :class:`Session`).

    Written by the runs of the invocation, read by the pipeline when it closes the outcome: warnings for
    the reports, warm-ups that runs showed were too short, runs the store could not take, and whether a
    run was interrupted (its group is then incomplete).
    """

    warnings: list[str] = field(default_factory=list)  # about the machine or the method, for the reports
    warmups: dict[tuple[str, int], int] = field(default_factory=dict)  # (scenario, threads) -> adapted warm-up
    unsaved: Unsaved = field(default_factory=Unsaved)  # runs the store could not take (see fallback)
    interrupted: bool = False  # an interrupted run was stored as failed (its group is incomplete)
    warned: set[str] = field(default_factory=set)  # warnings already given once
    #: settings a server did not take as asked, by server name: setting -> (requested, effective)
    read_back: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    spans: list[tuple[float, float]] = field(default_factory=list)  # each run's start and end (epoch seconds)
    comparisons: int = 0  # A/B comparisons the invocation made (its estimate's plan checks)


@dataclass(frozen=True)
class Live:
    """A run whose server is up: what :meth:`Session.record` hands the code that measures it.

    The measuring code (:mod:`harness.measure.timing`, :mod:`harness.measure.cost`) gets everything it
    needs here and never calls back into the session: the server and what was read of it, the scenario
    with the warm-up earlier runs showed it needs, who is told, the ledger it writes what it learns to,
    and the identity the run's record carries.
    """

    ctx: RunContext  # the run, its scenario's warm-up adapted (timing runs)
    started: datetime
    instance: ServerInstance
    served: Served
    reporter: Reporter
    ledger: Ledger
    profile_warmup: int  # the scenario's own warm-up, before adapting
    logs_dir: Path  # where a server that died keeps its log (its run folder goes when it stops)
    build_id: str = ""  # the server binary's GNU build-id, part of a timing baseline's identity
    cost: CostIdentity | None = None  # what a cost count depends on (cost runs)

    @property
    def label(self) -> str:
        c = self.ctx
        kind = " cost" if c.kind == "cost" else ""
        return f"{c.server.name} {c.scenario.name} {c.threads}t{kind} #{c.repetition}"


@dataclass(frozen=True)
class _Memo:
    """Lookups made once per invocation: each server setup, what was provisioned (snapshots, external datasets)."""

    provisioned: ProvisionMemo = field(default_factory=ProvisionMemo)


@dataclass(frozen=True)
class Session:
    """What the runs of one invocation share, fixed when it opens: the dataset cache, the testbed, the
    commit, where runs are saved and who is told; what the runs learn goes to its :class:`Ledger`."""

    cache: DatasetCache
    testbed: Testbed
    git_sha: str
    save: Callable[[RunResult], None]
    reporter: Reporter = field(default_factory=QuietReporter)
    sysbench_version: str = "1.0.20"
    ledger: Ledger = field(default_factory=Ledger)
    _memo: _Memo = field(default_factory=_Memo)

    def mark_interrupted(self, ctx: RunContext, started: datetime, exc: KeyboardInterrupt) -> None:
        """Store the interrupted run as failed, so its group never looks complete to reports and judging."""
        if self.ledger.interrupted:
            return
        self.ledger.interrupted = True
        what = str(exc.args[0]) if exc.args else "SIGINT"
        group = f"; group {ctx.group_id} is incomplete and must not be judged" if ctx.group_id else ""
        where = f"{ctx.server.name} {ctx.scenario.name} {ctx.threads}t #{ctx.repetition}"
        with suppress(HarnessError):
            self.save(build_result(ctx, started, failure=f"interrupted ({what}) at {where}{group}"))

    def record(
        self,
        ctx: RunContext,
        measure: Callable[[Live], RunResult],
        *,
        instance: ServerInstance | None = None,
        callgrind: Callgrind | None = None,
    ) -> RunResult:
        """One run, stored and reported: its server (``instance`` when one is shared, else a fresh one from
        the dataset snapshot, under ``callgrind`` for a cost run) is started, read and handed to ``measure``
        with the rest of :class:`Live`; on a HarnessError or an OSError (a disk that filled up while the run
        went on), a failed run saying why (with the server's version and configuration if it got that
        far); on an interrupt, the interrupted run."""
        started = datetime.now(UTC)
        profile_warmup = ctx.scenario.warmup_s
        if ctx.kind == "time":
            ctx = replace(ctx, scenario=self.adapted(ctx.scenario, ctx.threads))
        served = Served()
        try:
            setup = self.setup(ctx.server, ctx.scenario, cost=ctx.kind == "cost")
            build = setup.server_build if ctx.kind == "time" else ""
            serving = nullcontext(instance) if instance else self.provisioner().started(setup, callgrind=callgrind)
            with serving as server:
                served.read(server)
                unmet = self.unmet_settings(ctx.server, setup.requested, served.variables)
                logs = self.cache.root.parent / "logs"
                live = Live(
                    ctx, started, server, served, self.reporter, self.ledger, profile_warmup, logs, build, setup.cost
                )
                result = measure(live)
                if unmet:
                    result = replace(result, notes=(*result.notes, *unmet))
        except (HarnessError, OSError) as exc:  # a full or failing disk ends this run, not the command
            failure = _os_failure(exc) if isinstance(exc, OSError) else str(exc)
            result = build_result(ctx, started, failure=failure, server_version=served.version, config=served.config)
        except KeyboardInterrupt as exc:
            self.mark_interrupted(ctx, started, exc)
            raise
        self.save(result)
        self.ledger.spans.append((result.started_at.timestamp(), result.finished_at.timestamp()))
        self.reporter.finished(result)
        return result

    def unmet_settings(
        self, server: Server, requested: Mapping[str, str], effective: dict[str, str]
    ) -> tuple[str, ...]:
        """Notes for the settings the started server does not run with as asked (``requested``, read back in
        ``effective``: it clamped, rounded or ignored them), each also said once as a warning: the run
        measured the server's value."""
        unmet = unmet_settings(requested, effective)
        notes = []
        if unmet:
            self.ledger.read_back.setdefault(server.name, {}).update(unmet)
        for name, (asked, runs) in sorted(unmet.items()):
            note = (
                f"{server.name}: {name} = {asked} was asked for, the server runs with {runs} (it clamped, rounded "
                f"or ignored the value): the runs measure {name} = {runs}"
            )
            notes.append(note)
            if note not in self.ledger.warned:
                self.ledger.warned.add(note)
                self.reporter.phase(f"warning: {note}")
        return tuple(notes)

    def adapted(self, scenario: Scenario, threads: int) -> Scenario:
        """The scenario with the warm-up earlier runs of it showed it needs (see :mod:`harness.measure.warmup`)."""
        warmup = self.ledger.warmups.get((scenario.name, threads))
        return scenario if warmup is None or warmup <= scenario.warmup_s else scenario.with_overrides(warmup_s=warmup)

    def setup(self, server: Server, scenario: Scenario, *, cost: bool = False) -> ServerSetup:
        """The invocation's one resolved setup of ``server`` for ``scenario`` (:mod:`harness.measure.provision`):
        its provider, server variables, builds, dataset snapshot key and, with ``cost``, its cost identity."""
        return self.provisioner().setup(server, scenario, cost=cost)

    @property
    def prepared(self) -> list[tuple[float, float]]:
        """When the invocation looked up or built its dataset snapshots (epoch seconds, start and end)."""
        return self.cache.prepared

    def provisioner(self) -> Provisioner:
        """The invocation's one way to a started server with its dataset (what it provisioned is shared)."""
        return Provisioner(self.cache, self.sysbench_version, self.reporter.phase, self._memo.provisioned)

    @contextmanager
    def instance(
        self, server: Server, scenario: Scenario, *, callgrind: Callgrind | None = None
    ) -> Iterator[ServerInstance]:
        """A fresh server for one run with its dataset ready, reaped on leaving (:mod:`harness.measure.provision`)."""
        provisioner = self.provisioner()
        with provisioner.started(provisioner.setup(server, scenario), callgrind=callgrind) as instance:
            yield instance


def new_group_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
