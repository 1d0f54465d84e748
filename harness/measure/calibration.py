"""Measuring a runner's calibration: the unit times a forecast multiplies counts by (docs/forecast.md).

* **I/O on the data folder's file system** (servers keep their datadirs under ``$TMPDIR``): fsync and
  fdatasync of 4 KiB just overwritten in a preallocated file (as a redo log commit syncs), pwrite of
  4 KiB as the redo log writes it (buffered when ``innodb_log_file_buffering`` is on, else O_DIRECT), and
  the read of a 16 KiB page that is in no cache, as InnoDB reads it: O_DIRECT when
  ``innodb_flush_method`` says so, else buffered after the file was evicted from the page cache.
* **Loopback**: a one-byte TCP round trip over 127.0.0.1 to a child process.
* **The server's units**, from timing runs and a cost run of a CPU-bound scenario at one client: server
  CPU per counted instruction (server CPU, not wall time: the wall time also holds the client and the
  loopback, which the per-statement unit carries, and the waits for syncs and reads are off the CPU, so
  nothing is counted twice), and per statement the wall time the server's CPU does not explain.

Each unit keeps its mean (throughput follows the mean time, tail included) and, as its spread, the lowest
and highest mean of 5 batches taken one after another (for the server's units: of its runs), beside the
samples' median and 5-95 % range.A change of load while calibrating widens
that range.
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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.errors import ConfigError, HarnessError
from harness.model import RunResult
from harness.model.forecast import IO_UNITS, Calibration, ServerUnits, UnitTime
from harness.workspace import child_environment

PAGE = 16384
BLOCK = 4096
_READ_FILE_MB = 64
_ECHO = (
    "import socket,sys\n"
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
    """fsync, fdatasync and pwrite times over a preallocated 1 MiB file, overwritten 4 KiB at a time."""
    path = folder / "redo.bin"
    with path.open("wb") as f:
        f.write(b"\0" * (1 << 20))
        f.flush()
        os.fsync(f.fileno())
    flags = os.O_RDWR | (os.O_DIRECT if direct_writes else 0)
    fd = os.open(path, flags)
    buf = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs
    buf.write(os.urandom(BLOCK))
    out: dict[str, list[float]] = {"fsync": [], "fdatasync": [], "write": []}
    try:
        for i in range(samples * 2):
            offset = (i * BLOCK) % (1 << 20)
            out["write"].append(_timed(lambda o=offset: os.pwritev(fd, [buf], o)))  # type: ignore[misc]
            sync = os.fsync if i % 2 else os.fdatasync
            out["fsync" if i % 2 else "fdatasync"].append(_timed(lambda s=sync: s(fd)))  # type: ignore[misc]
    finally:
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


def _loopback(samples: int) -> list[float]:
    """One-byte TCP round trips to an echo child process over 127.0.0.1 (Nagle off)."""
    child = subprocess.Popen([sys.executable, "-c", _ECHO], stdout=subprocess.PIPE, text=True, env=child_environment())
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
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


def read_mode(variables: Mapping[str, str]) -> str:
    """How the server reads a page that is not in its buffer pool: O_DIRECT or through the page cache."""
    method = variables.get("innodb_flush_method", "").upper()
    return "O_DIRECT" if "O_DIRECT" in method or method in {"4", "O_DIRECT_NO_FSYNC"} else "buffered"


def log_writes_direct(variables: Mapping[str, str]) -> bool:
    """Whether the redo log's writes bypass the page cache (MariaDB ``innodb_log_file_buffering=OFF``)."""
    return variables.get("innodb_log_file_buffering", "ON").upper() == "OFF"


def measure_io(folder: Path, *, samples: int, direct_reads: bool, direct_writes: bool) -> tuple[UnitTime, ...]:
    """The I/O and loopback unit times, measured in a temporary folder made (and removed) in ``folder``."""
    try:
        with tempfile.TemporaryDirectory(prefix="dbperf-calibration-", dir=folder) as tmp:
            syncs = _syncs(Path(tmp), samples, direct_writes=direct_writes)
            reads = _page_reads(Path(tmp), samples, direct=direct_reads)
    except OSError as exc:
        raise CalibrationError(f"measuring I/O in {folder} failed: {exc}; give a writable TMPDIR") from None
    mode = "O_DIRECT" if direct_reads else "buffered, evicted first"
    writes = "O_DIRECT" if direct_writes else "buffered"
    return (
        spread("fsync", syncs["fsync"], IO_UNITS["fsync"]),
        spread("fdatasync", syncs["fdatasync"], IO_UNITS["fdatasync"]),
        spread("page_read", reads, f"{IO_UNITS['page_read']} ({mode})"),
        spread("write", syncs["write"], f"{IO_UNITS['write']} ({writes})"),
        spread("loopback", _loopback(samples * 4), IO_UNITS["loopback"]),
    )


def server_units(timing: Sequence[RunResult], cost: Sequence[RunResult]) -> ServerUnits:
    """A server build's units from timing runs at one client and cost runs of the same scenario."""
    timed = [r for r in timing if r.ok and r.threads == 1 and r.metrics.tps and r.metrics.cpu_per_txn]
    counted = [r for r in cost if r.ok and r.metrics.instr_per_txn and r.totals is not None and r.totals.events]
    if not timed or not counted:
        raise CalibrationError(
            "the calibration needs timing runs at 1 client with server CPU time and a cost run; "
            "a run failed or the server's CPU time could not be read (see `dbperf runs`)"
        )
    instr = statistics.median(float(r.metrics.instr_per_txn or 0.0) for r in counted)
    statements = statistics.median(r.totals.queries / r.totals.events for r in counted if r.totals is not None)
    cpu = [float(r.metrics.cpu_per_txn or 0.0) for r in timed]
    wall = [1e6 / float(r.metrics.tps or 1.0) for r in timed]
    per_instr = [c / instr for c in cpu]
    per_statement = [max(0.0, w - c) / statements for w, c in zip(wall, cpu, strict=True)]
    first = timed[0]
    return ServerUnits(
        server=first.server,
        build_id=first.build_id,
        version=first.server_version,
        scenario=first.scenario,
        instruction=spread(
            "instruction", per_instr, f"server CPU per instruction counted in dispatch ({first.scenario}, 1 client)"
        ),
        statement=spread(
            "statement", per_statement, f"wall time minus server CPU, per statement ({first.scenario}, 1 client)"
        ),
        instr_per_txn=instr,
        statements_per_txn=statements,
        run_ids=tuple(r.run_id for r in (*timed, *counted)),
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
    try:
        return Calibration.from_document(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path}: not a calibration this dbperf reads ({exc}); run `dbperf calibrate` again"
        ) from None


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
