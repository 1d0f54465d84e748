"""The exception tree of dbperf.

Everything that goes wrong in the harness raises a subclass of :class:`HarnessError`; its message
says what went wrong *and what to do about it*, in one line, because the CLI prints exactly that line
(no traceback) and exits with status 2.

A performance regression is not an error of the harness: it is a finding. It is reported with its own
exception, :class:`PerformanceRegression`, which deliberately does *not* derive from
:class:`HarnessError`, and the CLI maps it to exit status 1.

::

    HarnessError
    ├── ConfigError            bad settings, server or scenario files, bad command-line values
    ├── ServerError            a server would not start, stop, initialise or answer
    ├── SysbenchError          sysbench missing, wrong version, or a run that failed
    ├── LogParseError          a client's log (sysbench, go-tpc, go-ycsb) that cannot be read (names file and line)
    ├── StoreError             the DuckDB/Parquet store cannot be opened, migrated or written
    ├── BaselineError          a missing, malformed, older-format or incomparable baseline
    ├── GitError               a git ref, diff or tree that cannot be read (ci plan / ci run)
    └── ReportError            a report, chart, site or export file that cannot be rendered or written
    PerformanceRegression      a verdict of REGRESSION (not a HarnessError)
    InconclusiveVerdict        an INCONCLUSIVE verdict under --strict (neither a regression nor an error)
"""

from __future__ import annotations


class HarnessError(Exception):
    """Root of every error dbperf raises on purpose; the message is one actionable line."""


class ConfigError(HarnessError):
    """A settings value, server file or scenario file is invalid."""


class ServerError(HarnessError):
    """A database server could not be provisioned, reached or stopped."""


class SysbenchError(HarnessError):
    """sysbench is missing, has the wrong version, or a run failed."""


class LogParseError(HarnessError):
    """A client's log (sysbench, go-tpc, go-ycsb) could not be parsed; the message names the file and the line."""

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(f"{path}:{line}: {problem}")


class StoreError(HarnessError):
    """The result store could not be opened, migrated, read or written."""


class StoreUnansweredError(StoreError):
    """The store did not answer within its time limit (a frozen catalog): the process stops using it."""


class BaselineError(HarnessError):
    """A baseline file is missing, malformed, of an older format, or not comparable."""


class GitError(HarnessError):
    """A git ref, diff or worktree operation failed."""


class ReportError(HarnessError):
    """A report, chart, trend site or export file could not be rendered or written."""


class PerformanceRegression(Exception):  # noqa: N818 - named like pytest-benchmark's, on purpose
    """Raised (or reported) when a gate finds a regression. Not a harness error: exit status 1."""


class InconclusiveVerdict(Exception):  # noqa: N818 - a finding, named for what it is
    """Raised under ``--strict`` / ``--dbperf-strict`` when a gating verdict could not be decided.

    Not a regression (nothing was shown to be slower) and not a harness error: the measurement was too
    noisy, or too short, for the design. Exit status 1 under --strict, like a regression, but said as such.
    """
