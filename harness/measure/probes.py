"""Server-side probes over the measured window: CPU time, instructions, status counter deltas.

On shared machines server CPU time and instructions per transaction vary far less between identical runs than
QPS does (docs/method.md), so these costs are recorded beside QPS and p95. CPU time comes from the server
process's CPU-time clock (nanoseconds, all threads; the process is visible from the host for containers too;
``/proc/<pid>/stat`` ticks where the clock is not); instructions from ``perf stat -e instructions -p PID``
where the kernel allows it (recorded as absent, with the reason, otherwise).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import ServerError
from harness.model import Probes
from harness.model.endpoint import Endpoint
from harness.model.work import WORK_COUNTERS
from harness.servers.provider import read_status
from harness.workspace import child_environment

_KEPT = frozenset(
    (
        "innodb_buffer_pool_reads", "innodb_buffer_pool_read_requests", "innodb_data_fsyncs", "innodb_log_waits",
        "innodb_row_lock_waits", "handler_read_key", "handler_read_next", "handler_write", "handler_update",
        "handler_delete", "created_tmp_disk_tables",
    )
)  # fmt: skip
#: Counters whose deltas are kept (the rest of SHOW GLOBAL STATUS is noise for our purposes): those
#: below, and every counter of the work vector (:data:`harness.model.work.WORK_COUNTERS`).
STATUS_COUNTERS = (
    "questions",
    "queries",
    "com_select",
    "com_insert",
    "com_update",
    "com_delete",
    "com_begin",
    "com_commit",
    "com_stmt_execute",
    "com_stmt_prepare",
    "innodb_rows_read",
    "innodb_rows_inserted",
    "innodb_rows_updated",
    "innodb_rows_deleted",
    "innodb_buffer_pool_reads",
    "innodb_buffer_pool_read_requests",
    "innodb_buffer_pool_write_requests",
    "innodb_data_fsyncs",
    "innodb_log_waits",
    "innodb_row_lock_waits",
    "handler_read_key",
    "handler_read_next",
    "handler_write",
    "handler_update",
    "handler_delete",
    "threads_created",
    "connections",
    "aborted_clients",
    "aborted_connects",
    "created_tmp_tables",
    "created_tmp_disk_tables",
    "select_full_join",
    "sort_rows",
    "bytes_received",
    "bytes_sent",
    *(name for name in WORK_COUNTERS if name not in _KEPT),
)


@dataclass(frozen=True)
class StatusMark:
    """The counters at the start of a window, and what one ``SHOW GLOBAL STATUS`` read itself adds to them."""

    counters: dict[str, int]
    own: dict[str, int]


def status_mark(read: Callable[[], dict[str, int]]) -> StatusMark:
    """Open a counter window: two reads back to back; their difference is the reading's own footprint.

    A window's delta (end read minus start read) holds exactly one read's footprint (the part of the
    start read after its snapshot and the part of the end read before its own), so :func:`status_deltas`
    subtracts it: ``Questions``, ``Com_show_status``, the handler writes and temporary table of MySQL's
    status table. The reads are made outside callgrind's window (before ``-z``, after the dump), so they
    never count as instructions or system calls. ``read`` reads the counters (a cost run reads them over
    one held connection: :func:`harness.servers.provider.held_status`).
    """
    first = read()
    second = read()
    return StatusMark(second, {k: second[k] - first[k] for k in STATUS_COUNTERS if k in first and k in second})


def status_deltas(mark: StatusMark, read: Callable[[], dict[str, int]]) -> dict[str, int]:
    """The kept counters' change since ``mark``, less one reading's own footprint."""
    now = read()
    return {
        k: now[k] - mark.counters[k] - mark.own.get(k, 0) for k in STATUS_COUNTERS if k in now and k in mark.counters
    }


@functools.cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def process_cpu_seconds(pid: int) -> float:
    """CPU time of a process (all its threads, also those that ended) in seconds, to the nanosecond.

    Read from the process's CPU-time clock (``clock_getcpuclockid``); ``/proc/<pid>/stat``'s utime + stime
    count in clock ticks (10 ms), too coarse for a short window on a starved CPU, and are the fallback only
    where that clock is not available.
    """
    libc = _libc()
    clock = ctypes.c_int()
    if libc is not None and libc.clock_getcpuclockid(pid, ctypes.byref(clock)) == 0:
        try:
            return time.clock_gettime(clock.value)
        except OSError:
            pass  # the process ended between the two calls: /proc says so below
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError as exc:
        raise ServerError(f"cannot read CPU time of server pid {pid}: {exc.strerror}") from exc
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


@functools.cache
def perf_support() -> str:
    """'' when ``perf stat -e instructions`` counts here, else why it does not."""
    if shutil.which("perf") is None:
        return "perf is not installed (apt-get install linux-perf)"
    out = subprocess.run(
        ["perf", "stat", "-x,", "-e", "instructions", "true"],
        capture_output=True,
        text=True,
        check=False,
        env=child_environment(),
    )
    first = next((ln for ln in out.stderr.splitlines() if "instructions" in ln), "")
    value = first.split(",", 1)[0]
    if out.returncode != 0 or not value.strip().isdigit():
        return f"perf cannot count instructions here ({value.strip() or out.stderr.strip()[:80]})"
    return ""


#: A counter read at the window's start slower than this (seconds, and share of the window) is noted.
LATE_COUNTERS_S = 0.02
LATE_COUNTERS_SHARE = 0.01


@dataclass
class ProbeSession:
    """Start at the beginning of the measured window, stop at its end.

    Opening reads the server's CPU clock first (one system call: the window's start), then its counters
    over ``read_counters`` (a connection opened before sysbench started,
    :func:`harness.servers.provider.held_status`): a new connection's handshake and status query wait
    behind every busy client thread of a saturated server, and once took longer than the window itself.
    How late the counters were read, and a CPU reading that saw no work, become :attr:`notes`
    (docs/method.md, "The probe window").
    """

    pid: int | None
    endpoint: Endpoint | None
    read_counters: Callable[[], dict[str, int]] | None = None
    #: The measured window's planned length (seconds): a late counter read is noted against it
    window_s: float = 0.0
    _cpu0: float | None = None
    _status0: dict[str, int] = field(default_factory=dict)
    _status_lag_s: float = 0.0
    _perf: subprocess.Popen[bytes] | None = None
    _perf_out: Path | None = None
    _note: str = ""
    started: bool = False
    #: "line" when sysbench's interval line past the warm-up opened the window, "clock" when the timer did
    opened_by: str = ""
    #: What the readings cannot be taken for (set when the window closes; the run keeps them as notes)
    notes: tuple[str, ...] = ()
    _closed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, by: str = "line") -> None:
        """Open the window (once; the interval line and the clock may both ask, from two threads)."""
        with self._lock:
            if self.started or self._closed:
                return
            self.started = True
            self.opened_by = by
            self._open()

    def timer(self, after_s: float) -> threading.Timer:
        """A timer (not yet started) that opens the window ``after_s`` seconds after it starts."""
        clock = threading.Timer(after_s, self.start, kwargs={"by": "clock"})
        clock.daemon = True
        return clock

    def _counters(self) -> dict[str, int]:
        if self.read_counters is not None:
            return self.read_counters()
        assert self.endpoint is not None
        return read_status(self.endpoint)

    def _open(self) -> None:
        if self.pid is None:
            self._note = "server process not visible from this host"
        else:
            try:
                self._cpu0 = process_cpu_seconds(self.pid)
            except ServerError:
                self._cpu0 = None
        if self.endpoint is not None or self.read_counters is not None:
            asked = time.monotonic()
            try:
                self._status0 = self._counters()
            except ServerError:
                self._status0 = {}
            self._status_lag_s = time.monotonic() - asked
        if self.pid is None:
            return
        self._note = perf_support()
        if not self._note:
            handle, name = tempfile.mkstemp(prefix="dbperf-perf-", suffix=".csv")
            os.close(handle)
            self._perf_out = Path(name)
            self._perf = subprocess.Popen(
                ["perf", "stat", "-x,", "-e", "instructions", "-p", str(self.pid), "-o", name],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                env=child_environment(),
            )

    def stop(self) -> Probes:
        with self._lock:
            self._closed = True
            return self._close()

    def _close(self) -> Probes:
        if not self.started:
            return Probes(instructions_note="probes never started (run failed before the measured window)")
        cpu = None
        if self.pid is not None and self._cpu0 is not None:
            try:
                cpu = process_cpu_seconds(self.pid) - self._cpu0
            except ServerError:
                cpu = None
        instructions = self._stop_perf()
        deltas: dict[str, int] = {}
        if self._status0:
            try:
                now = self._counters()
                deltas = {k: now[k] - self._status0[k] for k in STATUS_COUNTERS if k in now and k in self._status0}
            except ServerError:
                deltas = {}
        self.notes = self._window_notes(cpu, deltas)
        if cpu is not None and cpu <= 0.0:
            cpu = None  # a server that ran statements used CPU: a reading of none is not a measurement
        return Probes(
            server_cpu_s=cpu,
            instructions=instructions,
            instructions_note=self._note if instructions is None else "",
            status_deltas=deltas,
        )

    def _window_notes(self, cpu: float | None, deltas: dict[str, int]) -> tuple[str, ...]:
        """What the readings cannot be taken for: the counters read late, a CPU reading of nothing."""
        notes: list[str] = []
        if self.opened_by == "clock":
            notes.append("the server readings' window was opened by the clock, not by sysbench's interval line")
        if self._status_lag_s > max(LATE_COUNTERS_S, LATE_COUNTERS_SHARE * self.window_s):
            share = f" ({self._status_lag_s / self.window_s:.0%} of it)" if self.window_s > 0 else ""
            notes.append(
                f"the server's counters took {self._status_lag_s:.2f} s to read at the window's start{share}, behind "
                "a saturated server's clients: its per-transaction counters may miss up to that much of the window"
            )
        if cpu is not None and cpu <= 0.0 and deltas.get("questions", 0) > 0:
            notes.append(
                f"server CPU not measured: its CPU clock did not move while it answered {deltas['questions']:,} "
                "statements"
            )
        return tuple(notes)

    def _stop_perf(self) -> float | None:
        if self._perf is None or self._perf_out is None:
            return None
        try:
            self._perf.send_signal(signal.SIGINT)
            self._perf.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._perf.kill()
            self._perf.wait()
        try:
            text = self._perf_out.read_text()
        finally:
            self._perf_out.unlink(missing_ok=True)
        for line in text.splitlines():
            parts = line.split(",")
            if len(parts) > 2 and "instructions" in parts[2] and parts[0].strip().isdigit():
                return float(parts[0])
        self._note = "perf gave no instruction count for the server process"
        return None

    def abort(self) -> None:
        with self._lock:
            self._closed = True  # a late clock start after the run must not open a window
        if self._perf is not None and self._perf.poll() is None:
            self._perf.kill()
            self._perf.wait()
        if self._perf_out is not None:
            self._perf_out.unlink(missing_ok=True)
