"""The sysbench stage: the pinned version, one run with live progress and its clock, and ``prepare``.

The command lines are built by :mod:`harness.sysbench.command_lines` and the output parsed by
:mod:`harness.sysbench.run_output`; this module starts sysbench, streams its progress, notices a
stall and names its cause, and kills a run that outlives its time limit.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

from harness import workspace
from harness.errors import SysbenchError
from harness.model import IntervalSample, Scenario
from harness.model.endpoint import Endpoint
from harness.sysbench.command_lines import mask, prepare_argv, workdir
from harness.sysbench.failures import SysbenchFailure, classify_failure
from harness.sysbench.run_output import PREFIX, SysbenchOutcome, interval_sample, parse_output
from harness.workspace import child_environment

PINNED_VERSION = "1.0.20"


def installed_version(binary: str = "sysbench") -> str:
    path = shutil.which(binary)
    if path is None:
        raise SysbenchError("sysbench is not installed; run the README's set-up command (apt-get install sysbench)")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False, env=child_environment())
    match = re.search(r"sysbench (\d+\.\d+\.\d+)", out.stdout)
    if not match:
        raise SysbenchError(f"cannot read the sysbench version from '{out.stdout.strip()}'")
    return match.group(1)


def check_version(pinned: str = PINNED_VERSION) -> str:
    """The installed sysbench must be the pinned one: numbers from another version do not compare."""
    found = installed_version()
    if found != pinned:
        raise SysbenchError(
            f"sysbench {found} is installed but dbperf pins {pinned}; install sysbench {pinned} "
            "(Debian 12's package) or results will not compare with the baselines"
        )
    return found


#: Seconds without a progress line (an interval that did work, or any other output) before dbperf
#: says so and names the cause; the notice repeats every ``_NOTICE_EVERY_S`` while it lasts.
SILENCE_S = 10.0
_NOTICE_EVERY_S = 30.0
_EOF = object()


def process_state(pid: int | None) -> str:
    """The state letter of ``/proc/<pid>/stat`` ("R", "S", "D", "T" stopped, "Z"), "" when it is gone."""
    if pid is None:
        return "?"
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.rindex(")") + 2 :].split(" ", 1)[0]


def stall_cause(silent_s: float, client_pid: int, server_pid: int | None) -> str:
    """Why no progress has come for ``silent_s`` seconds: the client stopped, the server stopped or gone, or waits."""
    head = f"no progress from sysbench for {silent_s:.0f} s: "
    if process_state(client_pid) in {"T", "t"}:
        return head + (
            f"sysbench itself (pid {client_pid}) is stopped (SIGSTOP, a debugger or a job-control stop): the "
            "client stopped, not the server; continue it (kill -CONT) or stop the run"
        )
    server = process_state(server_pid)
    if server in {"T", "t"}:
        return head + (
            f"the server process (pid {server_pid}) is stopped (SIGSTOP or a debugger): no statement can finish; "
            "continue it (kill -CONT) or stop the run"
        )
    if server in {"", "Z"}:
        return head + f"the server process (pid {server_pid}) is gone; sysbench is waiting on its connections"
    return head + (
        "sysbench and the server both run, so statements are waiting: locks held by other sessions, a "
        "stalled disk, or a starved CPU"
    )


def _read_lines(stream: Iterator[str], into: queue.Queue[object]) -> None:
    try:
        for line in stream:
            into.put(line)
    finally:
        into.put(_EOF)


def _start(argv: list[str], cwd: Path, what: str) -> subprocess.Popen[str]:
    """sysbench started in ``cwd``, its output and errors on one pipe, tracked by this process's workspace."""
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=child_environment(),
        )
    except FileNotFoundError as exc:
        raise SysbenchError(f"cannot run {argv[0]}: {exc.strerror}; run the README's set-up command") from exc
    workspace.current().track(proc.pid, what)
    return proc


#: What sysbench prints when every client thread is ready and its clock starts (``threads_started_callback``).
THREADS_STARTED = "Threads started!"


