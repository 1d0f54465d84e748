"""Killed servers, killed sysbench, killed dbperf, and SIGINT/SIGTERM during run, compare and prepare."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from support import REPO
from support.faults import Fault, closing_line, quick, record, wait_for_progress
from support.integration import containers_of, processes_mentioning, server_pids_under

pytestmark = pytest.mark.integration


def _pids_named(tmpdir: Path, program: str) -> list[int]:
    found = []
    for line in processes_mentioning(str(tmpdir)):
        pid, cmdline = line.split(": ", 1)
        words = cmdline.split()
        if any(Path(w).name == program for w in words[:3]):
            found.append(int(pid))
    return found


def test_kill9_server_mid_run(fault: Fault):
    streamed = fault.start(*quick("--json", time_s=8))
    wait_for_progress(streamed, 2)
    (server,) = server_pids_under(fault.tmpdir)
    os.kill(server, signal.SIGKILL)
    code = streamed.wait(timeout_s=180)
    line = closing_line(streamed.stderr_text())
    assert code == 2, line
    assert "server died during the run" in line and "killed by signal 9" in line, line
    assert "no error in its log" in line  # not the last [Note] lines, which say nothing about the kill
    kept = line.split("its log is kept in ", 1)[1].split(")", 1)[0].split(";", 1)[0]
    assert Path(kept).is_file(), f"the log named in the message is gone: {kept}"
    doc = json.loads(streamed.stdout_text())
    (failed,) = [r for r in fault.runs() if r["run_id"] == doc["run_id"]]
    assert failed["status"] == "failed" and "server died" in str(failed["failure"])
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record("kill -9 of the server mid-run", code, line, "failed run with its reason; server log kept", leaks)


def test_kill9_sysbench_mid_run(fault: Fault):
    streamed = fault.start(*quick("--json", time_s=8))
    wait_for_progress(streamed, 2)
    pids = _pids_named(fault.tmpdir, "sysbench")
    assert len(pids) == 1, processes_mentioning(str(fault.tmpdir))
    os.kill(pids[0], signal.SIGKILL)
    code = streamed.wait(timeout_s=180)
    line = closing_line(streamed.stderr_text())
    assert code == 2, line
    assert "sysbench" in line and "signal 9" in line, line
    doc = json.loads(streamed.stdout_text())
    assert doc["status"] == "failed"
    assert {r["run_id"] for r in fault.runs() if r["status"] == "failed"} == {doc["run_id"]}
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record("kill -9 of sysbench mid-run", code, line, "failed run with its reason", leaks)


@pytest.mark.parametrize("cleaner", ["next-run", "sweep"])
def test_kill9_dbperf_leftovers_are_swept(fault: Fault, cleaner: str):
    streamed = fault.start(*quick(time_s=30))
    wait_for_progress(streamed, 1)
    victim = streamed.proc.pid
    servers = server_pids_under(fault.tmpdir)
    assert len(servers) == 1
    streamed.kill()  # SIGKILL: no clean-up at all, like the OOM killer or a CI timeout (and reaped)
    left = fault.leaks()
    # the fault is real: the server outlived dbperf, and everything it left is in one owner-stamped folder
    assert any(f"process {servers[0]}:" in item for item in left), left
    folders = [p.name for p in fault.tmpdir.iterdir()]
    assert len(folders) == 1 and folders[0].startswith(f"dbperf-{victim}-"), folders
    if cleaner == "sweep":
        out = fault.run("sweep", timeout_s=120)
        assert out.returncode == 0, out.stderr
        said = out.stdout
        assert f"server mariadb-local (pid {servers[0]})" in said and f"dbperf process {victim}" in said, said
        message = said.strip().splitlines()[-1]
    else:
        out = fault.run(*quick(), timeout_s=300)
        assert out.returncode == 0, out.stderr
        assert "removed what dbperf processes that died left behind" in out.stderr, out.stderr
        assert f"pid {servers[0]}" in out.stderr
        message = next(x for x in out.stderr.splitlines() if "removed what dbperf" in x).strip()
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record(
        f"kill -9 of dbperf mid-run, then {'dbperf sweep' if cleaner == 'sweep' else 'the next dbperf run'}",
        137,
        message[:200],
        "runs before the kill; the killed run is not stored (it never finished)",
        leaks,
    )


@pytest.mark.docker
def test_kill9_dbperf_with_a_container_is_swept(fault: Fault):
    streamed = fault.start(*quick("--server", "mariadb-10.11", time_s=30))
    wait_for_progress(streamed, 1, timeout_s=600)
    victim = streamed.proc.pid
    assert len(containers_of(victim)) == 1
    streamed.kill()
    (folder,) = fault.tmpdir.iterdir()
    assert list((folder / "containers").iterdir()), "the container was not noted in the workspace"
    out = fault.run("sweep", timeout_s=180)
    assert out.returncode == 0, out.stderr
    # Other dbperf processes on this machine also remove containers whose owner died (any version does,
    # before starting one of its own), so this sweep may find it gone already; either way it must be gone.
    by_us = "removed container " in out.stdout
    leaks = fault.leaks()
    assert leaks == [] and containers_of(victim) == [] and fault.earlier_readable()
    record(
        "kill -9 of dbperf during a container run, then dbperf sweep",
        137,
        "; ".join(out.stdout.strip().splitlines()),
        "runs before the kill" + ("" if by_us else " (the container was removed by another dbperf's sweep first)"),
        leaks,
    )


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_during_run(fault: Fault, signum: int):
    streamed = fault.start(*quick(time_s=20))
    wait_for_progress(streamed, 1)
    streamed.proc.send_signal(signum)
    code = streamed.wait(timeout_s=180)
    line = closing_line(streamed.stderr_text())
    name = signal.Signals(signum).name
    assert code == 130, line
    assert line == f"dbperf: interrupted; servers stopped and temporary files removed ({name})", line
    failed = [r for r in fault.runs() if r["status"] == "failed"]
    assert len(failed) == 1 and f"interrupted ({name})" in str(failed[0]["failure"]), failed
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record(f"{name} during a run", code, line, "the interrupted run, as failed ('interrupted')", leaks)


def test_sigint_during_compare_marks_the_group_incomplete(fault: Fault):
    streamed = fault.start(
        "compare",
        "--base",
        "mariadb-local",
        "--head-var",
        "innodb_buffer_pool_size=256M",
        *("--scenario", "oltp_point_select", "--threads", "1", "--time", "2", "--warmup", "0", "--no-cost"),
    )
    # let the first pair finish and the next run start
    seen = 0
    while seen < 3:
        wait_for_progress(streamed, 1)
        seen = sum(1 for _, line in streamed.stderr if line.lstrip().startswith("» running "))
        time.sleep(0.2)
    streamed.proc.send_signal(signal.SIGINT)
    code = streamed.wait(timeout_s=180)
    line = closing_line(streamed.stderr_text())
    assert code == 130, line
    assert "interrupted; servers stopped and temporary files removed" in line
    runs = [r for r in fault.runs() if r["run_id"] != fault.earlier]
    groups = {r["group_id"] for r in runs}
    assert len(groups) == 1, runs
    interrupted = [r for r in runs if "interrupted" in str(r["failure"] or "")]
    assert len(interrupted) == 1, runs
    assert "is incomplete and must not be judged" in str(interrupted[0]["failure"])
    assert sum(1 for r in runs if r["status"] == "ok") >= 2
    report = fault.run("report", "--group", groups.pop(), timeout_s=120)
    assert report.returncode == 0 and "1 failed" in report.stdout, report.stdout
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record(
        "SIGINT during compare",
        code,
        line,
        f"{len(runs) - 1} finished runs + 1 'interrupted' failed run marking the group incomplete",
        leaks,
    )


def _slow_to_prepare(root: Path) -> Path:
    """A copy of the catalogue whose quick oltp_point_select dataset takes seconds to prepare.

    The quick dataset (2 x 10,000 rows) is ready in about 0.2 s on a fast machine, too short a window
    to signal "during the build"; 4 x 150,000 rows keep the server busy inserting for seconds.
    """
    scenarios = root / "scenarios"
    shutil.copytree(REPO / "scenarios", scenarios)
    toml = scenarios / "oltp_point_select.toml"
    text = toml.read_text()
    quick_profile = text.split("[profiles.quick]", 1)[1].split("[profiles.", 1)[0]
    slow = quick_profile.replace("tables = 2", "tables = 4").replace("table_size = 10000", "table_size = 150000")
    assert slow != quick_profile, "the quick profile's dataset lines changed: update this test"
    toml.write_text(text.replace(quick_profile, slow))
    return scenarios


def test_sigterm_during_prepare(fault: Fault):
    cache = fault.root / "fresh-cache"
    scenarios = _slow_to_prepare(fault.root)
    streamed = fault.start(*quick("--cache-dir", str(cache), "--scenarios-dir", str(scenarios)))
    streamed.wait_for_stderr(lambda line: "preparing dataset" in line, timeout_s=300)
    # inside the build: the half-built snapshot's server is up (it then inserts the rows, for seconds)
    deadline = time.monotonic() + 120
    while not server_pids_under(cache / "snapshots"):
        assert streamed.proc.poll() is None, streamed.stderr_text()
        assert time.monotonic() < deadline, "the build's server did not start: " + streamed.stderr_text()
        time.sleep(0.05)
    assert list((cache / "snapshots").glob("tmp-*")), "the build had not started"
    streamed.proc.send_signal(signal.SIGTERM)
    code = streamed.wait(timeout_s=180)
    line = closing_line(streamed.stderr_text())
    assert code == 130, line
    assert "interrupted; servers stopped and temporary files removed (SIGTERM)" in line
    assert not [p for p in (cache / "snapshots").iterdir() if p.is_dir()], "a half-built snapshot was left"
    leaks = fault.leaks(cache)
    assert leaks == [] and fault.earlier_readable()
    record("SIGTERM during prepare (snapshot build)", code, line, "the interrupted run, as failed", leaks)


def _counted_servers(tmpdir: Path) -> list[str]:
    """The servers under valgrind whose run folders are in ``tmpdir``."""
    return [line for line in processes_mentioning(str(tmpdir)) if "--tool=callgrind" in line]


def test_sigint_during_side_by_side_cost_runs_stops_both_servers(fault: Fault):
    """Two cost runs go at once (DBPERF_COST_SLOTS=2): an interrupt stops both servers, stores one
    interrupted run and leaves nothing behind."""
    fault.extra_env["DBPERF_COST_SLOTS"] = "2"
    streamed = fault.start(
        "compare", "--cost", "--base", "mariadb-local", "--head", "mariadb-local",
        *("--scenario", "oltp_point_select", "--profile", "quick", "--repetitions", "2", "--yes"),
    )  # fmt: skip
    streamed.wait_for_stderr(lambda line: "[2/2] counting " in line, timeout_s=300)
    streamed.wait_for_stderr(lambda line: "[1/2] counting " in line, timeout_s=60)
    deadline = time.monotonic() + 120
    while len(_counted_servers(fault.tmpdir)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_counted_servers(fault.tmpdir)) == 2, processes_mentioning(str(fault.tmpdir))
    streamed.proc.send_signal(signal.SIGINT)
    code = streamed.wait(timeout_s=300)
    line = closing_line(streamed.stderr_text())
    assert code == 130, line
    assert line == "dbperf: interrupted; servers stopped and temporary files removed (SIGINT)", line
    runs = [r for r in fault.runs() if r["run_id"] != fault.earlier]
    interrupted = [r for r in runs if "interrupted (SIGINT)" in str(r["failure"] or "")]
    assert len(interrupted) == 1, runs
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record(
        "SIGINT during two side-by-side cost runs",
        code,
        line,
        "1 'interrupted' failed run; both servers stopped",
        leaks,
    )
