"""The probes' window opens by the clock when a starved sysbench prints its interval line late."""

from __future__ import annotations

import os
import threading
import time

from harness.measure.probes import ProbeSession


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
