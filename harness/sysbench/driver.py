"""The sysbench stage: version check, command lines, a Lua report hook, live progress and parsing.

sysbench 1.0.20 has no machine-readable report, so dbperf runs each scenario through a small wrapper
script (``wrapper.lua``, beside this module) that ``require``\\ s the scenario's script and replaces the
report hooks with one prefixed JSON line per report (``@dbperf {...}``), written with a single
``io.write``. The wrapper is written into a folder dbperf controls (sysbench searches the working
directory first for ``require``).

Warm-up is measured but excluded: ``--report-checkpoints=<warm-up>`` makes sysbench emit (and reset)
the cumulative statistics and the latency histogram at the end of the warm-up, so the final cumulative
record and ``--histogram=on`` cover exactly the measured window. p50/p95/p99 come from that histogram.

``prepare`` loads the same rows every time: sysbench 1.0.20's ``--rand-seed`` does not make it repeat, so the
wrapper replaces the generators a loader draws from with a seeded one while each table is filled
(``--dbperf-seeded-load``; ``DATASET_LOADER`` in harness.config.scenarios names this version of the rows).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import string
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from harness import workspace
from harness.config.scenarios import BUNDLED_SCRIPTS, resolve_script
from harness.errors import LogParseError, SysbenchError
from harness.model import IntervalSample, LatencyBucket, OperationStats, Scenario, Totals
from harness.model.endpoint import Endpoint
from harness.sysbench.failures import SysbenchFailure, classify_failure, overrun
from harness.sysbench.histogram import parse_histogram
from harness.sysbench.ops_protocol import miss_failure, parse_operations
from harness.workspace import child_environment

PINNED_VERSION = "1.0.20"
PREFIX = "@dbperf "

#: The Lua wrapper around every scenario script (``$module``: the script's module, ``$prefix``: PREFIX).
_WRAPPER = string.Template((resources.files("harness.sysbench") / "wrapper.lua").read_text())


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


def mask(argv: list[str]) -> list[str]:
    """The command line with the password replaced, for logs and the store."""
    return [re.sub(r"^(--mysql-password=).*$", r"\1***", a) for a in argv]


SECRETS_FILE = "dbperf-connection.cfg"
_CONFIG_LINE_MAX = 250  # sysbench reads option files in lines of 256 bytes


def connection_args(endpoint: Endpoint, folder: Path) -> list[str]:
    """sysbench's connection options, the password in a 0600 option file in ``folder`` (not in argv).

    sysbench 1.0.20 has no password file option, but it reads any option from ``--config-file``
    (``name=value`` lines; a value in double or single quotes may hold spaces, commas and ``#``).
    The command line is readable by every user through ``ps`` and ``/proc/*/cmdline``; the file is
    readable only by its owner, in a folder only dbperf uses, and removed with it.
    """
    args = endpoint.sysbench_args()
    if not endpoint.password:
        return args
    password = endpoint.password
    quote = '"' if '"' not in password else "'"
    if quote in password or "\n" in password or len(password) > _CONFIG_LINE_MAX - 20:
        raise SysbenchError(
            f"the password of {endpoint.user}@{endpoint.host}:{endpoint.port} cannot be handed to sysbench "
            "safely (it holds both quote characters, a line break, or more than 230 characters): change it"
        )
    path = folder / SECRETS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(f"mysql-password={quote}{password}{quote}\n")
    return [*args, f"--config-file={path}"]


@contextmanager
def workdir(scenario: Scenario) -> Iterator[tuple[Path, Path]]:
    """A folder in this process's workspace holding the wrapper (and a custom script, and the
    connection's option file); yields (folder, wrapper path)."""
    with workspace.current().temp("sysbench") as folder:
        yield _fill(scenario, folder)


def _fill(scenario: Scenario, folder: Path) -> tuple[Path, Path]:
    if scenario.script in BUNDLED_SCRIPTS:
        module = scenario.script
    else:
        scenarios_dir = scenario.source.parent if scenario.source else Path("scenarios")
        source = resolve_script(scenario.script, scenarios_dir)
        module = "dbperf_custom_" + re.sub(r"\W", "_", source.stem)
        # the modules beside the script (e.g. dbperf_ops.lua) are found by require() under their own names
        for sibling in sorted(source.parent.glob("*.lua")):
            if sibling != source:
                shutil.copyfile(sibling, folder / sibling.name)
        shutil.copyfile(source, folder / f"{module}.lua")
    wrapper = folder / "dbperf_run.lua"
    wrapper.write_text(_WRAPPER.substitute(module=module, prefix=PREFIX))
    return folder, wrapper


def dataset_args(scenario: Scenario) -> list[str]:
    return [f"--tables={scenario.tables}", f"--table-size={scenario.table_size}"]


def forced_shutdown_s(total_s: int, threads: int) -> int:
    """Seconds sysbench waits after --time for in-flight transactions before it shuts a run down."""
    return max(10, total_s // 5, threads // 32)


def run_argv(
    scenario: Scenario, endpoint: Endpoint, wrapper: Path, threads: int, client_cpuset: str | None
) -> list[str]:
    total = scenario.warmup_s + scenario.time_s
    argv = [
        "sysbench",
        str(wrapper),
        *connection_args(endpoint, wrapper.parent),
        *dataset_args(scenario),
        f"--threads={threads}",
        f"--time={total}",
        "--events=0",
        "--report-interval=1",
        "--histogram=on",
        f"--percentile={scenario.percentile}",
        f"--rand-type={scenario.rand_type}",
        # the drain after --time grows with the threads in flight: 1024 read/write threads on a loaded
        # 2-core machine took more than 10 s to finish their transactions; a statement blocked for
        # this long (32 s at 1024 threads) is still a stall
        f"--forced-shutdown={forced_shutdown_s(total, threads)}",
        *(f"--{k}={v}" for k, v in scenario.options.items()),
    ]
    if scenario.warmup_s > 0:
        argv.append(f"--report-checkpoints={scenario.warmup_s}")
        argv.append(f"--dbperf-warmup-s={scenario.warmup_s}")  # the per-operation protocol's cut
    argv.append("run")
    if client_cpuset:
        argv = ["taskset", "-c", client_cpuset, *argv]
    return argv


def cost_argv(
    scenario: Scenario,
    endpoint: Endpoint,
    wrapper: Path,
    threads: int,
    events: int,
    client_cpuset: str | None,
    *,
    seed: int,
    rollback: bool = False,
) -> list[str]:
    """A fixed number of transactions (``--events``, no time limit): a cost run counts work, not seconds.

    ``--db-ps-mode`` is pinned (server-side prepared statements, unless the scenario says otherwise):
    the text protocol costs the server far more instructions per query (docs/method.md). ``--rand-seed`` is
    ``seed``: the warm-up and the measured window each pass their own fixed seed (``[cost]``
    ``warmup_seed`` and ``seed``), so both sides of a comparison issue the same statements and the
    measured window does not replay the warm-up's. A ``rand-seed`` in the scenario's ``[options]``
    applies to timing runs only. ``rollback`` runs each event inside ``BEGIN`` ... ``ROLLBACK`` (a warm-up
    that leaves the tables as they were, ``[cost] warmup = "rollback"``).
    """
    argv = [
        "sysbench",
        str(wrapper),
        *connection_args(endpoint, wrapper.parent),
        *dataset_args(scenario),
        f"--threads={threads}",
        "--time=0",
        f"--events={events}",
        "--report-interval=0",
        f"--rand-type={scenario.rand_type}",
        *(f"--{k}={v}" for k, v in scenario.options.items() if k.replace("_", "-") != "rand-seed"),
    ]
    if "db-ps-mode" not in scenario.options:
        argv.append("--db-ps-mode=auto")
    argv.append(f"--rand-seed={seed}")  # the same rows on both sides (multi-threaded runs still interleave)
    if rollback:
        argv.append("--dbperf-rollback=on")
    argv.append("run")
    return ["taskset", "-c", client_cpuset, *argv] if client_cpuset else argv


def prepare_argv(scenario: Scenario, endpoint: Endpoint, wrapper: Path, threads: int) -> list[str]:
    return [
        "sysbench",
        str(wrapper),
        *connection_args(endpoint, wrapper.parent),
        *dataset_args(scenario),
        f"--threads={max(1, min(threads, scenario.tables))}",
        *(f"--{k}={v}" for k, v in scenario.options.items()),
        "--dbperf-seeded-load=on",  # the same rows on every preparation (the wrapper's seeded load)
        "prepare",
    ]


@dataclass(frozen=True)
class SysbenchOutcome:
    """What one sysbench run produced, parsed."""

    argv: tuple[str, ...]
    exit_code: int
    elapsed_s: float
    intervals: tuple[IntervalSample, ...]
    totals: Totals | None
    histogram: tuple[LatencyBucket, ...]
    failure: SysbenchFailure | None
    output: str
    #: per-operation statistics, when the script reports them (``DBPERF-OPS`` lines)
    operations: tuple[OperationStats, ...] = ()


def _counts(record: Mapping[str, float]) -> dict[str, int]:
    """The raw counts an interval and the totals both carry, under the records' own field names."""
    return {name: int(record[name]) for name in ("events", "reads", "writes", "other", "errors", "reconnects")}


def _interval(record: Mapping[str, float], warmup_s: float) -> IntervalSample:
    return IntervalSample(
        t_s=float(record["t"]),
        interval_s=float(record["dt"]),
        threads_running=int(record["threads"]),
        **_counts(record),
        latency_pct_ms=float(record["lat_pct"]) * 1000.0,
        warmup=float(record["t"]) <= warmup_s + 0.5,
    )


def _totals(record: Mapping[str, float]) -> Totals:
    return Totals(
        time_s=float(record["dt"]),
        **_counts(record),
        latency_min_ms=float(record.get("lat_min", 0.0)) * 1000.0,
        latency_avg_ms=float(record.get("lat_avg", 0.0)) * 1000.0,
        latency_max_ms=float(record.get("lat_max", 0.0)) * 1000.0,
        latency_pct_ms=float(record["lat_pct"]) * 1000.0,
    )


def parse_output(text: str, *, warmup_s: float, exit_code: int, expected_s: float) -> SysbenchOutcome:
    """Parse the wrapper's JSON lines, the histogram and any failure out of sysbench's output."""
    intervals: list[IntervalSample] = []
    cumulative: list[Mapping[str, float]] = []
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        try:
            record = json.loads(line[len(PREFIX) :])
        except json.JSONDecodeError:
            continue
        if record.get("kind") == "interval":
            intervals.append(_interval(record, warmup_s))
        elif record.get("kind") == "cumulative":
            cumulative.append(record)
    histogram = tuple(LatencyBucket(b.value_ms, b.count) for b in parse_histogram(text.splitlines()))
    # with a warm-up checkpoint the first cumulative record is the warm-up, the last the measured window
    measured = cumulative[-1] if cumulative and (warmup_s <= 0 or len(cumulative) >= 2) else None
    totals = _totals(measured) if measured else None
    failure = classify_failure(text, exit_code)
    operations: tuple[OperationStats, ...] = ()
    try:
        operations = parse_operations(text.splitlines(), totals.time_s if totals else 0.0)
    except LogParseError as exc:
        failure = failure or SysbenchFailure(
            kind="protocol",
            error_code=None,
            excerpt="",
            cause=f"the workload script wrote a malformed per-operation line ({exc.problem})",
            fix="fix the script's DBPERF-OPS output (scenarios/README.md, the per-operation protocol)",
        )
    failure = failure or miss_failure(operations)  # a read of a record that does not exist (issue 37)
    if failure is None and exit_code != 0:
        failure = classify_failure(text + "\n(exit code only)", exit_code)
    if failure is None and totals is None:
        failure = SysbenchFailure(
            kind="unknown",
            error_code=None,
            excerpt=" | ".join(text.strip().splitlines()[-3:]),
            cause="sysbench ended without a final report",
            fix="check the server's error log and sysbench's output above",
        )
    if failure is None and measured is not None and expected_s > 0:
        # in-flight transactions finish after --time: allow the slowest one (seconds at 1024 threads)
        tolerance = max(2.0, 1.5 * float(measured.get("lat_max", 0.0)))
        failure = overrun(expected_s, float(measured["t"]), tolerance_s=tolerance)
    return SysbenchOutcome(
        argv=(),
        exit_code=exit_code,
        elapsed_s=0.0,
        intervals=tuple(intervals),
        totals=totals,
        histogram=histogram,
        failure=failure,
        output=text,
        operations=operations,
    )


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
    assert proc.stdout is not None
    space = workspace.current()
    space.track(proc.pid, "sysbench")
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
                        sample = _interval(json.loads(item[len(PREFIX) :]), warmup_s)
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
        with subprocess.Popen(
            argv,
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=child_environment(),
        ) as proc:
            space.track(proc.pid, "sysbench prepare")
            try:
                stdout, stderr = proc.communicate()
            finally:
                if proc.poll() is None:
                    proc.kill()
                space.untrack(proc.pid)
        if proc.returncode != 0:
            text = stdout + stderr
            failure = classify_failure(text, proc.returncode)
            detail = failure.message() if failure else " | ".join(text.strip().splitlines()[-3:])
            raise SysbenchError(f"sysbench prepare failed: {detail}")
        return time.monotonic() - started