def run(
    argv: list[str],
    *,
    cwd: Path,
    warmup_s: float,
    expected_s: float,
    on_interval: Callable[[IntervalSample], None] | None = None,
    timeout_s: float | None = None,
    on_notice: Callable[[str], None] | None = None,
    server_pid: int | None = None,
    on_started: Callable[[], None] | None = None,
) -> SysbenchOutcome:
    """Run sysbench, streaming interval records to ``on_interval`` as they arrive.

    ``on_started`` is called when sysbench says "Threads started!": every client has connected and
    prepared its statements, and sysbench's clock (warm-up, checkpoint, ``--time``) starts then.

    The clock, not sysbench's output, keeps the time: a frozen sysbench is noticed within
    :data:`SILENCE_S` seconds (``on_notice`` gets the cause: the client stopped, the server stopped or
    gone, or statements waiting), and killed when ``timeout_s`` passes even if it never prints again;
    the failure then names the cause.
    """
    started = time.monotonic()
    lines: list[str] = []
    space = workspace.current()
    proc = _start(argv, cwd, "sysbench")
    assert proc.stdout is not None
    arrived: queue.Queue[object] = queue.Queue()
    reader = threading.Thread(target=_read_lines, args=(proc.stdout, arrived), name="sysbench-output", daemon=True)
    reader.start()
    progress = noticed = started
    stalled = ""
    killed = False
    try:
        while True:
            try:
                item = arrived.get(timeout=1.0)
            except queue.Empty:
                item = None
            now = time.monotonic()
            if item is _EOF:
                break
            if isinstance(item, str):
                lines.append(item.rstrip("\n"))
                sample = None
                if item.startswith(PREFIX + '{"kind":"interval"'):
                    with suppress(json.JSONDecodeError, KeyError):
                        sample = interval_sample(json.loads(item[len(PREFIX) :]), warmup_s)
                if sample is None or sample.qps > 0:  # an interval that did no work is no progress
                    progress = now
                if sample is not None and on_interval:
                    on_interval(sample)
                elif on_started is not None and item.strip() == THREADS_STARTED:
                    on_started()
            silent = now - progress
            if silent >= SILENCE_S and now - noticed >= min(_NOTICE_EVERY_S, silent):
                stalled = stall_cause(silent, proc.pid, server_pid)
                noticed = now
                if on_notice:
                    on_notice(stalled)
            if not killed and timeout_s is not None and now - started > timeout_s:
                killed = True
                proc.kill()  # SIGKILL ends a stopped process too
        exit_code = proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(timeout=10)
        proc.stdout.close()
        space.untrack(proc.pid)
    parsed = parse_output("\n".join(lines), warmup_s=warmup_s, exit_code=exit_code, expected_s=expected_s)
    failure = parsed.failure
    if killed:
        failure = SysbenchFailure(
            kind="overrun",
            error_code=None,
            excerpt=" | ".join(lines[-2:])[:300],
            cause=f"sysbench did not finish within its time limit of {timeout_s:.0f} s and was killed"
            + (f"; {stalled}" if stalled else ""),
            fix="find what held the run (the cause above) and run it again",
        )
    return SysbenchOutcome(
        argv=tuple(mask(argv)),
        exit_code=exit_code,
        elapsed_s=time.monotonic() - started,
        intervals=parsed.intervals,
        totals=parsed.totals,
        histogram=parsed.histogram,
        failure=failure,
        output=parsed.output,
        operations=parsed.operations,
    )


def prepare(scenario: Scenario, endpoint: Endpoint, threads: int = 2) -> float:
    """Create and fill the scenario's tables (the same rows every time); returns the seconds it took."""
    with workdir(scenario) as (folder, wrapper):
        argv = prepare_argv(scenario, endpoint, wrapper, threads)
        started = time.monotonic()
        space = workspace.current()
        with _start(argv, folder, "sysbench prepare") as proc:
            try:
                text, _ = proc.communicate()
            finally:
                if proc.poll() is None:
                    proc.kill()
                space.untrack(proc.pid)
        if proc.returncode != 0:
            failure = classify_failure(text, proc.returncode)
            detail = failure.message() if failure else " | ".join(text.strip().splitlines()[-3:])
            raise SysbenchError(f"sysbench prepare failed: {detail}")
        return time.monotonic() - started
