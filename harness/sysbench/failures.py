"""Turn sysbench 1.0.x failure output into one clear message: what happened, why, and what to do.

sysbench reports almost every failure as ``FATAL: ...`` lines on **stdout** (option errors such as
``invalid option: --warmup-time=5`` go to stderr), usually several times (once per thread) and
interleaved. :func:`classify_failure` reads the combined output (and, when known, the exit status)
and returns a :class:`SysbenchFailure` naming the first decisive error.

Things learnt from real captures (``tests/data/sysbench/README.md``):

* exit status 0 does not mean success: a parallel ``prepare`` (``--threads`` > 1) on existing tables
  prints ``FATAL: ... error 1050`` and still exits 0, so the text is always checked;
* exit status 2 is a forced shutdown (``--forced-shutdown``) or worker threads that did not start
  within 30 s;
* exit status 139 (or -11 from :mod:`subprocess`) is the known sysbench 1.0 crash while reconnecting
  after error 2013; it leaves no message at all, only the interval lines printed before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

__all__ = [
    "FAILURE_KINDS",
    "SysbenchFailure",
    "classify_failure",
    "overrun",
]

FAILURE_KINDS: Final[tuple[str, ...]] = (
    "too_many_connections",
    "prepared_stmt_limit",
    "lost_connection",
    "connection_refused",
    "access_denied",
    "invalid_option",
    "threads_not_started",
    "overrun",
    "tables_exist",
    "sql_error",
    "unknown",
)

_EXCERPT_MAX = 300


@dataclass(frozen=True)
class SysbenchFailure:
    """One failed sysbench run, explained.

    ``kind`` is one of :data:`FAILURE_KINDS`; ``error_code`` the MySQL/client error number when the
    output names one; ``excerpt`` the decisive sysbench line(s), trimmed; ``cause`` and ``fix`` one
    sentence each.
    """

    kind: str
    error_code: int | None
    excerpt: str
    cause: str
    fix: str

    def message(self) -> str:
        """One line: ``<kind> (error N): <cause> Fix: <fix> [sysbench said: <excerpt>]``."""
        code = f" (error {self.error_code})" if self.error_code is not None else ""
        said = f" [sysbench said: {self.excerpt}]" if self.excerpt else ""
        return f"{self.kind}{code}: {self.cause} Fix: {self.fix}{said}"


# --------------------------------------------------------------------------------------------------
# Prepared statements per thread
# --------------------------------------------------------------------------------------------------

# --------------------------------------------------------------------------------------------------
# Classification
# --------------------------------------------------------------------------------------------------

# Where sysbench 1.0.x puts a MySQL error number:
#   FATAL: error 1040: Too many connections                                  (connect)
#   FATAL: MySQL error: 1461 "Can't create more than ..."                     (mysql_stmt_prepare)
#   FATAL: mysql_stmt_execute() returned error 2013 (Lost connection ...) for query '...'
#   FATAL: `thread_run' function failed: ...: SQL error, errno = 2013, state = 'HY000': ...
_CODE_PATTERNS: Final[tuple[re.Pattern[str], ...]] = (
    re.compile(r"\berror (\d{4}):"),
    re.compile(r"\bMySQL error: (\d{4})\b"),
    re.compile(r"\breturned error (\d{4})\b"),
    re.compile(r"\berrno = (\d{4})\b"),
)
_FATAL = re.compile(r"^\s*FATAL:\s*(.*\S)\s*$")
_OPTION_ERROR = re.compile(
    r"^\s*(invalid option: .*|Invalid value for the '[^']*' option: .*|Unknown command: .*"
    r"|(?:FATAL: )?Cannot find benchmark .*|(?:FATAL: )?.*Command is required\..*)$",
    re.MULTILINE,
)
_THREADS_NOT_STARTED = re.compile(r"Worker threads failed to initialize within (\d+) seconds")
_FORCED_SHUTDOWN = re.compile(r"limit has expired, forcing shutdown")
_CONNECT_FAILED = re.compile(r"unable to connect to MySQL server on host '([^']*)', port (\d+)")
_PG_REFUSED = re.compile(r"Connection to database failed: .*(?:Connection refused|could not connect)")
_THREADS_LINE = re.compile(r"^Number of threads: (\d+)\s*$", re.MULTILINE)
_CURRENT_VALUE = re.compile(r"current value: (\d+)")
# FATAL lines that only repeat a failure already described by the line before them.
_CONSEQUENCE = re.compile(
    r"^(`[^']*' function failed|Thread initialization failed|\(last message repeated)",
)

_LOST_CONNECTION_CODES: Final = frozenset({2006, 2013, 2055, 1927, 4031})
_REFUSED_CODES: Final = frozenset({2002, 2003, 2005})
_ACCESS_CODES: Final = frozenset({1044, 1045, 1698, 1251, 2059, 2061})

_PS_FIX = (
    "each sysbench thread keeps about 9 x tables + 2 prepared statements for oltp_read_write "
    "(5 x tables + 2 for oltp_read_only, 4 x tables + 2 for oltp_write_only, tables for "
    "oltp_point_select), so raise max_prepared_stmt_count above threads x that "
    "(SET GLOBAL max_prepared_stmt_count=...; default 16382), or run with fewer threads or tables."
)


def _trim(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _EXCERPT_MAX:
        text = text[: _EXCERPT_MAX - 3].rstrip() + "..."
    return text


def _fatal_lines(output: str) -> list[str]:
    lines: list[str] = []
    for raw in output.splitlines():
        m = _FATAL.match(raw)
        if m:
            lines.append(m.group(1))
    return lines


def _first_code(line: str) -> int | None:
    for pattern in _CODE_PATTERNS:
        m = pattern.search(line)
        if m:
            return int(m.group(1))
    return None


def _excerpt(fatals: list[str], index: int) -> str:
    """The decisive FATAL line, preceded by its context line (host/port, failed call) if any."""
    parts = [fatals[index]]
    if index > 0 and _first_code(fatals[index - 1]) is None and not _CONSEQUENCE.match(fatals[index - 1]):
        parts.insert(0, fatals[index - 1])
    return _trim(" / ".join(parts))


def _threads(output: str) -> str:
    m = _THREADS_LINE.search(output)
    return f"{m.group(1)} client threads" if m else "the client threads"


def _from_code(code: int, output: str, excerpt: str) -> SysbenchFailure:
    """Cause and fix for a run that failed with MySQL/client error ``code``."""
    if code == 1040:
        return SysbenchFailure(
            "too_many_connections",
            code,
            excerpt,
            f"the server refused new connections: max_connections is lower than the "
            f"{_threads(output)} sysbench opens (one connection each) plus the other sessions.",
            "raise max_connections above the thread count (dbperf derives it from the scenario; "
            "check the server's variables), or run with fewer --threads.",
        )
    if code == 1461:
        current = _CURRENT_VALUE.search(output)
        limit = f" ({current.group(1)})" if current else ""
        return SysbenchFailure(
            "prepared_stmt_limit",
            code,
            excerpt,
            f"the server's max_prepared_stmt_count{limit} is smaller than the prepared statements "
            f"the {_threads(output)} need.",
            _PS_FIX,
        )
    if code in _LOST_CONNECTION_CODES:
        return SysbenchFailure(
            "lost_connection",
            code,
            excerpt,
            "the server closed a benchmark connection in the middle of the run (it crashed, was "
            "restarted or killed, ran out of memory, or the session was killed), so there is no summary.",
            "check the server's error log and the OOM killer, then rerun; do not add 2013 to "
            "--mysql-ignore-errors (sysbench 1.0 then crashes with exit status 139 on reconnect).",
        )
    if code in _REFUSED_CODES:
        where = _CONNECT_FAILED.search(output)
        server = f"{where.group(1)}:{where.group(2)}" if where else "the configured host and port"
        return SysbenchFailure(
            "connection_refused",
            code,
            excerpt,
            f"nothing accepted the connection at {server}: the server is not running, not listening "
            f"there, or (host 'localhost') sysbench used the Unix socket instead of TCP.",
            "start the server or correct --mysql-host/--mysql-port (use 127.0.0.1, not localhost, "
            "for TCP), and check it answers 'SELECT 1' before running sysbench.",
        )
    if code in _ACCESS_CODES:
        return SysbenchFailure(
            "access_denied",
            code,
            excerpt,
            "the server rejected the benchmark user: wrong user or password, no grant on the "
            "database, no account for the client's host, or an authentication plugin the client "
            "library cannot use.",
            "create the user for the host sysbench connects from ('%', 'localhost' and '127.0.0.1' "
            "when anonymous users exist), grant it ALL on the benchmark database, and check "
            "--mysql-user/--mysql-password.",
        )
    if code == 1050:
        return SysbenchFailure(
            "tables_exist",
            code,
            excerpt,
            "'prepare' found the sbtest tables already there (sysbench never overwrites them).",
            "run the same script's 'cleanup' (or drop the sbtest* tables) before 'prepare', or reuse "
            "the prepared tables and go straight to 'run'.",
        )
    if code == 1146:
        cause = "the benchmark tables do not exist in --mysql-db (prepare was not run, or used other --tables)."
        fix = "run 'prepare' with the same --tables/--table-size and --mysql-db before 'run'."
    elif code == 1049:
        cause = "the database named by --mysql-db does not exist on the server."
        fix = "CREATE DATABASE it (sysbench does not) or correct --mysql-db."
    elif code in {1213, 1205, 1020}:
        cause = "a transaction hit a deadlock or lock wait timeout and sysbench was not told to ignore it."
        fix = "keep sysbench's default --mysql-ignore-errors (1213,1020,1205) or add the code to it."
    elif code == 1062:
        cause = "an INSERT hit a duplicate key, usually tables left over from an earlier run of another script."
        fix = "run 'cleanup' and 'prepare' again before the run."
    else:
        cause = f"the server answered a benchmark statement with error {code}."
        fix = "look up the error in the server's documentation and its error log, fix the cause and rerun."
    return SysbenchFailure("sql_error", code, excerpt, cause, fix)


def _option_failure(line: str) -> SysbenchFailure:
    return SysbenchFailure(
        "invalid_option",
        None,
        _trim(line.removeprefix("FATAL:").strip()),
        "sysbench 1.0 rejected the command line before running anything (an option it does not know, "
        "a bad option value, or an unknown script or command).",
        "remove or correct the option: 1.0.20 has no --warmup-time, --thread-init-timeout, "
        "--create_table_options or --reconnect (discard the first intervals for warm-up); check "
        "'sysbench <script> help'.",
    )


def _signal_of(exit_code: int | None) -> int | None:
    """Signal number for an exit status of a shell (128+N) or of subprocess (-N)."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    if 128 < exit_code < 160:
        return exit_code - 128
    return None


