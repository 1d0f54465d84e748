"""A comparison's cost runs side by side, one server per core.

A count does not depend on the machine's load nor on the core its server runs on (callgrind counts
instructions, not time), so the cost runs of a comparison go two at a time on a machine with two
cores: slot 1 runs as the server file says (server on ``cpuset``, sysbench on ``client_cpuset``),
slot 2 with the two swapped. Under valgrind a server runs one thread at a time and its sysbench
mostly waits, so each slot keeps one core busy. Timing runs never go side by side.

The runs are taken in the order given (the comparison's balanced order), each by the first free
slot; every run's progress line says its slot (``[2/2]``); runs are saved one at a time. An
interrupt (SIGINT/SIGTERM, raised in the main thread) is passed on to every slot's run, so each
stops its server and removes its folders before the command leaves; the run the interrupt is
stored against is one of those in flight. ``DBPERF_COST_SLOTS=1`` runs them one after another.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from harness.errors import ConfigError, HarnessError
from harness.measure.context import RunContext
from harness.measure.cost import run_cost
from harness.measure.session import Reporter, Session
from harness.model import IntervalSample, RunResult, Server

SLOTS_ENV = "DBPERF_COST_SLOTS"
"""How many cost runs may go at once (default: 2 on a machine with two or more usable cores, else 1)."""


def slots_wanted(environ: dict[str, str] | None = None) -> int:
    """The number of cost runs that may go at once: ``DBPERF_COST_SLOTS``, else min(2, usable cores)."""
    value = (os.environ if environ is None else environ).get(SLOTS_ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ConfigError(f"{SLOTS_ENV}={value} is not a positive whole number; set it to 1 or 2")
        return min(2, int(value))
    return min(2, len(os.sched_getaffinity(0)))


def slots_for(runs: int, environ: dict[str, str] | None = None) -> int:
    """How many of a batch of ``runs`` cost runs go at once: the runner and the estimate both ask here."""
    return 1 if runs <= 1 else min(runs, slots_wanted(environ))


def placed(server: Server, slot: int) -> Server:
    """``server`` as slot ``slot`` (0-based) runs it: slot 1 swaps its server and client CPU sets."""
    if slot % 2 == 0 or not server.cpuset or not server.client_cpuset:
        return server
    return replace(server, cpuset=server.client_cpuset, client_cpuset=server.cpuset)


@dataclass
class _SlotReporter:
    """A reporter for one slot: every line says its slot, and lines of two slots never mix."""

    inner: Reporter
    tag: str
    lock: threading.Lock

    def phase(self, message: str) -> None:
        with self.lock:
            self.inner.phase(f"{self.tag} {message}")

    def interval(self, label: str, sample: IntervalSample) -> None:
        with self.lock:
            self.inner.interval(f"{self.tag} {label}", sample)

    def finished(self, run: RunResult) -> None:
        with self.lock:
            self.inner.finished(run)


@dataclass
class _Slots:
    """The shared state of one side-by-side batch: the next run to take, results, what is in flight."""

    contexts: Sequence[RunContext]
    results: dict[int, RunResult] = field(default_factory=dict)
    taken: int = 0
    stop: bool = False
    failure: BaseException | None = None
    running: dict[int, tuple[RunContext, datetime]] = field(default_factory=dict)  # thread id -> its run
    #: set by each slot's thread as it ends (a Thread.join interrupted by SIGINT may say a live thread ended)
    ended: list[threading.Event] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self) -> tuple[int, RunContext] | None:
        with self.lock:
            if self.stop or self.taken >= len(self.contexts):
                return None
            self.taken += 1
            return self.taken - 1, self.contexts[self.taken - 1]


def run_side_by_side(session: Session, contexts: Sequence[RunContext], slots: int | None = None) -> list[RunResult]:
    """Every cost run of ``contexts`` (each a fresh server under callgrind), ``slots`` at a time; the
    results in the order of ``contexts``."""
    slots = slots_for(len(contexts)) if slots is None else slots
    if slots <= 1 or len(contexts) <= 1:
        return [run_cost(session, ctx) for ctx in contexts]
    saving = threading.Lock()
    printing = threading.Lock()

    def save(run: RunResult) -> None:
        with saving:
            session.save(run)

    _prepare(session, contexts, slots)
    state = _Slots(contexts, ended=[threading.Event() for _ in range(slots)])
    workers = []
    for slot in range(slots):
        own = replace(session, save=save, reporter=_SlotReporter(session.reporter, f"[{slot + 1}/{slots}]", printing))
        workers.append(threading.Thread(target=_work, args=(own, state, slot), name=f"cost-slot-{slot + 1}"))
    try:
        for worker in workers:
            worker.start()
        for ended in state.ended:
            while not ended.wait(0.2):  # a timed wait lets the main thread take SIGINT
                pass
    except BaseException as exc:
        _interrupt(session, state, exc, saving)
        raise
    if state.failure is not None:
        raise state.failure
    return [state.results[i] for i in range(len(contexts))]


def _prepare(session: Session, contexts: Sequence[RunContext], slots: int) -> None:
    """Resolve, one at a time, what the runs share (each slot's server setup with its cost identity, each
    dataset snapshot, prepared here if missing), so no two slots resolve, prepare or verify the same one at
    once. A lookup that fails here fails again in its run, which stores it as failed."""
    provisioner = session.provisioner()
    for ctx in contexts:
        with suppress(HarnessError, OSError):
            for slot in range(slots):
                provisioner.snapshot(provisioner.setup(placed(ctx.server, slot), ctx.scenario, cost=True))


def _work(session: Session, state: _Slots, slot: int) -> None:
    ident = threading.get_ident()
    try:
        _take(session, state, slot, ident)
    finally:
        state.ended[slot].set()


def _take(session: Session, state: _Slots, slot: int, ident: int) -> None:
    try:
        while (job := state.next()) is not None:
            index, ctx = job
            ctx = replace(ctx, server=placed(ctx.server, slot))
            with state.lock:
                state.running[ident] = (ctx, datetime.now(UTC))
            result = run_cost(session, ctx)
            with state.lock:
                state.running.pop(ident, None)
                state.results[index] = result
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
        with state.lock:
            state.stop = True
            state.running.pop(ident, None)
            if state.failure is None and not isinstance(exc, KeyboardInterrupt):
                state.failure = exc


def _interrupt(session: Session, state: _Slots, exc: BaseException, saving: threading.Lock) -> None:
    """Stop every slot's run after an interrupt in the main thread, and wait until each has stopped its server.

    The interrupt is stored once, against a run in flight (with the signal's name); each slot's thread then
    gets a KeyboardInterrupt of its own (raised at its next Python instruction: a sysbench or callgrind_control
    it waits for is killed, and its server stopped, as when the run goes alone)."""
    with state.lock:
        state.stop = True
        running = dict(state.running)
    if isinstance(exc, KeyboardInterrupt) and running:
        ctx, started = next(iter(running.values()))
        with saving:
            session.mark_interrupted(ctx, started, exc)
    with state.lock:  # only a thread inside its run: it leaves the run under this lock
        for ident in state.running:
            _raise_in(ident, KeyboardInterrupt)
    for ended in state.ended:
        ended.wait()


def _raise_in(ident: int, exc_type: Callable[[], BaseException] | type[BaseException]) -> None:
    """Raise ``exc_type`` in the thread ``ident`` at its next Python instruction (CPython's async exception)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc_type))
