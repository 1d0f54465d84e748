"""The run stage: one scenario on one server, every thread count and repetition, each a stored run.

For each repetition and thread count: restore a private copy of the dataset snapshot, start a fresh
server on it (server on the server's CPU set, sysbench on the client CPU set), read back the effective
variables, run sysbench through the report hook with probes around the measured window, stop the
server and store the :class:`RunResult` at once (nothing is lost if a later run fails). Failed runs are
stored too, with their reason, and never become baselines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from harness.errors import HarnessError
from harness.measure import warmup
from harness.measure.context import RunContext, Served, build_result
from harness.measure.cost import run_cost
from harness.measure.neighbours import crowding_note
from harness.measure.probes import ProbeSession
from harness.measure.session import Session
from harness.model import (
    IntervalSample,
    Probes,
    RunKind,
    RunResult,
    Scenario,
    Server,
    Testbed,
)
from harness.servers.provider import ServerInstance
from harness.sysbench.driver import run, run_argv, workdir


def _adapt(session: Session, ctx: RunContext, profile_warmup: int, found: warmup.Trend | None) -> None:
    """Lengthen the warm-up of this scenario x threads for the next repetitions after a rising trend."""
    longer = warmup.next_warmup(ctx.scenario.warmup_s, profile_warmup, found)
    if longer > ctx.scenario.warmup_s:
        session.ledger.warmups[(ctx.scenario.name, ctx.threads)] = longer
        session.reporter.phase(
            f"warning: {ctx.scenario.name} {ctx.threads}t was {found.describe() if found else ''}; "
            f"warming up {longer} s from now on"
        )


def run_once(session: Session, ctx: RunContext, instance: ServerInstance | None = None) -> RunResult:
    """One repetition at one thread count; the result is stored before returning.

    The run gets a fresh server from the dataset snapshot unless ``instance`` is given (scenarios with
    ``fresh_server = false`` share one server across the thread counts of a repetition).
    """
    if ctx.kind == "cost":
        return run_cost(session, ctx, instance)
    started = datetime.now(UTC)
    profile_warmup = ctx.scenario.warmup_s
    ctx = replace(ctx, scenario=session.adapted(ctx.scenario, ctx.threads))
    return session.record(ctx, started, lambda served: _time(session, ctx, started, served, instance, profile_warmup))


def _time(
    session: Session,
    ctx: RunContext,
    started: datetime,
    served: Served,
    instance: ServerInstance | None,
    profile_warmup: int,
) -> RunResult:
    label = f"{ctx.server.name} {ctx.scenario.name} {ctx.threads}t #{ctx.repetition}"
    with contextlib.ExitStack() as stack:
        if instance is None:
            instance = stack.enter_context(session.instance(ctx.server, ctx.scenario))
        served.read(instance)
        probes = ProbeSession(instance.host_pid, instance.endpoint)
        scenario = ctx.scenario

        def on_interval(sample: IntervalSample) -> None:
            if not probes.started and sample.t_s >= scenario.warmup_s - 0.05:
                probes.start()
            session.reporter.interval(label, sample)

        # The window opens on sysbench's first interval line past the warm-up, or by the clock
        # shortly after the warm-up's end when a starved sysbench prints that line late (or not at
        # all before a short run ends): the probes then still cover most of the measured window.
        by_clock = probes.timer(scenario.warmup_s + min(2.0, max(0.5, scenario.time_s / 4)))
        stack.callback(by_clock.cancel)
        if scenario.warmup_s == 0:
            probes.start()
        crowd = _crowding(session, ctx)
        session.reporter.phase(f"running {label} ({scenario.warmup_s} s warm-up + {scenario.time_s} s)")
        with workdir(scenario) as (folder, wrapper):
            argv = run_argv(scenario, instance.endpoint, wrapper, ctx.threads, ctx.server.client_cpuset)
            try:
                by_clock.start()
                outcome = run(
                    argv,
                    cwd=folder,
                    warmup_s=scenario.warmup_s,
                    expected_s=scenario.warmup_s + scenario.time_s,
                    on_interval=on_interval,
                    timeout_s=(scenario.warmup_s + scenario.time_s) * 3 + 120,
                    on_notice=lambda cause: session.reporter.phase(f"warning: {label}: {cause}"),
                    server_pid=instance.host_pid,
                )
                readings = probes.stop() if instance.alive() else Probes(instructions_note="server died")
            finally:
                probes.abort()
        crowd = crowd or _crowding(session, ctx)
        command = " ".join(outcome.argv)
        if outcome.failure is not None:
            reason = outcome.failure.message()
            if not instance.alive():
                kept = session.keep_log(instance, ctx.run_id)
                reason = f"server died during the run ({instance.error_log_tail()}{kept}); {reason}"
            return build_result(
                ctx,
                started,
                "failed",
                failure=reason,
                server_version=served.version,
                config=served.config,
                variables=served.variables,
                options={"argv": command},
                intervals=outcome.intervals,
            )
        found = warmup.trend(outcome.intervals)
        _adapt(session, ctx, profile_warmup, found)
        return build_result(
            ctx,
            started,
            "ok",
            server_version=served.version,
            config=served.config,
            variables=served.variables,
            options={"argv": command, "rand_type": scenario.rand_type, **dict(scenario.options)},
            intervals=outcome.intervals,
            histogram=outcome.histogram,
            totals=outcome.totals,
            probes=readings,
            build_id=session.server_build(ctx.server),
            notes=(*session.ledger.warnings, *((found.describe(),) if found else ()), *((crowd,) if crowd else ())),
        )


def plan_runs(
    server: Server,
    scenario: Scenario,
    *,
    testbed: Testbed,
    git_sha: str,
    group_id: str = "",
    label: str = "",
    repetitions: int | None = None,
    kind: RunKind = "time",
) -> list[RunContext]:
    """Every (repetition, thread count) of one scenario on one server, repetitions outermost.

    Cost runs take their repetitions and thread counts from the scenario's cost settings.
    """
    if kind == "cost":
        reps, counts = repetitions or scenario.cost.repetitions, scenario.cost.threads
    else:
        reps, counts = repetitions or scenario.repetitions, scenario.threads
    return [
        RunContext(server, scenario, threads, rep, testbed, git_sha, group_id, label, kind)
        for rep in range(1, reps + 1)
        for threads in counts
    ]


def _shares_server(a: RunContext, b: RunContext) -> bool:
    return not a.scenario.fresh_server and (a.server, a.scenario, a.repetition) == (b.server, b.scenario, b.repetition)


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
                with session.instance(group[0].server, group[0].scenario) as instance:
                    results += [run_once(session, ctx, instance) for ctx in group]
            except HarnessError as exc:
                done = {r.run_id for r in results}
                results += [_stored_failure(session, ctx, str(exc)) for ctx in group if ctx.run_id not in done]
        if stop_on_failure and not results[-1].ok:
            break
    return results


def _crowding(session: Session, ctx: RunContext) -> str:
    """A note (and, once per neighbour, a warning) when other dbperf runs measure on this run's CPUs."""
    note = crowding_note(ctx.server)
    if note and note not in session.ledger.warned:
        session.ledger.warned.add(note)
        session.reporter.phase(f"warning: {note}")
    return note


def _stored_failure(session: Session, ctx: RunContext, reason: str) -> RunResult:
    result = build_result(ctx, datetime.now(UTC), "failed", failure=reason)
    session.save(result)
    session.reporter.finished(result)
    return result
