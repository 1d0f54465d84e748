"""Cost runs side by side: the order kept, the second slot on the swapped cores, lines tagged, one save at a time.

The runs themselves are faked at run_cost (the seam); tests/integration/test_cost.py counts real ones side by
side against one at a time, tests/faults interrupts two at once."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.factories import TESTBED, Said, scenario

from harness.dataset import DatasetCache
from harness.errors import ConfigError
from harness.measure import cost_slots
from harness.measure.context import RunContext, build_result
from harness.measure.session import Session
from harness.model import RunResult, Server

SERVER = Server(name="m", flavour="mariadb", version="10.11", provider="local", cpuset="0", client_cpuset="1")


def test_slots_come_from_the_environment_or_the_cores():
    assert cost_slots.slots_wanted({"DBPERF_COST_SLOTS": "1"}) == 1
    assert cost_slots.slots_wanted({"DBPERF_COST_SLOTS": "8"}) == 2  # two cores' worth at most
    assert 1 <= cost_slots.slots_wanted({}) <= 2
    # the batch's slot count (the runner's and the estimate's): never more slots than runs
    assert cost_slots.slots_for(6, {"DBPERF_COST_SLOTS": "2"}) == 2
    assert cost_slots.slots_for(1, {"DBPERF_COST_SLOTS": "2"}) == 1
    assert cost_slots.slots_for(6, {"DBPERF_COST_SLOTS": "1"}) == 1
    with pytest.raises(ConfigError, match="DBPERF_COST_SLOTS=two"):
        cost_slots.slots_wanted({"DBPERF_COST_SLOTS": "two"})


def test_the_second_slot_swaps_the_server_and_client_cores():
    assert cost_slots.placed(SERVER, 0) == SERVER
    swapped = cost_slots.placed(SERVER, 1)
    assert (swapped.cpuset, swapped.client_cpuset, swapped.name) == ("1", "0", "m")
    unpinned = Server(name="u", flavour="mariadb", version="10.11", provider="local")
    assert cost_slots.placed(unpinned, 1) == unpinned


def test_runs_go_two_at_a_time_in_order_each_line_tagged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    said = Said()
    saved: list[str] = []
    session = Session(DatasetCache(tmp_path / "cache"), TESTBED, "sha", saved.append, reporter=said)  # type: ignore[arg-type]
    monkeypatch.setattr(cost_slots, "_prepare", lambda *args: None)
    at_once = {"now": 0, "most": 0}
    lock = threading.Lock()

    def fake(own: Session, ctx: RunContext) -> RunResult:
        with lock:
            at_once["now"] += 1
            at_once["most"] = max(at_once["most"], at_once["now"])
        own.reporter.phase(f"counting #{ctx.repetition} on cpu {ctx.server.cpuset}")
        time.sleep(0.05)
        result = build_result(ctx, datetime.now(UTC), failure=f"#{ctx.repetition}")
        own.save(result)
        with lock:
            at_once["now"] -= 1
        return result

    monkeypatch.setattr(cost_slots, "run_cost", fake)
    contexts = [RunContext(SERVER, scenario(), 1, n, TESTBED, "sha", kind="cost") for n in range(1, 6)]
    results = cost_slots.run_side_by_side(session, contexts, slots=2)
    assert [r.failure for r in results] == [f"#{n}" for n in range(1, 6)]
    assert at_once["most"] == 2 and len(saved) == 5
    assert all(line.startswith(("[1/2] ", "[2/2] ")) for line in said.lines), said.lines
    assert {line.split()[0]: line.split()[-1] for line in said.lines} == {"[1/2]": "0", "[2/2]": "1"}


def test_one_slot_runs_them_one_after_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    session = Session(DatasetCache(tmp_path / "cache"), TESTBED, "sha", lambda run: None)
    order: list[int] = []

    def fake(own: Session, ctx: RunContext) -> RunResult:
        assert own is session and threading.current_thread() is threading.main_thread()
        order.append(ctx.repetition)
        return build_result(ctx, datetime.now(UTC), failure="x")

    monkeypatch.setattr(cost_slots, "run_cost", fake)
    contexts = [RunContext(SERVER, scenario(), 1, n, TESTBED, "sha", kind="cost") for n in range(1, 4)]
    cost_slots.run_side_by_side(session, contexts, slots=1)
    assert order == [1, 2, 3]


def test_an_interrupt_stops_both_slots_and_is_stored_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import _thread
    import signal

    saved: list[RunResult] = []
    session = Session(DatasetCache(tmp_path / "cache"), TESTBED, "sha", saved.append, reporter=Said())  # type: ignore[arg-type]
    monkeypatch.setattr(cost_slots, "_prepare", lambda *args: None)
    started, stopped = threading.Barrier(3), []

    def fake(own: Session, ctx: RunContext) -> RunResult:
        try:
            started.wait(timeout=10)
            while True:  # a run in flight: sysbench waited for, polled
                time.sleep(0.01)
        finally:
            stopped.append(ctx.repetition)  # its server stopped

    monkeypatch.setattr(cost_slots, "run_cost", fake)
    contexts = [RunContext(SERVER, scenario(), 1, n, TESTBED, "sha", "g1", kind="cost") for n in range(1, 5)]
    threading.Thread(target=lambda: (started.wait(timeout=10), _thread.interrupt_main())).start()
    # Python's own SIGINT handler, whatever an earlier test in this process left (else the interrupt may
    # never raise and the slots run forever)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            cost_slots.run_side_by_side(session, contexts, slots=2)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sorted(stopped) == [1, 2]  # both in flight stopped before it returned; none started after
    (interrupted,) = saved
    assert "interrupted" in str(interrupted.failure) and "g1 is incomplete" in str(interrupted.failure)
