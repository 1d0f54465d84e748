"""Parser for the default human-readable output of sysbench 1.0.x.

It reads what ``sysbench <script> run`` prints (stdout and stderr) and returns a :class:`ParsedLog`:
the header facts (version, threads, report interval), every ``[ Ns ] thds: ...`` interval line, the
final summary block (read by :mod:`harness.imports.sysbench_summary`), the ``--histogram=on`` buckets
and, for a failed run, a :class:`~harness.sysbench.failures.SysbenchFailure`. It is one
:class:`~harness.imports.logformat.LogFormat`: empty, binary and report-less logs are refused as for
every imported log.

Rules:

* Lines that are not sysbench's (a Lua script may print anything) are ignored, but a line that
  *starts* like an interval line or a summary that has started must be complete and numeric: such
  a line raises :class:`~harness.errors.LogParseError` naming it and what was expected there. A
  summary cut before its ``sum:`` line raises at the last line of the log.
* A log with neither interval lines, nor a summary, nor a recognised failure is refused, at the first
  line that is not sysbench output, or at the last line when the log is sysbench's but stops before
  reporting anything.
* ``--percentile=0`` (``percentile stats: disabled``) gives ``percentile == 0.0`` and
  ``latency_pct_ms == 0.0``, as sysbench itself prints in the interval lines.
* With ``--report-checkpoints`` sysbench prints several summaries (and histograms); the last one is
  kept.
* A run that crashed (exit status 139) or was killed prints nothing after its intervals: pass its
  exit status as ``exit_code`` so that ``failure`` says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.errors import LogParseError
from harness.imports.logformat import LogFormat, Scan
from harness.imports.sysbench_summary import NUM, LogSummary, read_summary
from harness.sysbench.failures import SysbenchFailure, classify_failure
from harness.sysbench.histogram import HIST_HEADER, HistogramBucket, histogram_block, parse_buckets

__all__ = [
    "LogInterval",
    "LogSummary",
    "ParsedLog",
    "SysbenchTextLog",
    "parse_sysbench_log",
]


@dataclass(frozen=True)
class LogInterval:
    """One ``[ 1s ] thds: 2 tps: ... qps: ... (r/w/o: a/b/c) lat (ms,95%): x err/s: y reconn/s: z`` line.

    All rates are per second over the interval; ``latency_pct_ms`` is the latency at ``percentile``.
    """

    time_s: float
    threads: int
    tps: float
    qps: float
    reads_per_s: float
    writes_per_s: float
    other_per_s: float
    latency_pct_ms: float
    percentile: float
    errors_per_s: float
    reconnects_per_s: float


@dataclass(frozen=True)
class ParsedLog:
    """Everything dbperf reads from one sysbench log."""

    path: str
    sysbench_version: str | None
    threads: int | None
    report_interval_s: float | None
    intervals: tuple[LogInterval, ...]
    summary: LogSummary | None
    histogram: tuple[HistogramBucket, ...]
    failure: SysbenchFailure | None


# --------------------------------------------------------------------------------------------------
# Line patterns
# --------------------------------------------------------------------------------------------------

_HEADER = re.compile(r"^sysbench\s+(\d+(?:\.\d+)+[\w.+~-]*)")
_THREADS = re.compile(r"^Number of threads:\s*(\d+)\s*$")
_REPORT_INTERVAL = re.compile(rf"^Report intermediate results every\s+({NUM})\s+second")
_INTERVAL_START = re.compile(rf"^\s*\[\s*{NUM}s\s*\]\s+thds:")
_INTERVAL = re.compile(
    rf"^\s*\[\s*(?P<time>{NUM})s\s*\]\s+thds:\s*(?P<threads>\d+)\s+tps:\s*(?P<tps>{NUM})\s+"
    rf"qps:\s*(?P<qps>{NUM})\s+\(r/w/o:\s*(?P<r>{NUM})/(?P<w>{NUM})/(?P<o>{NUM})\)\s+"
    rf"lat\s+\(ms,\s*(?P<pct>{NUM})%\):\s*(?P<lat>{NUM})\s+err/s:\s*(?P<err>{NUM})\s+"
    rf"reconn/s:\s*(?P<reconn>{NUM})\s*$"
)
_INTERVAL_FORMAT = (
    "'[ <t>s ] thds: <n> tps: <x> qps: <x> (r/w/o: <x>/<x>/<x>) lat (ms,<p>%): <x> err/s: <x> reconn/s: <x>'"
)
_SUMMARY_START = re.compile(r"^\s*SQL statistics:\s*$")

# Lines of sysbench's own that carry nothing dbperf keeps; knowing them lets an error point at the
# first line that is not sysbench output at all.
_KNOWN_PREFIXES: Final[tuple[str, ...]] = (
    "Running the test with following options",
    "Initializing random number generator",
    "Random number generator seed is",
    "Initializing worker threads",
    "Threads started!",
    "Forcing shutdown in",
    "Server transaction rate",
    "Report checkpoint",
    "Debug mode enabled",
    "Additional request validation enabled",
    "Creating table",
    "Inserting ",
    "Creating a secondary index",
    "Prewarming table",
    "Dropping table",
    "Threads fairness:",
    "events (avg/stddev):",
    "execution time (avg/stddev):",
    "FATAL:",
    "WARNING:",
    "(last message repeated",
    "Number of unfinished transactions",
    "invalid option:",
    "Invalid value for the",
    "Unknown command:",
    "Warming up",
    "Extra file open flags",
)
_CHECKPOINT_OR_QUEUE = re.compile(rf"^\s*\[\s*{NUM}s\s*\]\s+(?:Checkpoint report|queue length)")


def _is_known(line: str) -> bool:
    stripped = line.strip()
    return (
        not stripped
        or stripped.startswith(_KNOWN_PREFIXES)
        or bool(_HEADER.match(stripped))
        or bool(_CHECKPOINT_OR_QUEUE.match(stripped))
    )


# --------------------------------------------------------------------------------------------------
# Whole log
# --------------------------------------------------------------------------------------------------


def _interval(line: str, lineno: int, path: str) -> LogInterval:
    m = _INTERVAL.match(line)
    if m is None:
        raise LogParseError(
            path, lineno, f"malformed interval line: expected {_INTERVAL_FORMAT}, found {line.strip()!r}"
        )
    return LogInterval(
        time_s=float(m["time"]),
        threads=int(m["threads"]),
        tps=float(m["tps"]),
        qps=float(m["qps"]),
        reads_per_s=float(m["r"]),
        writes_per_s=float(m["w"]),
        other_per_s=float(m["o"]),
        latency_pct_ms=float(m["lat"]),
        percentile=float(m["pct"]),
        errors_per_s=float(m["err"]),
        reconnects_per_s=float(m["reconn"]),
    )


@dataclass(frozen=True)
class SysbenchTextLog(LogFormat[ParsedLog]):
    """sysbench 1.0.x's ``run`` output; ``exit_code``, when known, explains a run that died silently."""

    exit_code: int | None = None

    tool = "sysbench"
    expects = "sysbench output (the 'sysbench 1.0.x' header, interval lines or a summary)"
    foreign = (
        "not sysbench output: expected the 'sysbench 1.0.x' header, '[ Ns ] thds: ...' interval lines or a summary"
    )
    stops_early = (
        "log ends before any interval line, summary or FATAL message "
        "(the run was stopped before its threads reported anything)"
    )

    def scan(self, lines: Sequence[str], text: str, path: str) -> Scan[ParsedLog]:
        version: str | None = None
        threads: int | None = None
        report_interval: float | None = None
        intervals: list[LogInterval] = []
        summary: LogSummary | None = None
        histogram: tuple[HistogramBucket, ...] = ()
        first_foreign: int | None = None  # 1-based number of the first line that is not sysbench's

        i = 0
        while i < len(lines):
            line = lines[i]
            lineno = i + 1
            stripped = line.strip()
            if _INTERVAL_START.match(line):
                intervals.append(_interval(line, lineno, path))
            elif _SUMMARY_START.match(line):
                summary, i = read_summary(lines, lineno, path)
                continue
            elif HIST_HEADER.match(line):
                block, i = histogram_block(lines, i)
                histogram = parse_buckets(block, path)
                continue
            elif (m := _HEADER.match(stripped)) is not None:
                version = version or m.group(1)
            elif (m := _THREADS.match(stripped)) is not None:
                threads = int(m.group(1))
            elif (m := _REPORT_INTERVAL.match(stripped)) is not None:
                report_interval = float(m.group(1))
            elif first_foreign is None and not _is_known(line):
                first_foreign = lineno
            i += 1

        failure = classify_failure(text, self.exit_code)
        parsed = ParsedLog(
            path=path,
            sysbench_version=version,
            threads=threads,
            report_interval_s=report_interval,
            intervals=tuple(intervals),
            summary=summary,
            histogram=histogram,
            failure=failure,
        )
        return Scan(bool(intervals) or summary is not None or failure is not None, first_foreign, lambda: parsed)


def parse_sysbench_log(text: str, path: str = "<string>", *, exit_code: int | None = None) -> ParsedLog:
    """Parse one sysbench 1.0.x ``run`` output (stdout and stderr, as written to a log file).

    ``path`` only names the log in errors. ``exit_code``, when known, helps explain runs that died
    without a message (a crash, exit status 139, or a kill). Raises
    :class:`~harness.errors.LogParseError` for a malformed interval line or summary, and for a log
    with neither intervals, nor a summary, nor a recognised failure.
    """
    return SysbenchTextLog(exit_code).parse(text, path)
