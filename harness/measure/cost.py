"""Cost runs: a server's instructions per transaction, counted under callgrind, as a stored run.

One cost run::

    restore the snapshot ─► start the server under callgrind
      ─► [prewarm, servers that do not load their buffer pool at start-up (MySQL): every rollback segment
          written through and rolled back, every index read once, the tables' statistics computed exactly]
      ─► [hold a read view, writes]
      ─► warm-up: sysbench --events=W [warmup = "rollback": each event rolled back]
      ─► [purge_before_window: release it, wait for purge to empty the history list, hold a new one]
      ─► [rebuild_before_window: release it, ALTER TABLE ... FORCE each table, read every index back, hold a new one]
      ─► [query cache on, read-only workload: the window's own events once, so the window asks a warm cache]
      ─► callgrind_control -z ─► measured: sysbench --events=M
      ─► callgrind_control -d ─► parse the dump ─► instructions / transactions

What is counted: every instruction the server executes inside statement dispatch (parsing,
optimising, executing, InnoDB work done on the statement's thread, and the result sent back) for M
transactions, after W warm-up transactions on the same connections, and the system calls made there
(callgrind's sysCount, by kind). Beside them, the server's status counters over the same window, read
just before the counters are zeroed and just after the dump over one connection held from before the
warm-up, one read's own footprint subtracted: the work vector of :mod:`harness.model.work`. The warm-up
and the measured window each have their own fixed sysbench seed. What is not: start-up, connection
set-up, and background work outside dispatch (InnoDB purge, page cleaner, the binary log's group commit
thread).

The rules that make the count repeat, each tied to the scenario setting that turns it on:

- write workloads: a read view held from a separate connection stops purge, so base and head find the
  same undo history (said in every report);
- ``[cost] purge_before_window``: the view is released after the warm-up until purge empties the
  history list (:func:`wait_for_purge`), then held again for the window;
- ``[cost] warmup = "rollback"``: each warm-up event runs inside ``BEGIN`` ... ``ROLLBACK``, so a
  workload that grows or shrinks its tables starts its window from the snapshot's rows;
- ``[cost] rebuild_before_window``: the tables are rebuilt (``ALTER TABLE t FORCE``) before the window,
  so it starts from freshly built index pages;
- glibc's malloc is pinned (``servers/callgrind.py``, ``MALLOC_TUNABLES``), MySQL's spin loops and
  background work are switched off (``COUNTED_VARIABLES``), and every MySQL server is prewarmed
  (:mod:`harness.measure.prewarm`).

Why each rule exists, and the drift measured without it: docs/cost-noise.md and docs/work-vector.md
("Steady state", "Rebuilt before the window").

A cost run's QPS and latency are those of a server slowed 20-50x and are never reported: the record
holds only instructions per transaction and per query, the profile (every function's self and
inclusive instructions), and the identity the count depends on (build, requested configuration,
valgrind version, architecture).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import pymysql

from harness.errors import ServerError, SysbenchError
from harness.measure.context import RunContext, build_result
from harness.measure.cost_dump import read_dump
from harness.measure.prewarm import (
    Prewarm,
    list_indexes,
    long_connection,
    pending_reads,
    prewarmed,
    scan_statements,
    wanted,
)
from harness.measure.probes import status_deltas, status_mark
from harness.measure.session import Live, Session
from harness.model import CostSettings, Metrics, Probes, RunResult
from harness.model.endpoint import Endpoint
from harness.model.forecast import QUERY_CACHE_FILLED_NOTE, query_cache_on
from harness.servers import binary_extents
from harness.servers.callgrind import Callgrind
from harness.servers.provider import ServerInstance, connect, held_status
from harness.sysbench.command_lines import cost_argv, workdir
from harness.sysbench.driver import run
from harness.sysbench.run_output import SysbenchOutcome

READ_VIEW_NOTE = "writes counted with a read view held open (purge stopped for the run, on both sides alike)"
PURGED_NOTE = (
    "writes counted with a read view held open (purge stopped during the warm-up, then run until the history "
    "list was empty, then stopped again for the measured window; on both sides alike)"
)
ROLLBACK_NOTE = (
    "warm-up transactions rolled back (the measured window starts from the snapshot's rows, whatever the "
    "warm-up's length; on both sides alike)"
)
REBUILD_NOTE = (
    "tables rebuilt (ALTER TABLE ... FORCE) between the warm-up and the measured window (the window's index pages "
    "as a fresh build lays them out, whatever the warm-up's length; on both sides alike)"
)
PURGE_TIMEOUT_S = 600.0
"""How long purge may take to empty the history list after the warm-up (it runs uninstrumented under
valgrind: seconds for the catalogue's warm-ups; a timeout means a transaction is held open elsewhere)."""
REBUILD_TIMEOUT_S = 3600.0
"""How long ``rebuild_before_window``'s ``ALTER TABLE ... FORCE`` may take (under valgrind: seconds on the quick
dataset)."""
_HISTORY = re.compile(r"History list length (\d+)")


@contextmanager
def read_view(endpoint: Endpoint, table: str = "sbtest1") -> Iterator[None]:
    """A consistent-snapshot transaction held open on its own idle connection (it costs nothing in dispatch)."""
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, endpoint.database, timeout=60)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot open the read view connection: {exc}") from exc
    try:
        with conn.cursor() as cur:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            cur.execute(f"SELECT 1 FROM `{table}` LIMIT 1")
            cur.fetchall()
        yield
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.close()


