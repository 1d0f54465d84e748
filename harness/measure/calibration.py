"""Measuring a runner's calibration: the unit times a forecast multiplies counts by (docs/forecast.md).

* **I/O on the data folder's file system** (servers keep their datadirs under ``$TMPDIR``): fsync and
  fdatasync of 4 KiB just overwritten in a preallocated file (as a redo log commit syncs; fdatasync also
  after 16 and 64 KiB, for commits of more redo, and after 0.5, 2 and 8 ms idle since the previous sync,
  for commits further apart), pwrite of
  4 KiB as the redo log writes it (buffered when ``innodb_log_file_buffering`` is on, else O_DIRECT), and
  the read of a 16 KiB page that is in no cache, as InnoDB reads it: O_DIRECT when
  ``innodb_flush_method`` says so, else buffered after the file was evicted from the page cache.
* **Loopback**: a one-byte TCP round trip over 127.0.0.1 to a child process.
* **The server's units** (:mod:`harness.measure.server_units`), from timing runs and cost runs of CPU-bound
  scenarios at one client: server CPU per statement, per counted instruction and per instruction-cache
  miss (server CPU, not wall time: the wall time also holds the client and the loopback, which the
  per-statement unit outside the server carries, and the waits for syncs and reads are off the CPU, so
  nothing is counted twice), and the server's time per page read its buffer pool missed.

Each unit keeps its mean (throughput follows the mean time, tail included) and, as its spread, the lowest
and highest mean of 5 batches taken one after another (for the server's units: of its runs), beside the
samples' median and 5-95 % range. A change of load while calibrating widens that range.

The I/O is measured on the server's CPUs (its ``cpuset``) and the loopback from the client's to the server's,
as the runs place them: a thread on another CPU than the disk's interrupts is woken from that CPU after every
write and sync that waits for the device (docs/forecast.md, "A sync is waited for on the server's CPU").

The calibration is kept per testbed in ``<baselines-dir>/<testbed fingerprint>/calibration.json``.
"""

from __future__ import annotations

import json
import mmap
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from harness.errors import HarnessError
from harness.model.forecast import (
    IO_UNITS,
    SYNC_IDLE,
    SYNC_SIZES,
    Calibration,
    UnitTime,
    read_calibration,
)
from harness.workspace import child_environment

PAGE = 16384
BLOCK = 4096
_READ_FILE_MB = 64
_ECHO = (
    "import os,socket,sys\n"
    "cpus={int(c) for c in sys.argv[1:]}\n"
    "if cpus: os.sched_setaffinity(0,cpus)\n"
    "s=socket.socket();s.bind(('127.0.0.1',0));s.listen(1)\n"
    "print(s.getsockname()[1],flush=True)\n"
    "c,_=s.accept();c.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)\n"
    "while (b:=c.recv(1)):c.sendall(b)\n"
)


class CalibrationError(HarnessError):
    """A calibration could not be measured or read."""


BATCHES = 5


