"""The run stage: one scenario on one target, every thread count and repetition, each a stored run.

For each repetition and thread count: restore a private copy of the dataset snapshot, start a fresh
server on it (server on the target's CPU set, sysbench on the client CPU set), read back the effective
variables, run sysbench through the report hook with probes around the measured window, stop the
server and store the :class:`RunResult` at once (nothing is lost if a later run fails). Failed runs are
stored too, with their reason, and never become baselines.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from harness.dataset import DatasetCache, Snapshot
from harness.errors import HarnessError
from harness.model import (
    IntervalSample,
    Metrics,
    Probes,
    RunResult,
    Scenario,
    ServerTarget,
    Testbed,
    stable_hash,
)
from harness.run.probes import ProbeSession
from harness.servers import provider_for
from harness.servers.base import DatasetCredentials, Provider, RunningServer, read_variables
from harness.servers.variables import effective_variables
from harness.sysbench.driver import prepare, run, run_argv, workdir

#: Variables that differ between runs of the same configuration and must not enter the config hash.
_VOLATILE_VARIABLES = {
    "port",
    "report_port",
    "server_uid",
    "socket",
    "pid_file",
    "datadir",
    "log_error",
    "hostname",
    "server_uuid",
    "general_log_file",
    "slow_query_log_file",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "relay_log",
    "tmpdir",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "innodb_undo_directory",
    "gtid_executed",
    "gtid_purged",
    "timestamp",
    "warning_count",
    "error_count",
    "last_insert_id",
    "pseudo_thread_id",
    "rand_seed1",
    "rand_seed2",
    "large_page_size",
    "innodb_buffer_pool_load_at_startup",
    "secure_file_priv",
    "general_log",
    "bind_address",
    "open_files_limit",
}


def config_hash(variables: dict[str, str]) -> str:
    """Hash of the effective server variables, without per-instance values (paths, ports, ids).

    Besides the named volatile variables, any value holding the port, the datadir or one of dbperf's
    temporary folders is per-instance (MariaDB's aria_log_dir_path, MySQL's report_port, ...).
    """
    port = variables.get("port", "")
    datadir = variables.get("datadir", "").rstrip("/")

    def volatile(name: str, value: str) -> bool:
        return (
            name in _VOLATILE_VARIABLES
            or (bool(port) and value == port)
            or (bool(datadir) and datadir in value)
            or "/dbperf-" in value
        )

    return stable_hash({k: v for k, v in sorted(variables.items()) if not volatile(k, v)})


class Reporter(Protocol):
    """Where a measurement tells people what it is doing."""

    def phase(self, message: str) -> None: ...

    def interval(self, label: str, sample: IntervalSample) -> None: ...

    def finished(self, run: RunResult) -> None: ...


class QuietReporter:
    def phase(self, message: str) -> None:
        pass

    def interval(self, label: str, sample: IntervalSample) -> None:
        pass

    def finished(self, run: RunResult) -> None:
        pass


@dataclass(frozen=True)
class RunContext:
    """Who a run is, decided before it starts."""

    target: ServerTarget
    scenario: Scenario
    threads: int
    repetition: int
    testbed: Testbed
    git_sha: str
    group_id: str = ""
    label: str = ""
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])


@dataclass
class Session:
    """Everything runs of one invocation share: the cache, the store and the testbed."""

    cache: DatasetCache
    testbed: Testbed
    git_sha: str
    save: Callable[[RunResult], None]
    reporter: Reporter = field(default_factory=QuietReporter)
    sysbench_version: str = "1.0.20"
    _snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)
    _external_prepared: set[tuple[str, str]] = field(default_factory=set)

    def snapshot(self, provider: Provider, scenario: Scenario) -> Snapshot | None:
        target = provider.target
        if target.provider == "external":
            return None
        key = (target.name + "|" + stable_hash(target.identity()), stable_hash(scenario.dataset_key()))
        if key not in self._snapshots:
            self._snapshots[key] = self.cache.ensure(provider, scenario, self.sysbench_version, say=self.reporter.phase)
        return self._snapshots[key]

    @contextmanager
    def server(self, target: ServerTarget, scenario: Scenario) -> Iterator[RunningServer]:
        """A fresh server for one run: restored dataset for local/container, prepared tables for external."""
        provider = provider_for(target)
        snapshot = self.snapshot(provider, scenario)
        variables = effective_variables(target, scenario)
        if snapshot is None:
            credentials = provider.credentials() if hasattr(provider, "credentials") else DatasetCredentials("", "")
            with provider.serve(None, credentials, variables) as server:
                key = (target.name, stable_hash(scenario.dataset_key()))
                if key not in self._external_prepared:
                    self.reporter.phase(f"preparing {scenario.tables} x {scenario.table_size:,} rows on {target.name}")
                    _cleanup_external(server, scenario)
                    prepare(scenario, server.endpoint, threads=2)
                    self._external_prepared.add(key)
                yield server
            return
        with (
            self.cache.restore(snapshot) as datadir,
            provider.serve(datadir, snapshot.credentials, variables) as server,
        ):
            yield server


def _cleanup_external(server: RunningServer, scenario: Scenario) -> None:
    from harness.servers.base import run_sql

    run_sql(server.endpoint, [f"DROP TABLE IF EXISTS sbtest{i}" for i in range(1, scenario.tables + 1)])


def _failed(ctx: RunContext, started: datetime, reason: str, **extra: object) -> RunResult:
    return RunResult(
        run_id=ctx.run_id,
        started_at=started,
        finished_at=datetime.now(UTC),
        status="failed",
        failure=reason,
        target=ctx.target.name,
        flavour=ctx.target.flavour,
        provider=ctx.target.provider,
        server_version=str(extra.get("server_version", "")),
        config_hash=str(extra.get("config_hash", "")),
        scenario=ctx.scenario.name,
        scenario_hash=ctx.scenario.definition_hash,
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
        server_cpuset=ctx.target.cpuset or "",
        client_cpuset=ctx.target.client_cpuset or "",
    )


def run_once(session: Session, ctx: RunContext, server: RunningServer | None = None) -> RunResult:
    """One repetition at one thread count; the result is stored before returning.

    The run gets a fresh server from the dataset snapshot unless ``server`` is given (scenarios with
    ``fresh_server = false`` share one server across the thread counts of a repetition).
    """
    started = datetime.now(UTC)
    label = f"{ctx.target.name} {ctx.scenario.name} {ctx.threads}t #{ctx.repetition}"
    facts: dict[str, object] = {}
    try:
        with contextlib.ExitStack() as stack:
            if server is None:
                server = stack.enter_context(session.server(ctx.target, ctx.scenario))
            variables = read_variables(server.endpoint)
            facts = {"server_version": server.version, "config_hash": config_hash(variables)}
            probes = ProbeSession(server.host_pid, server.endpoint)
            scenario = ctx.scenario

            def on_interval(sample: IntervalSample) -> None:
                if not probes.started and sample.t_s >= scenario.warmup_s - 0.05:
                    probes.start()
                session.reporter.interval(label, sample)

            if scenario.warmup_s == 0:
                probes.start()
            session.reporter.phase(f"running {label} ({scenario.warmup_s} s warm-up + {scenario.time_s} s)")
            with workdir(scenario) as (folder, wrapper):
                argv = run_argv(scenario, server.endpoint, wrapper, ctx.threads, ctx.target.client_cpuset)
                try:
                    outcome = run(
                        argv,
                        cwd=folder,
                        warmup_s=scenario.warmup_s,
                        expected_s=scenario.warmup_s + scenario.time_s,
                        on_interval=on_interval,
                        timeout_s=(scenario.warmup_s + scenario.time_s) * 3 + 120,
                    )
                    readings = probes.stop() if server.alive() else Probes(instructions_note="server died")
                finally:
                    probes.abort()
            if outcome.failure is not None:
                reason = outcome.failure.message()
                if not server.alive():
                    reason = f"server died during the run ({server.error_log_tail()}); {reason}"
                result = _failed(ctx, started, reason, **facts)
                result = RunResult(
                    **{
                        **result.__dict__,
                        "intervals": outcome.intervals,
                        "variables": variables,
                        "options": {"argv": " ".join(outcome.argv)},
                    }
                )
            else:
                result = RunResult(
                    run_id=ctx.run_id,
                    started_at=started,
                    finished_at=datetime.now(UTC),
                    status="ok",
                    target=ctx.target.name,
                    flavour=ctx.target.flavour,
                    provider=ctx.target.provider,
                    server_version=server.version,
                    config_hash=str(facts["config_hash"]),
                    scenario=scenario.name,
                    scenario_hash=scenario.definition_hash,
                    profile=scenario.profile,
                    script=scenario.script,
                    threads=ctx.threads,
                    repetition=ctx.repetition,
                    warmup_s=scenario.warmup_s,
                    time_s=scenario.time_s,
                    testbed=ctx.testbed,
                    git_sha=ctx.git_sha,
                    variables=variables,
                    options={
                        "argv": " ".join(outcome.argv),
                        "rand_type": scenario.rand_type,
                        **dict(scenario.options),
                    },
                    server_cpuset=ctx.target.cpuset or "",
                    client_cpuset=ctx.target.client_cpuset or "",
                    group_id=ctx.group_id,
                    label=ctx.label,
                    intervals=outcome.intervals,
                    histogram=outcome.histogram,
                    totals=outcome.totals,
                    probes=readings,
                    metrics=Metrics.derive(outcome.totals, outcome.histogram, readings),
                )
    except HarnessError as exc:
        result = _failed(ctx, started, str(exc), **facts)
    session.save(result)
    session.reporter.finished(result)
    return result


def plan_runs(
    target: ServerTarget,
    scenario: Scenario,
    *,
    testbed: Testbed,
    git_sha: str,
    group_id: str = "",
    label: str = "",
    repetitions: int | None = None,
) -> list[RunContext]:
    """Every (repetition, thread count) of one scenario on one target, repetitions outermost."""
    reps = repetitions or scenario.repetitions
    return [
        RunContext(target, scenario, threads, rep, testbed, git_sha, group_id, label)
        for rep in range(1, reps + 1)
        for threads in scenario.threads
    ]


def _shares_server(a: RunContext, b: RunContext) -> bool:
    return not a.scenario.fresh_server and (a.target, a.scenario, a.repetition) == (b.target, b.scenario, b.repetition)


def measure(session: Session, contexts: Sequence[RunContext], *, stop_on_failure: bool = False) -> list[RunResult]:
    """Run the contexts in order; consecutive ones of a ``fresh_server = false`` repetition share a server."""
    results: list[RunResult] = []
    index = 0
    while index < len(contexts):
        group = [contexts[index]]
        while index + len(group) < len(contexts) and _shares_server(group[0], contexts[index + len(group)]):
            group.append(contexts[index + len(group)])
        index += len(group)
        if len(group) == 1:
            results.append(run_once(session, group[0]))
        else:
            try:
                with session.server(group[0].target, group[0].scenario) as server:
                    results += [run_once(session, ctx, server) for ctx in group]
            except HarnessError as exc:
                done = {r.run_id for r in results}
                results += [_stored_failure(session, ctx, str(exc)) for ctx in group if ctx.run_id not in done]
        if stop_on_failure and not results[-1].ok:
            break
    return results


def _stored_failure(session: Session, ctx: RunContext, reason: str) -> RunResult:
    result = _failed(ctx, datetime.now(UTC), reason)
    session.save(result)
    session.reporter.finished(result)
    return result


def new_group_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
