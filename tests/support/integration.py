"""Checks shared by the integration tests: what a plausible stored run looks like, leftovers."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql

from harness.model import RunResult, Server
from harness.model.endpoint import Endpoint

CONTAINER_TARGETS = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7")
ALL_TARGETS = ("mariadb-local", *CONTAINER_TARGETS)
LABEL = "org.dbperf.managed"
OWNER_LABEL = "org.dbperf.owner-pid"

#: A live progress line of ``dbperf run`` on stderr: ``  [    3s] qps  12,345  tps ... p95  0.12 ms``.
PROGRESS_AT = re.compile(r"^\s*\[\s*(\d+)s\]\s+qps\s+[\d,]+\s.*\bp95\s+[\d.]+\s*ms")


def assert_plausible(
    run: RunResult,
    server: Server,
    *,
    threads: int,
    min_qps: float = 100.0,
    max_error_ratio: float = 0.0,
) -> None:
    """A stored ok run with sane numbers, the pinned server version, intervals, histogram and probes.

    ``max_error_ratio``: ignored errors per transaction allowed. sysbench retries deadlocks (1213),
    lock wait timeouts (1205) and write conflicts (1020) without failing, so a read/write workload
    may see a few; a read-only one never should.
    """
    where = f"{run.server} {run.scenario} {run.threads}t (run {run.run_id})"
    assert run.status == "ok", f"{where}: {run.failure}"
    assert run.failure == ""
    assert run.server == server.name
    assert run.provider == server.provider
    assert run.flavour == server.flavour
    assert run.threads == threads
    assert run.server_version.startswith(server.version), f"{where}: version {run.server_version!r}"
    assert run.config_hash, where
    assert run.variables, f"{where}: effective variables not stored"
    assert run.testbed.sysbench_version == "1.0.20"

    m = run.metrics
    assert m.qps is not None and m.qps > min_qps, f"{where}: qps {m.qps}"
    # every transaction runs at least one query (an event may end just after its last query is counted)
    assert m.tps is not None and 0 < m.tps <= m.qps * 1.01 + 1, f"{where}: tps {m.tps} qps {m.qps}"
    assert m.p50_ms is not None and m.p95_ms is not None and m.p99_ms is not None, where
    assert 0 < m.p50_ms <= m.p95_ms <= m.p99_ms, f"{where}: p50 {m.p50_ms} p95 {m.p95_ms} p99 {m.p99_ms}"
    totals = run.totals
    assert totals is not None and totals.events > 0
    assert m.errors_per_s is not None and m.errors_per_s <= max_error_ratio * m.tps, (
        f"{where}: errors/s {m.errors_per_s} at tps {m.tps}"
    )
    assert totals.errors <= max_error_ratio * totals.events
    assert m.reconnects_per_s == 0, where
    # in-flight transactions finish after --time: allow the slowest one, as the overrun check does
    allowance = max(1.0, 1.5 * (totals.latency_max_ms or 0.0) / 1000.0)
    assert abs(totals.time_s - run.time_s) < allowance, f"{where}: measured {totals.time_s} s for {run.time_s} s"
    # qps and tps are the measured window's rates
    assert abs(m.qps - totals.queries / totals.time_s) <= 0.01 * m.qps
    assert abs(m.tps - totals.events / totals.time_s) <= 0.01 * m.tps

    # one interval per second, warm-up marked, and their counts add up to the measured totals
    assert run.intervals, f"{where}: no intervals stored"
    measured = [i for i in run.intervals if not i.warmup]
    warmup = [i for i in run.intervals if i.warmup]
    # sysbench's report thread prints an interval per tick; on a starved client CPU a report comes late (a
    # longer interval) and one due after the clients stop is never printed. The bounds that hold: no
    # interval shorter than a tick's jitter, none past the run's end, and at least one in the window.
    assert measured, f"{where}: no measured interval"
    assert all(w.t_s < measured[0].t_s for w in warmup), f"{where}: a warm-up interval after the window opened"
    assert all(i.interval_s >= 0.3 for i in run.intervals), f"{where}: an interval shorter than 0.3 s"
    assert run.intervals[-1].t_s <= run.warmup_s + run.time_s + allowance, (
        f"{where}: an interval at {run.intervals[-1].t_s} s, after the {run.warmup_s} + {run.time_s} s run"
    )
    assert [i.t_s for i in run.intervals] == sorted(i.t_s for i in run.intervals)
    assert sum(i.errors for i in run.intervals) <= max_error_ratio * sum(i.events for i in run.intervals)
    # sysbench may skip the last interval report when the run ends on it, so compare rates
    interval_events = sum(i.events for i in measured)
    # Two sysbench threads cut the window at the warm-up's end: the report thread (intervals) and the
    # checkpoint thread (totals), woken by the same tick; on a starved client CPU one may run up to a
    # scheduling round after the other. The bound that holds: at most 1 s of the window's transactions.
    per_second = totals.events / totals.time_s
    assert interval_events <= totals.events + per_second, (
        f"{where}: intervals count {interval_events} events, totals {totals.events}: more than the 1 s of "
        f"transactions ({per_second:.0f}) the two cuts at the warm-up's end may be apart"
    )
    interval_tps = interval_events / sum(i.interval_s for i in measured)
    assert 0.5 * m.tps <= interval_tps <= 1.5 * m.tps, f"{where}: interval tps {interval_tps} vs {m.tps}"

    # The histogram covers the measured window less what ended between sysbench's two cuts at the warm-up's
    # end (its counters first, then its histogram: harness/measure/timing.py, histogram_coverage_notes):
    # never more than the window's count, at most 1 s of it, and a run missing more than 0.5 % says so.
    assert run.histogram, f"{where}: no histogram stored"
    hist_events = sum(b.count for b in run.histogram)
    missing = totals.events - hist_events
    assert 0 <= missing <= per_second, (
        f"{where}: histogram {hist_events} vs events {totals.events}: expected 0 to {per_second:.0f} fewer "
        "(the transactions that ended between sysbench's two cuts at the warm-up's end, at most 1 s of them)"
    )
    said = any("latency histogram" in note for note in run.notes)
    assert said == (missing > 0.005 * totals.events), f"{where}: {missing} missing from the histogram; {run.notes}"
    assert all(b.count > 0 and b.value_ms > 0 for b in run.histogram)

    # server CPU per transaction from the server process's CPU clock (local and container alike), read
    # first when the window opens (before the counters, whose read waits behind a saturated server's clients)
    cpu_s = run.probes.server_cpu_s
    assert cpu_s is not None and cpu_s > 0, f"{where}: server CPU {cpu_s} s for {totals.events} events; {run.probes}"
    assert m.cpu_per_txn is not None and m.cpu_per_txn > 0, f"{where}: cpu/txn {m.cpu_per_txn}"
    expected_cpu = run.probes.server_cpu_s * 1e6 / totals.events
    assert abs(m.cpu_per_txn - expected_cpu) <= 0.01 * expected_cpu
    # perf cannot count instructions on this machine: recorded as absent, with the reason
    if run.probes.instructions is None:
        assert m.instr_per_txn is None
        assert run.probes.instructions_note, f"{where}: absent instructions without a reason"
    else:
        assert m.instr_per_txn is not None and m.instr_per_txn > 0
    assert run.probes.status_deltas.get("questions", 0) > 0, f"{where}: no SHOW GLOBAL STATUS deltas"


def containers_of(owner_pid: int) -> list[str]:
    """Containers (running or not) labelled by dbperf for the process ``owner_pid``."""
    out = subprocess.run(
        [
            "docker",
            "ps",
            "-a",
            "--filter",
            f"label={LABEL}=true",
            "--filter",
            f"label={OWNER_LABEL}={owner_pid}",
            "--format",
            "{{.ID}} {{.Status}}",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [line for line in out.stdout.splitlines() if line.strip()]


def command_lines() -> Iterator[tuple[str, str]]:
    """(pid, command line) of every live process (one that ends while it is read is left out)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        yield proc.name, cmdline


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (e.g. a private TMPDIR)."""
    return [f"{pid}: {cmdline.strip()}" for pid, cmdline in command_lines() if text in cmdline]


def stop_process(proc: subprocess.Popen[bytes], grace_s: float = 60) -> None:
    """End a server a test started: SIGTERM (a clean shutdown), SIGKILL after ``grace_s``; always reaped."""
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def server_pids_under(folder: Path) -> list[int]:
    """Pids of mariadbd/mysqld processes whose command line points into ``folder``."""
    pids = []
    for line in processes_mentioning(str(folder)):
        pid, cmdline = line.split(": ", 1)
        program = Path(cmdline.split(" ", 1)[0]).name
        if program in {"mariadbd", "mysqld"}:
            pids.append(int(pid))
    return pids


@contextlib.contextmanager
def reaping(*procs: subprocess.Popen[str]) -> Iterator[None]:
    """On the way out, even after a failed assertion: end the processes still running and reap them all.

    A process a failed test leaves running outlives the test, and its pipes surface as ResourceWarnings
    ("subprocess N is still running", "unclosed file") in whatever test runs next.
    """
    try:
        yield
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)  # dbperf stops its servers on SIGTERM
        for proc in procs:
            try:
                proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate(timeout=30)


#: An account with no privileges, for tests of what runs as someone other than root.
UNPRIVILEGED = "dbperf-unprivileged"


def unprivileged_user() -> str:
    """:data:`UNPRIVILEGED`, created once (no home, no shell, no groups); tests run as root."""
    if subprocess.run(["id", UNPRIVILEGED], capture_output=True, check=False).returncode != 0:
        subprocess.run(
            ["useradd", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", UNPRIVILEGED],
            check=True,
            timeout=60,
        )
    return UNPRIVILEGED


def processes_of(user: str) -> list[int]:
    """Pids of the live processes ``user`` owns."""
    import pwd

    uid = pwd.getpwnam(user).pw_uid
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if proc.stat().st_uid == uid:
                    found.append(int(proc.name))
    return found


@contextlib.contextmanager
def throwaway_mariadb(datadir: Path, *options: str) -> Iterator[Endpoint]:
    """A bare MariaDB (no dbperf) on a free loopback port with an empty ``sbtest`` database, root without a
    password; stopped and reaped on exit, even when the body fails."""
    # its own tmpdir: a starting server deletes every #sql* file in its tmpdir, other servers' included
    tmpdir = datadir.parent / f"{datadir.name}-tmp"
    tmpdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            *("mariadb-install-db", "--no-defaults", f"--datadir={datadir}"),
            *("--auth-root-authentication-method=normal", f"--tmpdir={tmpdir}"),
        ],
        capture_output=True,
        check=True,
        timeout=120,
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    argv = ["mariadbd", "--no-defaults", f"--datadir={datadir}", f"--port={port}", "--bind-address=127.0.0.1"]
    argv += [f"--socket={datadir}/sock", f"--tmpdir={tmpdir}", "--user=root", *options]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
                break
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.3)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE sbtest")
        conn.close()
        yield Endpoint("127.0.0.1", port, "root", "", "sbtest")
    finally:
        stop_process(proc)


def passed_ids(output: str) -> set[str]:
    """The scenario tests that ran and were not failed: judged and passed, or skipped because this
    fresh baselines folder has no baseline to judge them against (the skip must say so)."""
    skipped = set(re.findall(r"test_scenario\[([^\]]+)\] SKIPPED", output))
    if skipped:
        reasons = re.findall(r"^SKIPPED .*$", output, re.M)
        assert reasons and all("nothing judged: no baseline" in line for line in reasons), reasons
    return set(re.findall(r"test_scenario\[([^\]]+)\] PASSED", output)) | skipped