def history_length(conn: pymysql.connections.Connection) -> int:
    """InnoDB's history list length (undo logs not purged yet), from ``SHOW ENGINE INNODB STATUS``: the one
    place MariaDB 10.11, 11.8 and MySQL 9.7 all show it under the same name."""
    with conn.cursor() as cur:
        cur.execute("SHOW ENGINE INNODB STATUS")
        row = cur.fetchone()
    found = _HISTORY.search(str(row[-1]) if row else "")
    if found is None:
        raise ServerError("SHOW ENGINE INNODB STATUS has no 'History list length'; is InnoDB the engine?")
    return int(found.group(1))


def wait_for_purge(endpoint: Endpoint, timeout_s: float = PURGE_TIMEOUT_S, poll_s: float = 0.2) -> float:
    """Poll the history list length until purge has emptied it; the seconds it took.

    Raises :class:`ServerError` after ``timeout_s`` (a read view left open elsewhere, or purge disabled).
    """
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, timeout=60)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to wait for purge: {exc}") from exc
    started = time.monotonic()
    try:
        while True:
            length = history_length(conn)
            if length == 0:
                return time.monotonic() - started
            if time.monotonic() - started > timeout_s:
                raise ServerError(
                    f"purge did not empty the history list within {timeout_s:.0f} s after the warm-up "
                    f"({length} undo logs left); is a transaction left open on the server, or innodb_purge_threads 0?"
                )
            time.sleep(poll_s)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot read the history list length while waiting for purge: {exc}") from exc
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.close()


def run_options(settings: CostSettings, measured_argv: Sequence[str], prewarmed: str = "") -> dict[str, str]:
    """What a cost run records of how it ran: the measured command line, the warm-up's length and both seeds,
    and what the prewarm read (when the server was prewarmed)."""
    return {
        "argv": " ".join(measured_argv),
        "warmup_events": str(settings.warmup_events),
        "warmup_seed": str(settings.warmup_seed),
        "seed": str(settings.seed),
        **({"warmup": settings.warmup} if settings.warmup != "commit" else {}),
        **({"rebuild_before_window": "true"} if settings.rebuild_before_window else {}),
        **({"prewarm": prewarmed} if prewarmed else {}),
    }


def _sysbench(
    ctx: RunContext, instance: ServerInstance, events: int, seed: int, what: str, *, rollback: bool = False
) -> SysbenchOutcome:
    scenario = ctx.scenario
    with workdir(scenario) as (folder, wrapper):
        argv = cost_argv(
            scenario,
            instance.endpoint,
            wrapper,
            ctx.threads,
            events,
            ctx.server.client_cpuset,
            seed=seed,
            rollback=rollback,
        )
        outcome = run(argv, cwd=folder, warmup_s=0, expected_s=0, timeout_s=3600 + events * 2.0)
    if outcome.failure is not None:
        raise SysbenchError(f"the {what} sysbench run failed: {outcome.failure.message()}")
    if outcome.totals is None or outcome.totals.events < 1:
        raise SysbenchError(f"the {what} sysbench run reported no transactions")
    return outcome