_SIGSEGV: Final = 11


def classify_failure(output: str, exit_code: int | None = None) -> SysbenchFailure | None:
    """Explain a failed sysbench run, or return None when the output shows no failure.

    ``output`` is sysbench's stdout and stderr (combined or concatenated); ``exit_code`` its exit
    status when known (``subprocess`` style negative signal numbers are understood). A clean exit
    status does not hide FATAL lines: a parallel ``prepare`` on existing tables exits 0.
    """
    option = _OPTION_ERROR.search(output)
    if option:
        return _option_failure(option.group(1))

    fatals = _fatal_lines(output)
    for index, line in enumerate(fatals):
        m = _THREADS_NOT_STARTED.search(line)
        if m:
            return SysbenchFailure(
                "threads_not_started",
                None,
                _trim(line),
                f"the worker threads could not connect and prepare their statements within "
                f"{m.group(1)} s: the server (or whatever listens on that port) accepted the TCP "
                f"connection but never completed the handshake, or is hung or overloaded.",
                "check that a healthy MySQL/MariaDB server listens on --mysql-host/--mysql-port "
                "(SELECT 1 answers quickly), and lower --threads/--tables if thread start is slow.",
            )
        if _FORCED_SHUTDOWN.search(line):
            return SysbenchFailure(
                "overrun",
                None,
                _excerpt(fatals, index),
                "a statement was still blocked when --time plus --forced-shutdown ran out, so "
                "sysbench shut the run down (exit status 2) and its summary covers a stalled run.",
                "find what blocked the benchmark (locks from other sessions, a stalled disk, "
                "a metadata lock, server-side stalls) and rerun; discard this result.",
            )
        code = _first_code(line)
        if code is not None:
            return _from_code(code, output, _excerpt(fatals, index))
        if _PG_REFUSED.search(line):
            return replace(_from_code(2003, output, _excerpt(fatals, index)), error_code=None)

    signal = _signal_of(exit_code)
    if signal == _SIGSEGV:
        return SysbenchFailure(
            "lost_connection",
            None,
            _trim(fatals[0]) if fatals else "",
            f"sysbench crashed (segmentation fault, exit status {exit_code}), the known sysbench 1.0 "
            f"crash when it reconnects after a lost connection (error 2013) that "
            f"--mysql-ignore-errors told it to ignore.",
            "check that the server stayed up (error log, OOM killer), remove 2013 from "
            "--mysql-ignore-errors, and rerun.",
        )
    if signal is not None:
        return SysbenchFailure(
            "unknown",
            None,
            _trim(fatals[0]) if fatals else "",
            f"sysbench was killed by signal {signal} (exit status {exit_code}) before it printed a summary.",
            "check whether a timeout, the OOM killer or a user stopped it, and rerun.",
        )
    if exit_code == 2:
        started = "Threads started!" in output
        return SysbenchFailure(
            "overrun" if started else "threads_not_started",
            None,
            _trim(fatals[0]) if fatals else "",
            "sysbench exited with status 2: a forced shutdown (a statement blocked past --time) "
            "or worker threads that did not start within 30 s.",
            "check the server is responsive and not blocked by locks from other sessions, then rerun.",
        )
    if fatals:
        return SysbenchFailure(
            "unknown",
            None,
            _excerpt(fatals, 0),
            "sysbench stopped with a fatal error that dbperf does not recognise.",
            "read the full sysbench output in the run's log file, fix the cause and rerun.",
        )
    if exit_code is not None and exit_code != 0:
        return SysbenchFailure(
            "unknown",
            None,
            _trim(next((ln for ln in reversed(output.splitlines()) if ln.strip()), "")),
            f"sysbench exited with status {exit_code} without a FATAL message.",
            "read the full sysbench output (stdout and stderr) in the run's log file and rerun.",
        )
    return None


def overrun(expected_time_s: float, total_time_s: float, tolerance_s: float = 2.0) -> SysbenchFailure | None:
    """A run whose ``total time`` exceeds ``--time`` by more than ``tolerance_s``, or None.

    A statement blocked by a lock, a stalled disk or a hung server stretches a sysbench run beyond
    ``--time`` (sysbench waits for in-flight events) and dilutes its rates, so such a result must
    not be compared with others.
    """
    if total_time_s <= expected_time_s + tolerance_s:
        return None
    excess = total_time_s - expected_time_s
    return SysbenchFailure(
        "overrun",
        None,
        f"total time: {total_time_s:.4f}s with --time={expected_time_s:g}",
        f"the run took {excess:.1f} s longer than --time={expected_time_s:g} s because statements "
        f"were blocked or the server stalled, so its rates are diluted.",
        "find what blocked the benchmark (locks held by other sessions, disk stalls, server hangs), "
        "pass --forced-shutdown, and rerun; discard this result.",
    )