def spread(name: str, values: Sequence[float], how: str, *, batches: int = BATCHES) -> UnitTime:
    """A unit time from samples in the order they were taken (microseconds): their mean, the lowest and
    highest mean of ``batches`` consecutive batches (each value its own batch when there are fewer), and
    the samples' median and 5-95 % range (their full range under 20 samples)."""
    if not values:
        raise CalibrationError(f"no samples of {name}: measure the calibration again (dbperf calibrate)")
    n = len(values)
    groups = [values[i * n // batches : (i + 1) * n // batches] for i in range(batches)] if n >= batches else []
    means = [statistics.fmean(g) for g in groups if g] or list(values)
    mean = statistics.fmean(values)
    ordered = sorted(values)
    if n < 20:
        p5, p95 = ordered[0], ordered[-1]
    else:
        cuts = statistics.quantiles(ordered, n=20, method="inclusive")
        p5, p95 = cuts[0], cuts[-1]
    return UnitTime(name, mean, min(*means, mean), max(*means, mean), n, p5, statistics.median(ordered), p95, how)


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter_ns()
    action()
    return (time.perf_counter_ns() - start) / 1000.0


def _syncs(folder: Path, samples: int, *, direct_writes: bool) -> dict[str, list[float]]:
    """fsync, fdatasync and pwrite times over a preallocated 1 MiB file, overwritten 4 KiB at a time, then
    fdatasync after each overwrite of 16 and 64 KiB (the sizes of ``SYNC_SIZES``), and after 4 KiB written
    an idle time after the previous sync (the times of ``SYNC_IDLE``)."""
    path = folder / "redo.bin"
    with path.open("wb") as f:
        f.write(b"\0" * (1 << 20))
        f.flush()
        os.fsync(f.fileno())
    flags = os.O_RDWR | (os.O_DIRECT if direct_writes else 0)
    fd = os.open(path, flags)
    largest = max(size for size, _ in SYNC_SIZES)
    buf = mmap.mmap(-1, largest)  # page-aligned, as O_DIRECT needs
    buf.write(os.urandom(largest))
    view = memoryview(buf)
    out: dict[str, list[float]] = {
        "fsync": [],
        "write": [],
        **{name: [] for _, name in SYNC_SIZES},
        **{name: [] for _, name in SYNC_IDLE},
    }
    try:
        for i in range(samples * 2):
            offset = (i * BLOCK) % (1 << 20)
            out["write"].append(_timed(lambda o=offset: os.pwritev(fd, [view[:BLOCK]], o)))  # type: ignore[misc]
            sync = os.fsync if i % 2 else os.fdatasync
            out["fsync" if i % 2 else "fdatasync"].append(_timed(lambda s=sync: s(fd)))  # type: ignore[misc]
        for size, name in SYNC_SIZES:
            if size == BLOCK:
                continue
            for i in range(samples):
                os.pwritev(fd, [view[:size]], (i * size) % (1 << 20))
                out[name].append(_timed(lambda: os.fdatasync(fd)))
        for i in range(samples):  # the idle times interleaved, so that a change of load reaches each alike
            for idle_us, name in SYNC_IDLE:
                os.fdatasync(fd)
                time.sleep(idle_us / 1e6)
                os.pwritev(fd, [view[:BLOCK]], (i * BLOCK) % (1 << 20))
                out[name].append(_timed(lambda: os.fdatasync(fd)))
    finally:
        view.release()
        os.close(fd)
        buf.close()
    return out


def _page_reads(folder: Path, samples: int, *, direct: bool) -> list[float]:
    """Reads of 16 KiB pages at random places in a 64 MiB file, each page once, none in the page cache."""
    path = folder / "pages.bin"
    chunk = os.urandom(1 << 20)
    with path.open("wb") as f:
        for _ in range(_READ_FILE_MB):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    pages = list(range(_READ_FILE_MB * (1 << 20) // PAGE))
    random.Random(7).shuffle(pages)  # noqa: S311 - a fixed order of pages to read, not a secret
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
    buf = mmap.mmap(-1, PAGE)
    try:
        if not direct:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        return [_timed(lambda p=page: os.preadv(fd, [buf], p * PAGE)) for page in pages[:samples]]  # type: ignore[misc]
    finally:
        os.close(fd)
        buf.close()


@contextmanager
def pinned(cpus: set[int] | None) -> Iterator[None]:
    """The calling thread runs on ``cpus`` inside the block (anywhere it could before when None), then where
    it could before."""
    if not cpus:
        yield
        return
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, cpus)
    except OSError as exc:
        raise CalibrationError(
            f"cannot run on CPUs {cpu_list(cpus)} ({exc}): check the server file's cpuset against this machine's CPUs"
        ) from None
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def cpu_list(cpus: set[int] | None) -> str:
    """``{1, 0}`` -> ``"0,1"``; "" for None or no CPUs."""
    return ",".join(str(c) for c in sorted(cpus)) if cpus else ""


def _loopback(samples: int, server_cpus: set[int] | None = None, client_cpus: set[int] | None = None) -> list[float]:
    """One-byte TCP round trips to an echo child process over 127.0.0.1 (Nagle off), the child on
    ``server_cpus`` and this thread on ``client_cpus`` (each unpinned when None)."""
    argv = [sys.executable, "-c", _ECHO, *(str(c) for c in sorted(server_cpus or ()))]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=child_environment())
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        with pinned(client_cpus), socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            out = []
            for i in range(samples + 50):
                start = time.perf_counter_ns()
                sock.sendall(b"x")
                sock.recv(1)
                if i >= 50:  # the first round trips warm the path up
                    out.append((time.perf_counter_ns() - start) / 1000.0)
            return out
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


def read_mode(variables: Mapping[str, str]) -> str:
    """How the server reads a page that is not in its buffer pool: O_DIRECT or through the page cache."""
    method = variables.get("innodb_flush_method", "").upper()
    return "O_DIRECT" if "O_DIRECT" in method or method in {"4", "O_DIRECT_NO_FSYNC"} else "buffered"


def log_writes_direct(variables: Mapping[str, str]) -> bool:
    """Whether the redo log's writes bypass the page cache (MariaDB ``innodb_log_file_buffering=OFF``)."""
    return variables.get("innodb_log_file_buffering", "ON").upper() == "OFF"


def measure_io(
    folder: Path,
    *,
    samples: int,
    direct_reads: bool,
    direct_writes: bool,
    server_cpus: set[int] | None = None,
    client_cpus: set[int] | None = None,
) -> tuple[UnitTime, ...]:
    """The I/O and loopback unit times, measured in a temporary folder made (and removed) in ``folder``: the
    I/O on ``server_cpus``, the loopback from ``client_cpus`` to ``server_cpus`` (unpinned where None)."""
    try:
        with pinned(server_cpus), tempfile.TemporaryDirectory(prefix="dbperf-calibration-", dir=folder) as tmp:
            syncs = _syncs(Path(tmp), samples, direct_writes=direct_writes)
            reads = _page_reads(Path(tmp), samples, direct=direct_reads)
    except OSError as exc:
        raise CalibrationError(f"measuring I/O in {folder} failed: {exc}; give a writable TMPDIR") from None
    mode = "O_DIRECT" if direct_reads else "buffered, evicted first"
    writes = "O_DIRECT" if direct_writes else "buffered"
    ends = f" (client CPUs {cpu_list(client_cpus) or 'any'}, server CPUs {cpu_list(server_cpus) or 'any'})"
    return (
        spread("fsync", syncs["fsync"], IO_UNITS["fsync"]),
        *(spread(name, syncs[name], IO_UNITS[name]) for _, name in SYNC_SIZES),
        *(spread(name, syncs[name], IO_UNITS[name]) for _, name in SYNC_IDLE),
        spread("page_read", reads, f"{IO_UNITS['page_read']} ({mode})"),
        spread("write", syncs["write"], f"{IO_UNITS['write']} ({writes})"),
        spread("loopback", _loopback(samples * 4, server_cpus, client_cpus), IO_UNITS["loopback"] + ends),
    )


def calibration_path(baselines_dir: Path, testbed: str) -> Path:
    return baselines_dir / testbed / "calibration.json"


def load_calibration(baselines_dir: Path, testbed: str) -> Calibration | None:
    """This testbed's calibration, or None when it has none (a testbed that changed has none)."""
    path = calibration_path(baselines_dir, testbed)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CalibrationError(f"cannot read {path}: {exc}") from None
    return read_calibration(text, str(path))


def merged(old: Calibration | None, new: Calibration) -> Calibration:
    """The new calibration, keeping the old one's other servers (a server measured again is replaced)."""
    if old is None:
        return new
    fresh = {(s.server, s.build_id) for s in new.servers}
    kept = tuple(s for s in old.servers if (s.server, s.build_id) not in fresh)
    return Calibration(
        testbed=new.testbed,
        measured_at=new.measured_at,
        data_dir=new.data_dir,
        read_mode=new.read_mode,
        load=new.load,
        io_cpus=new.io_cpus,
        io=new.io,
        servers=(*kept, *new.servers),
    )


def save_calibration(baselines_dir: Path, calibration: Calibration) -> Path:
    """Write the calibration whole (temporary file, then rename) and return its path."""
    path = calibration_path(baselines_dir, calibration.testbed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(calibration.document(), indent=2) + "\n")
    tmp.replace(path)
    return path


def load_averages() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"