def fill_query_cache(writes: bool, variables: Mapping[str, str]) -> bool:
    """Whether a cost run fills the query cache with its window's keys before the window: a read-only
    workload on a server whose query cache is on. Its window then counts a warm cache's hits, as a run long
    enough to repeat its keys finds it, where fresh keys would count only the cache's overhead; a write
    workload's window is not replayed (its writes would apply twice)."""
    return not writes and query_cache_on(variables)


def run_cost(session: Session, ctx: RunContext) -> RunResult:
    """One cost repetition on a fresh server under callgrind; the result is stored before returning.

    A counted server is always its own: a shared, uncounted one cannot be used. The first repetition of
    each thread count also simulates the caches (:class:`Callgrind`): their misses repeat as instructions
    do, and the simulation doubles the window's time.
    """
    settings = ctx.scenario.cost
    session.reporter.phase(
        f"counting {ctx.server.name} {ctx.scenario.name} {ctx.threads}t cost #{ctx.repetition} under callgrind "
        f"({settings.warmup_events:,} warm-up + {settings.events:,} transactions)"
    )
    return session.record(ctx, _count, callgrind=Callgrind(cache_sim=ctx.repetition == 1))


def _count(live: Live) -> RunResult:
    ctx, served, label = live.ctx, live.served, live.label
    settings = ctx.scenario.cost
    control = live.instance.control
    if control is None:
        raise ServerError(f"{ctx.server.name} was not started under callgrind")
    endpoint = live.instance.endpoint
    table = ctx.scenario.created_tables[0]
    clock = _Clock(ready=(datetime.now(UTC) - live.started).total_seconds())
    purge = settings.read_view and settings.purge_before_window
    # the status reads share one connection opened before the warm-up: no connection comes or goes
    # between the warm-up and the window but sysbench's own (docs/cost-noise.md, the third cause), unless
    # the scenario purges before its window (a new read view is opened after purge)
    with held_status(endpoint) as read, contextlib.ExitStack() as kept, contextlib.ExitStack() as held:
        # a server that does not load its buffer pool at start-up (MySQL, COUNTED_VARIABLES) first reads every
        # index once, on a connection held to the end, so the window finds every page in the pool whatever W
        warm: Prewarm | None = None
        if wanted(served.variables):
            warm = kept.enter_context(prewarmed(endpoint, ctx.scenario.created_tables, undo=True, analyze=True))
            clock.lap("prewarm")
            once = f"prewarm: {ctx.server.name} {ctx.scenario.name} does not fit the buffer pool"
            if not warm.fits and once not in live.ledger.warned:
                live.ledger.warned.add(once)
                live.ledger.warnings.append(warm.warning())
                live.reporter.phase(f"{label}: {warm.warning()}")
        if settings.read_view:
            held.enter_context(read_view(endpoint, table))
        if settings.warmup_events:
            rollback = settings.warmup == "rollback"  # the tables stay as the snapshot had them
            _sysbench(ctx, live.instance, settings.warmup_events, settings.warmup_seed, "warm-up", rollback=rollback)
        clock.lap("warmup")
        if purge:  # the measured window starts from an empty history, whatever the warm-up's length
            held.close()
            wait_for_purge(endpoint)
            if not settings.rebuild_before_window:
                held.enter_context(read_view(endpoint, table))
            clock.lap("purge")
        if settings.rebuild_before_window:  # the window's pages as a fresh build lays them out, whatever W
            held.close()  # the read view's transaction holds the table's metadata lock
            rebuild_tables(endpoint, ctx.scenario.created_tables)
            if settings.read_view:
                held.enter_context(read_view(endpoint, table))
            clock.lap("rebuild")
        filled = fill_query_cache(ctx.scenario.writes, served.variables)
        if filled:  # the window asks a warm cache (noted in this run's record)
            _sysbench(ctx, live.instance, settings.events, settings.seed, "query cache fill")
            clock.lap("fill")
        mark = status_mark(read)  # outside the counted window: before -z, after the dump
        control.zero()
        measured = _sysbench(ctx, live.instance, settings.events, settings.seed, "measured")
        clock.lap("measured")
        dump = control.dump("measured")
        deltas = status_deltas(mark, read)
    profile = read_dump(dump, binary_extents(ctx.server))
    clock.lap("dump")
    probes = Probes(status_deltas=deltas, syscalls=profile.syscalls, cache_misses=profile.cache_misses)
    totals = measured.totals
    assert totals is not None  # checked by _sysbench
    result = build_result(
        ctx,
        live.started,
        server_version=served.version,
        config=served.config,
        variables=served.variables,
        options=run_options(settings, measured.argv, warm.describe() if warm else ""),
        totals=totals,
        probes=probes,
        metrics=Metrics.cost(totals, profile.total_ir, probes),
        notes=(*_read_view_notes(settings), *((QUERY_CACHE_FILLED_NOTE,) if filled else ()), *live.ledger.warnings),
        cost=live.cost,
        cost_profile=profile,
        operations=measured.operations,
    )
    unnamed = profile.unnamed_ir / max(1, profile.total_ir)
    live.reporter.phase(
        f"{label}: {profile.total_ir / totals.events:,.0f} instructions per transaction "
        f"({totals.events:,} transactions, {unnamed:.0%} in unnamed functions); {clock.describe()}"
    )
    return result


