"""Killing the server mid-run, and two runs at once (issue 2, "What it must show").

Each dbperf process gets its own TMPDIR, so "nothing left behind" is checked on exactly what that
process made (run folders, restored datadirs, sysbench work folders, server processes, containers)
even while other dbperf processes work on the same machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from support.integration import PROGRESS_AT, containers_of, processes_mentioning, server_pids_under

pytestmark = pytest.mark.integration

KILL_AFTER_S = 3  # elapsed seconds of the run (1 s warm-up + 2 s measured) before the kill


def start_long_run(dbperf, store_path, tmpdir, server):
    return dbperf.start(
        "run",
        "--scenario",
        "oltp_point_select",
        "--server",
        server,
        "--threads",
        "2",
        "--time",
        "8",
        "--warmup",
        "1",
        "--store",
        store_path,
        "--json",
        env={"TMPDIR": str(tmpdir)},
    )


def assert_failed_cleanly(dbperf, streamed, store_path, tmpdir, server):
    code = streamed.wait(timeout_s=180)
    stderr = streamed.stderr_text()
    assert code == 2, f"exit {code}; stderr:\n{stderr}"

    # one line saying what happened, last on stderr, no traceback
    assert "Traceback" not in stderr, stderr
    last = [line for line in stderr.splitlines() if line.strip()][-1]
    assert last.startswith("dbperf: error: run "), last
    assert "failed" in last
    assert "2013" in last or "server died" in last, last

    # --json still documents the failed run
    doc = json.loads(streamed.stdout_text())
    assert doc["status"] == "failed"
    assert doc["qps"] is None

    # stored as failed, with the reason
    runs = dbperf.runs(store_path)
    assert len(runs) == 1, runs
    run = runs[0]
    assert run["run_id"] == doc["run_id"]
    assert run["status"] == "failed"
    assert run["server"] == server
    failure = str(run["failure"])
    assert "server died during the run" in failure, failure
    assert "2013" in failure or "lost connection" in failure.lower(), failure
    assert dbperf.runs(store_path, "--status", "ok") == []

    # nothing left behind: no temporary folder, no server process, no container
    leftovers = sorted(p.name for p in tmpdir.iterdir())
    assert leftovers == [], f"left in TMPDIR: {leftovers}"
    assert processes_mentioning(str(tmpdir)) == []
    assert containers_of(streamed.proc.pid) == []


def wait_for_measured_window(streamed):
    streamed.wait_for_stderr(
        lambda line: (m := PROGRESS_AT.match(line)) is not None and int(m.group(1)) >= KILL_AFTER_S,
        timeout_s=240,
    )


def test_kill_local_server_mid_run(dbperf, store_path, private_tmpdir):
    streamed = start_long_run(dbperf, store_path, private_tmpdir, "mariadb-local")
    wait_for_measured_window(streamed)
    pids = server_pids_under(private_tmpdir)
    assert len(pids) == 1, f"expected one mariadbd under {private_tmpdir}: {pids}"
    started = time.monotonic()
    os.kill(pids[0], signal.SIGKILL)
    assert_failed_cleanly(dbperf, streamed, store_path, private_tmpdir, "mariadb-local")
    # the failure is noticed at once, not after the remaining 6 s of --time or a timeout
    assert time.monotonic() - started < 30


@pytest.mark.docker
def test_kill_container_mid_run(dbperf, store_path, private_tmpdir):
    streamed = start_long_run(dbperf, store_path, private_tmpdir, "mariadb-10.11")
    wait_for_measured_window(streamed)
    running = containers_of(streamed.proc.pid)
    assert len(running) == 1, running
    container_id = running[0].split()[0]
    subprocess.run(["docker", "kill", container_id], check=True, capture_output=True, timeout=60)
    assert_failed_cleanly(dbperf, streamed, store_path, private_tmpdir, "mariadb-10.11")


def test_two_runs_at_once_both_stored(dbperf, store_path, tmp_path):
    procs = []
    for name in ("a", "b"):
        tmpdir = tmp_path / f"tmp-{name}"
        tmpdir.mkdir()
        procs.append(
            (
                tmpdir,
                dbperf.start(
                    "run",
                    "--scenario",
                    "oltp_point_select",
                    "--server",
                    "mariadb-local",
                    "--threads",
                    "2",
                    "--time",
                    "8",  # long enough to overlap when one server starts seconds later on a loaded machine
                    "--warmup",
                    "1",
                    "--store",
                    store_path,
                    "--json",
                    env={"TMPDIR": str(tmpdir)},
                ),
            )
        )
    docs = []
    for tmpdir, streamed in procs:
        code = streamed.wait(timeout_s=300)
        assert code == 0, streamed.stderr_text()
        docs.append(json.loads(streamed.stdout_text()))
        assert sorted(p.name for p in tmpdir.iterdir()) == []
    assert all(d["status"] == "ok" for d in docs), docs

    # the two runs were measuring at the same time (otherwise this proves nothing about concurrency)
    windows = []
    for _, streamed in procs:
        arrivals = [at for at, line in streamed.stderr if PROGRESS_AT.match(line)]
        assert arrivals, streamed.stderr_text()
        windows.append((arrivals[0], arrivals[-1]))
    (a0, a1), (b0, b1) = windows
    assert a0 <= b1 and b0 <= a1, f"the runs did not overlap: {windows}"

    runs = dbperf.runs(store_path)
    assert sorted(r["run_id"] for r in runs) == sorted(d["run_id"] for d in docs)
    assert all(r["status"] == "ok" and r["qps"] > 100 for r in runs)
