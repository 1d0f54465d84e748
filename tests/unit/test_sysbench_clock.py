"""The run's clock, not sysbench's output, keeps the time (a real child process stands in for sysbench)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.sysbench import driver, run_output

LINE = (
    run_output.PREFIX + '{"kind":"interval","t":1.0,"dt":1.0,"threads":1,"events":%d,"reads":%d,"writes":0,'
    '"other":0,"errors":0,"reconnects":0,"lat_pct":0.001}'
)


def _client(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "client.py"
    script.write_text(f"import os, signal, sys, time\nLINE = {LINE!r}\n{body}\n")
    return [sys.executable, str(script)]


@pytest.fixture
def quick_silence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "SILENCE_S", 1.0)


def test_a_stopped_client_is_named_and_killed_by_the_clock(tmp_path: Path, quick_silence: None):
    argv = _client(tmp_path, "print(LINE % (100, 100), flush=True)\nos.kill(os.getpid(), signal.SIGSTOP)")
    notices: list[str] = []
    outcome = driver.run(argv, cwd=tmp_path, warmup_s=0, expected_s=1, timeout_s=4, on_notice=notices.append)
    assert notices, "no notice while the client was stopped"
    assert "sysbench itself" in notices[0] and "is stopped" in notices[0] and "not the server" in notices[0]
    assert outcome.failure is not None and outcome.failure.kind == "overrun"
    assert "time limit of 4 s" in outcome.failure.cause and "sysbench itself" in outcome.failure.cause
    assert outcome.elapsed_s < 30  # killed by the clock, though it never printed again


def test_a_stopped_server_is_named_while_sysbench_reports_idle_intervals(tmp_path: Path, quick_silence: None):
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        os.kill(server.pid, signal.SIGSTOP)
        argv = _client(tmp_path, "print(LINE % (100, 100), flush=True)\nfor _ in range(40):\n"
                       "    print(LINE % (0, 0), flush=True); time.sleep(0.1)")  # fmt: skip
        notices: list[str] = []
        driver.run(argv, cwd=tmp_path, warmup_s=0, expected_s=1, on_notice=notices.append, server_pid=server.pid)
        assert notices and f"the server process (pid {server.pid}) is stopped" in notices[0], notices
    finally:
        server.kill()
        server.wait()


def test_progress_keeps_quiet(tmp_path: Path, quick_silence: None):
    argv = _client(tmp_path, "for _ in range(15):\n    print(LINE % (100, 100), flush=True); time.sleep(0.1)")
    notices: list[str] = []
    driver.run(argv, cwd=tmp_path, warmup_s=0, expected_s=1, on_notice=notices.append, server_pid=os.getpid())
    assert notices == []


def test_threads_started_is_announced_once_before_the_first_interval(tmp_path: Path):
    """sysbench's clock starts at "Threads started!"; the run's fallback window clock starts there too."""
    argv = _client(tmp_path, "print('Initializing worker threads...'); print(); print('Threads started!')\n"
                   "print(); print(LINE % (100, 100), flush=True)")  # fmt: skip
    seen: list[str] = []
    driver.run(
        argv,
        cwd=tmp_path,
        warmup_s=0,
        expected_s=1,
        on_started=lambda: seen.append("started"),
        on_interval=lambda sample: seen.append("interval"),
    )
    assert seen == ["started", "interval"]
