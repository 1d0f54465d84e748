"""The probes' window: opened by sysbench's line or the clock, CPU read first, late reads and gaps said."""

from __future__ import annotations

import os
import threading
import time

import pytest

from harness.measure import probes as probes_module
from harness.measure.probes import ProbeSession
from harness.measure.timing import histogram_coverage_notes
from harness.model import LatencyBucket, Totals


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_clock_opens_the_window_when_no_interval_line_comes() -> None:
    probes = ProbeSession(os.getpid(), None)
    clock = probes.timer(0.05)
    clock.start()
    clock.join(timeout=30)  # the state: the timer has run, not a sleep standing for it
    assert probes.started
    _spin(0.05)
    readings = probes.stop()
    probes.abort()
    assert readings.server_cpu_s is not None and readings.server_cpu_s >= 0.04


def test_a_window_opens_once_when_the_line_and_the_clock_race() -> None:
    probes = ProbeSession(os.getpid(), None)
    opened: list[float] = []
    original = probes._open

    def counting() -> None:
        opened.append(time.monotonic())
        original()

    probes._open = counting  # type: ignore[method-assign]
    threads = [threading.Thread(target=probes.start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(opened) == 1


def test_a_clock_that_fires_after_the_run_opens_nothing() -> None:
    probes = ProbeSession(os.getpid(), None)
    clock = probes.timer(0.0)
    probes.abort()  # the run ended (failed) before the window
    clock.start()
    clock.join(timeout=30)
    assert probes.stop().instructions_note.startswith("probes never started")


def test_the_cpu_clock_is_read_before_the_counters(monkeypatch: pytest.MonkeyPatch) -> None:
    """A saturated server answers a status query late; the CPU window must not start that late."""
    order: list[str] = []
    real = probes_module.process_cpu_seconds
    monkeypatch.setattr(probes_module, "process_cpu_seconds", lambda pid: order.append("cpu") or real(pid))

    def counters() -> dict[str, int]:
        order.append("counters")
        return {"questions": len(order)}

    probes = ProbeSession(os.getpid(), None, counters, window_s=3.0)
    probes.start()
    readings = probes.stop()
    assert order == ["cpu", "counters", "cpu", "counters"]
    assert readings.status_deltas == {"questions": 2}


def test_a_late_counter_read_is_noted_against_the_window() -> None:
    calls: list[int] = []

    def slow() -> dict[str, int]:
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.1)  # the read being late is what is tested, not a wait for a state
        return {"questions": 10 * len(calls)}

    late = ProbeSession(os.getpid(), None, slow, window_s=3.0)
    late.start()
    late.stop()
    assert len(late.notes) == 1 and "took 0.1" in late.notes[0] and "of it" in late.notes[0], late.notes

    quick = ProbeSession(os.getpid(), None, lambda: {"questions": 1}, window_s=3.0)
    quick.start()
    quick.stop()
    assert quick.notes == ()


def test_a_cpu_clock_that_did_not_move_is_not_a_measurement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probes_module, "process_cpu_seconds", lambda pid: 12.5)
    answered = iter([{"questions": 100}, {"questions": 5387}])
    probes = ProbeSession(os.getpid(), None, lambda: next(answered), window_s=3.0)
    probes.start()
    readings = probes.stop()
    assert readings.server_cpu_s is None
    assert any("server CPU not measured" in n and "5,287" in n for n in probes.notes), probes.notes


def test_a_window_opened_by_the_clock_says_so() -> None:
    probes = ProbeSession(os.getpid(), None)
    clock = probes.timer(0.0)
    clock.start()
    clock.join(timeout=30)
    probes.stop()
    assert probes.opened_by == "clock" and any("opened by the clock" in n for n in probes.notes)


def _totals(events: int, time_s: float = 3.0) -> Totals:
    return Totals(time_s=time_s, events=events, reads=events, writes=0, other=0, errors=0, reconnects=0)


def test_a_histogram_short_of_the_window_says_by_how_much() -> None:
    # the issue-40 run: 94,678 of 95,767 (1.1 %) in a 3 s window
    notes = histogram_coverage_notes(_totals(95_767), [LatencyBucket(0.5, 90_000), LatencyBucket(2.0, 4_678)])
    assert len(notes) == 1
    assert "94,678 of the window's 95,767" in notes[0] and "about 34 ms" in notes[0], notes
    # within 0.5 %: nothing to say; no histogram: nothing to compare
    assert histogram_coverage_notes(_totals(10_000), [LatencyBucket(0.5, 9_960)]) == ()
    assert histogram_coverage_notes(_totals(10_000), []) == ()
