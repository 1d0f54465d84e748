"""The run stage: one scenario on one server, every thread count and repetition, each a stored run.

For each repetition and thread count: restore a private copy of the dataset snapshot, start a fresh
server on it (server on the server's CPU set, sysbench on the client CPU set), read back the effective
variables, run sysbench through the report hook with probes around the measured window, stop the
server and store the :class:`RunResult` at once (nothing is lost if a later run fails). Failed runs are
stored too, with their reason, and never become baselines.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from harness.errors import HarnessError, ServerError
from harness.measure import warmup
from harness.measure.consistency import run_check
from harness.measure.context import RunContext, build_result
from harness.measure.cost import run_cost
from harness.measure.neighbours import crowding_note
from harness.measure.probes import ProbeSession
from harness.measure.session import Live, Session
from harness.model import (
    IntervalSample,
    LatencyBucket,
    Probes,
    RunKind,
    RunResult,
    Scenario,
    Server,
    Testbed,
    Totals,
)
from harness.servers.provider import ServerInstance, gone, held_status
from harness.sysbench.command_lines import run_argv, workdir
from harness.sysbench.driver import run


def _adapt(live: Live, found: warmup.Trend | None) -> None:
    """Lengthen the warm-up of this scenario x threads for the next repetitions after a rising trend."""
    ctx = live.ctx
    longer = warmup.next_warmup(ctx.scenario.warmup_s, live.profile_warmup, found)
    if longer > ctx.scenario.warmup_s:
        live.ledger.warmups[(ctx.scenario.name, ctx.threads)] = longer
        live.reporter.phase(
            f"warning: {ctx.scenario.name} {ctx.threads}t was {found.describe() if found else ''}; "
            f"warming up {longer} s from now on"
        )


def run_once(session: Session, ctx: RunContext, instance: ServerInstance | None = None) -> RunResult:
    """One repetition at one thread count; the result is stored before returning.

    The run gets a fresh server from the dataset snapshot unless ``instance`` is given (scenarios with
    ``fresh_server = false`` share one server across the thread counts of a repetition).
    """
    if ctx.kind == "cost":
        return run_cost(session, ctx)
    return session.record(ctx, _time, instance=instance)


def _kept_log(live: Live) -> str:
    """Keep a dead server's log beside the dataset cache (its run folder goes when it stops)."""
    destination = live.logs_dir / f"{live.ctx.run_id}.log"
    return f"; its log is kept in {destination}" if live.instance.save_log(destination) else ""


def _time(live: Live) -> RunResult:
    ctx, instance, served, label = live.ctx, live.instance, live.served, live.label
    scenario = ctx.scenario
    with contextlib.ExitStack() as stack:
        probes = ProbeSession(
            instance.host_pid, instance.endpoint, _held_counters(stack, instance), window_s=scenario.time_s
        )

        def on_interval(sample: IntervalSample) -> None:
            if not probes.started and sample.t_s >= scenario.warmup_s - 0.05:
                probes.start()
            live.reporter.interval(label, sample)

        # The window opens on sysbench's first interval line past the warm-up, or by the clock
        # shortly after the warm-up's end when a starved sysbench prints that line late (or not at
        # all before a short run ends): the probes then still cover most of the measured window.
        # sysbench's clock starts when its clients are ready ("Threads started!"), which may take seconds
        # at hundreds of clients on a loaded machine, so that is where the fallback clock starts too.
        by_clock = probes.timer(scenario.warmup_s + min(2.0, max(0.5, scenario.time_s / 4)))
        stack.callback(by_clock.cancel)

        def on_started() -> None:
            if scenario.warmup_s == 0:
                probes.start()
            else:
                by_clock.start()

        crowd = _crowding(live)
        live.reporter.phase(f"running {label} ({scenario.warmup_s} s warm-up + {scenario.time_s} s)")
        with workdir(scenario) as (folder, wrapper):
            argv = run_argv(scenario, instance.endpoint, wrapper, ctx.threads, ctx.server.client_cpuset)
            try:
                outcome = run(
                    argv,
                    cwd=folder,
                    warmup_s=scenario.warmup_s,
                    expected_s=scenario.warmup_s + scenario.time_s,
                    on_interval=on_interval,
                    timeout_s=(scenario.warmup_s + scenario.time_s) * 3 + 120,
                    on_notice=lambda cause: live.reporter.phase(f"warning: {label}: {cause}"),
                    server_pid=instance.host_pid,
                    on_started=on_started,
                )
                readings = probes.stop() if instance.alive() else Probes(instructions_note="server died")
            finally:
                probes.abort()
        crowd = crowd or _crowding(live)
        command = " ".join(outcome.argv)
        failure = outcome.failure.message() if outcome.failure is not None else None
        if failure is not None and gone(instance):
            failure = f"server died during the run ({instance.error_log_tail()}{_kept_log(live)}); {failure}"
        failure = failure or _post_run_check(live)  # the workload's own check of its writes (tpcc)
        if failure:
            return build_result(
                ctx,
                live.started,
                failure=failure,
                server_version=served.version,
                config=served.config,
                variables=served.variables,
                options={"argv": command},
                intervals=outcome.intervals,
            )
        found = warmup.trend(outcome.intervals)
        _adapt(live, found)
        return build_result(
            ctx,
            live.started,
            server_version=served.version,
            config=served.config,
            variables=served.variables,
            options={
                "argv": command,
                "rand_type": scenario.rand_type,
                **dict(scenario.options),
                # the figure the workload's reports lead with (tpcc: NOPM), and its label
                **(
                    {"headline": scenario.headline, "headline_label": scenario.headline_label}
                    if scenario.headline
                    else {}
                ),
            },
            intervals=outcome.intervals,
            histogram=outcome.histogram,
            totals=outcome.totals,
            probes=readings,
            build_id=live.build_id,
            operations=outcome.operations,
            notes=(
                *live.ledger.warnings,
                *((found.describe(),) if found else ()),
                *((crowd,) if crowd else ()),
                *probes.notes,
                *histogram_coverage_notes(outcome.totals, outcome.histogram),
            ),
        )