def rebuild_statements(tables: Sequence[str]) -> list[str]:
    """``ALTER TABLE t FORCE`` for each table: InnoDB rebuilds it and every index of it from its rows."""
    return ["ALTER TABLE `" + t.replace("`", "``") + "` FORCE" for t in tables]


def rebuild_tables(endpoint: Endpoint, tables: Sequence[str], timeout_s: float = REBUILD_TIMEOUT_S) -> None:
    """Rebuild ``tables`` after the warm-up (``[cost] rebuild_before_window``), on a connection of its own.

    No read view may be open: its transaction holds a metadata lock on the table the rebuild waits for."""
    conn = long_connection(endpoint, timeout_s, "rebuild the tables before the window")
    try:
        rebuild_on(conn, endpoint.database, tables, time.monotonic() + timeout_s)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot rebuild the tables before the window: {exc}") from exc
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.close()


def rebuild_on(
    conn: pymysql.connections.Connection, database: str, tables: Sequence[str], deadline: float, poll_s: float = 0.2
) -> None:
    """``ALTER TABLE t FORCE`` for each table, then every index of them scanned once (the prewarm's scans), then a
    wait until no page read is pending: MySQL 9.7 leaves a rebuilt index's pages out of the buffer pool (a
    window right after the rebuild read 2.3 pages from disk per threadpool_read_write transaction)."""
    with conn.cursor() as cur:
        for statement in rebuild_statements(tables):
            cur.execute(statement)
        for statement in scan_statements(list_indexes(cur, database, tables)):
            cur.execute(statement)
            cur.fetchall()
        while pending_reads(cur) > 0 and time.monotonic() < deadline:  # no read-ahead lands in the window
            time.sleep(poll_s)


def _read_view_notes(settings: CostSettings) -> tuple[str, ...]:
    rollback: tuple[str, ...] = (ROLLBACK_NOTE,) if settings.warmup == "rollback" else ()
    rollback += (REBUILD_NOTE,) if settings.rebuild_before_window else ()
    if not settings.read_view:
        return rollback
    return ((PURGED_NOTE,) if settings.purge_before_window else (READ_VIEW_NOTE,)) + rollback


class _Clock:
    """Where a cost run's wall time went: server ready (restore and start-up), warm-up, purge, window, dump."""

    def __init__(self, ready: float) -> None:
        self.laps: dict[str, float] = {"ready": ready}
        self._last = time.monotonic()

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps[name] = now - self._last
        self._last = now

    def describe(self) -> str:
        names = {
            "ready": "server ready",
            "prewarm": "prewarm",
            "warmup": "warm-up",
            "purge": "purge",
            "rebuild": "rebuild",
            "fill": "query cache fill",
            "measured": "window",
            "dump": "dump",
        }
        return "seconds: " + ", ".join(f"{names[k]} {v:.1f}" for k, v in self.laps.items())
