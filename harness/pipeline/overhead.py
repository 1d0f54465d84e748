"""An invocation's time outside its runs, measured and kept on this runner (docs/usage.md, "Estimates").

An estimate prices the runs, the datasets to prepare and a fixed **overhead**: what the invocation does
before its first run and after its last one (sweep, fingerprint, store opening, the query-plan checks,
reports and charts). That overhead is measured here: every command that opened a session and ran at
least one run appends one line to ``<cache dir>/invocations.jsonl`` when it ends: its wall time from the
process start to its end, the time before its first run and after its last one, less the datasets it
prepared in that time (priced on their own), and how many A/B comparisons it made. Uninterrupted
invocations only; time between runs is the gap each run is priced with (:mod:`harness.pipeline.estimates`).

The estimate's overhead keeps its assumed shape, :data:`SESSION_S` + :data:`PLAN_CHECK_S` per comparison,
scaled by this runner's measured ratio: the median, over its newest :data:`RECENT` invocations, of the
overhead measured over the same shape's figure. With no invocation measured, the shape stands alone
("assumed"), scaled by how much slower than assumed this machine's measured runs were.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.measure.session import Ledger, Session

#: Per invocation, assumed: sweep, testbed fingerprint, store, the reports and the charts (with
#: :data:`PLAN_CHECK_S`, two runners' measured overheads, docs/usage.md "An unmeasured cost run").
SESSION_S = 3.0
#: Per A/B comparison, assumed: the query-plan check (both servers started once, every statement EXPLAINed).
PLAN_CHECK_S = 3.0
#: How many of this runner's newest invocations price the overhead.
RECENT = 5
#: The ledger keeps this many lines (the oldest go when it grows past twice as many).
KEEP = 200
LEDGER = "invocations.jsonl"
#: A process that started longer than this before its command line was entered is another program's.
STARTUP_MAX_S = 10.0


@dataclass(frozen=True)
class _Opened:
    """What an opened session tells about its runs (not the session: its store may hold a connection)."""

    ledger: Ledger
    prepared: list[tuple[float, float]]
    cache_dir: Path


_opened: list[_Opened] = []


@dataclass(frozen=True)
class Overhead:
    """The overhead's price: ``scale`` times the assumed shape; ``source`` "measured (N invocations)" or "assumed"."""

    scale: float = 1.0
    source: str = "assumed"

    @property
    def measured(self) -> bool:
        return self.source != "assumed"

    def seconds(self, comparisons: int) -> float:
        return shape(comparisons) * self.scale


def shape(comparisons: int) -> float:
    """The assumed overhead of an invocation making ``comparisons`` A/B comparisons (an idle machine's)."""
    return SESSION_S + PLAN_CHECK_S * comparisons


def opened(session: Session) -> Session:
    """Note a session this process opened: its runs are the invocation's (see :func:`note`)."""
    _opened.append(_Opened(session.ledger, session.prepared, session.cache.root.parent))
    return session


def process_started() -> float:
    """When this process started (epoch seconds): the invocation's wall time includes Python's start."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
        return int(boot.split()[1]) + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, IndexError, ValueError):
        return _IMPORTED


_IMPORTED = time.time()


def outside(
    started: float,
    ended: float,
    runs: Sequence[tuple[float, float]],
    prepared: Iterable[tuple[float, float]],
) -> float:
    """Seconds of ``[started, ended]`` before the first run and after the last, less the dataset
    preparations (``prepared`` intervals) within them."""
    first, last = min(r[0] for r in runs), max(r[1] for r in runs)
    edges = [(started, max(started, first)), (min(ended, last), ended)]
    total = sum(b - a for a, b in edges)
    for a, b in prepared:
        total -= sum(max(0.0, min(b, e1) - max(a, e0)) for e0, e1 in edges)
    return max(0.0, total)


def note(command: str, entered: float, *, ended: float | None = None) -> None:
    """Append this invocation's overhead to its cache folder's ledger (nothing when it ran no run); never
    fails the command: a ledger that cannot be written is left as it is.

    ``entered``: when the command line was entered. The invocation starts with its process when that
    started at most :data:`STARTUP_MAX_S` before (Python's start and imports are the invocation's), else
    there (a program that calls the CLI in its own process)."""
    sessions, _opened[:] = list(_opened), []
    runs = [span for s in sessions for span in s.ledger.spans]
    if not runs or any(s.ledger.interrupted for s in sessions):
        return
    end = time.time() if ended is None else ended
    started = process_started()
    begun = started if entered - STARTUP_MAX_S <= started <= entered else entered
    prepared = [p for s in sessions for p in s.prepared]
    line = {
        "host": platform.node(),
        "command": command,
        "at": round(end, 1),
        "wall_s": round(end - begun, 2),
        "overhead_s": round(outside(begun, end, runs, prepared), 2),
        "comparisons": sum(s.ledger.comparisons for s in sessions),
        "runs": len(runs),
    }
    with contextlib.suppress(OSError):
        append(sessions[0].cache_dir / LEDGER, line)


def append(path: Path, line: dict[str, object]) -> None:
    """Add ``line`` under an exclusive lock; past :data:`KEEP` x 2 lines the oldest are dropped."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(line, sort_keys=True) + "\n")
        handle.flush()
        handle.seek(0)
        lines = handle.readlines()
        if len(lines) > 2 * KEEP:
            handle.seek(0)
            handle.truncate()
            handle.writelines(lines[-KEEP:])


def measured(cache_dir: Path, hostname: str | None = None) -> Overhead:
    """This runner's overhead scale from its newest :data:`RECENT` invocations in the ledger (a line that
    cannot be read is skipped), or the assumed one."""
    try:
        lines = (cache_dir / LEDGER).read_text().splitlines()
    except OSError:
        return Overhead()
    host = hostname or platform.node()
    ratios: list[float] = []
    for text in reversed(lines):
        with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
            entry = json.loads(text)
            if entry["host"] == host:
                ratios.append(float(entry["overhead_s"]) / shape(int(entry["comparisons"])))
        if len(ratios) == RECENT:
            break
    if not ratios:
        return Overhead()
    return Overhead(statistics.median(ratios), f"measured ({len(ratios)} invocation{'s' * (len(ratios) > 1)})")