def _held_counters(stack: contextlib.ExitStack, instance: ServerInstance) -> Callable[[], dict[str, int]] | None:
    """The server's counters over a connection opened now, before sysbench's clients (None: not reachable)."""
    try:
        return stack.enter_context(held_status(instance.endpoint))
    except ServerError:
        return None


def histogram_coverage_notes(totals: Totals | None, histogram: Sequence[LatencyBucket]) -> tuple[str, ...]:
    """A note when the latency histogram holds noticeably fewer transactions than the window's count.

    sysbench cuts its counters, then its histogram, at the warm-up's checkpoint; a checkpoint thread kept
    off the CPU between the two puts the transactions that ended in between in the warm-up's histogram
    but the window's count, so the histogram never holds more than the count (docs/method.md, "One
    window").
    """
    if totals is None or not histogram or totals.events <= 0:
        return ()
    counted = sum(b.count for b in histogram)
    missing = totals.events - counted
    if missing <= HISTOGRAM_NOTE_SHARE * totals.events:
        return ()
    lag_ms = missing / (totals.events / totals.time_s) * 1000 if totals.time_s > 0 else 0.0
    return (
        f"p50-p99 come from {counted:,} of the window's {totals.events:,} transactions: sysbench reset its "
        f"latency histogram about {lag_ms:.0f} ms after its counters at the warm-up's end (a starved client "
        "CPU); the others are in the warm-up's histogram",
    )


#: The histogram's shortfall against the window's count (a share of it) above which a run says so.
HISTOGRAM_NOTE_SHARE = 0.005


def _headline(scenario: Scenario) -> dict[str, str]:
    """The figure the workload's reports lead with (tpcc: NOPM) and its label, kept with the run."""
    return {"headline": scenario.headline, "headline_label": scenario.headline_label} if scenario.headline else {}


def _post_run_check(live: Live) -> str | None:
    """The scenario's declared check of its own writes (``check = "tpcc"``), on the run's server."""
    scenario = live.ctx.scenario
    if not scenario.check:
        return None
    live.reporter.phase(f"checking {live.label}: {scenario.check} consistency conditions")
    return run_check(scenario.check, live.instance.endpoint)


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


def _crowding(live: Live) -> str:
    """A note (and, once per neighbour, a warning) when other dbperf runs measure on this run's CPUs."""
    note = crowding_note(live.ctx.server)
    if note and note not in live.ledger.warned:
        live.ledger.warned.add(note)
        live.reporter.phase(f"warning: {note}")
    return note


def _stored_failure(session: Session, ctx: RunContext, reason: str) -> RunResult:
    result = build_result(ctx, datetime.now(UTC), failure=reason)
    session.save(result)
    session.reporter.finished(result)
    return result
