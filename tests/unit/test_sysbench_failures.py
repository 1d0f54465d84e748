"""Classifying sysbench failures, from real sysbench 1.0.20 captures (tests/data/sysbench/README.md)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from harness.errors import SysbenchError
from harness.sysbench.failures import (
    FAILURE_KINDS,
    SysbenchFailure,
    classify_failure,
    overrun,
)
from harness.sysbench.statements import required_prepared_statements

DATA = Path(__file__).resolve().parents[1] / "data" / "sysbench"


def _read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def _exit_codes() -> dict[str, int]:
    rows = re.findall(r"^\| `([^`]+)` \| .* \| (\d+) \|$", _read("README.md"), re.MULTILINE)
    return {name: int(code) for name, code in rows}


EXIT_CODES = _exit_codes()

MESSAGE = re.compile(
    r"^(?P<kind>[a-z_]+)(?: \(error (?P<code>\d+)\))?: (?P<cause>.+?) Fix: (?P<fix>.+?)"
    r"(?: \[sysbench said: (?P<said>.+)\])?$"
)

# file, kind, error code, words the excerpt must contain
FAILURES = [
    ("fail_1040_too_many_connections.log", "too_many_connections", 1040, "Too many connections"),
    ("fail_1461_prepared_stmt_limit.log", "prepared_stmt_limit", 1461, "max_prepared_stmt_count"),
    ("fail_2013_connection_killed.log", "lost_connection", 2013, "Lost connection to server during query"),
    ("fail_2013_server_killed.log", "lost_connection", 2013, "for query 'COMMIT'"),
    ("fail_2002_connection_refused.log", "connection_refused", 2002, "port 35419"),
    ("fail_1045_access_denied.log", "access_denied", 1045, "Access denied for user 'sbuser'"),
    ("fail_invalid_option.log", "invalid_option", None, "invalid option: --warmup-time=5"),
    ("fail_invalid_value.log", "invalid_option", None, "Invalid value for the 'threads' option: 'abc'"),
    ("fail_unknown_benchmark.log", "invalid_option", None, "Cannot find benchmark 'nosuchscript'"),
    ("fail_threads_not_started.log", "threads_not_started", None, "within 30 seconds"),
    ("fail_forced_shutdown.log", "overrun", None, "forcing shutdown"),
    ("fail_prepare_tables_exist.log", "tables_exist", 1050, "Table 'sbtest2' already exists"),
    ("fail_prepare_tables_exist.threads1.log", "tables_exist", 1050, "Table 'sbtest1' already exists"),
    ("fail_1146_no_tables.log", "sql_error", 1146, "doesn't exist"),
    ("fail_1049_unknown_database.log", "sql_error", 1049, "Unknown database 'nosuchdb'"),
]

SUCCESSES = sorted(name for name, code in EXIT_CODES.items() if code == 0 and not name.startswith("fail_"))


@pytest.mark.parametrize(("name", "kind", "code", "said"), FAILURES)
def test_real_failures_are_classified(name: str, kind: str, code: int | None, said: str) -> None:
    text = _read(name)
    for exit_code in (EXIT_CODES[name], None):
        failure = classify_failure(text, exit_code)
        assert failure is not None
        assert (failure.kind, failure.error_code) == (kind, code)
        assert said in failure.excerpt
        assert failure.kind in FAILURE_KINDS
        assert failure.cause.endswith(".")
        assert failure.fix.endswith(".")


@pytest.mark.parametrize(("name", "kind", "code", "said"), FAILURES)
def test_message_is_one_line_with_cause_fix_and_excerpt(name: str, kind: str, code: int | None, said: str) -> None:
    failure = classify_failure(_read(name), EXIT_CODES[name])
    assert failure is not None
    message = failure.message()
    assert "\n" not in message
    m = MESSAGE.match(message)
    assert m is not None, message
    assert m["kind"] == kind
    assert m["code"] == (str(code) if code is not None else None)
    assert m["said"] == failure.excerpt
    assert said in m["said"]
    assert len(failure.excerpt) <= 300


def test_message_format_exactly() -> None:
    failure = SysbenchFailure("too_many_connections", 1040, "error 1040: Too many connections", "Cause.", "Fix it.")
    assert failure.message() == (
        "too_many_connections (error 1040): Cause. Fix: Fix it. [sysbench said: error 1040: Too many connections]"
    )
    no_code = SysbenchFailure("overrun", None, "", "Slow.", "Rerun.")
    assert no_code.message() == "overrun: Slow. Fix: Rerun."
    with pytest.raises(dataclasses.FrozenInstanceError):
        failure.kind = "unknown"  # type: ignore[misc]


@pytest.mark.parametrize("name", SUCCESSES)
def test_successful_runs_are_not_failures(name: str) -> None:
    assert classify_failure(_read(name), 0) is None
    assert classify_failure(_read(name)) is None


def test_parallel_prepare_on_existing_tables_exits_0_but_failed() -> None:
    assert EXIT_CODES["fail_prepare_tables_exist.log"] == 0  # what sysbench 1.0.20 really did
    failure = classify_failure(_read("fail_prepare_tables_exist.log"), 0)
    assert failure is not None
    assert failure.kind == "tables_exist"
    assert "cleanup" in failure.fix


def test_1040_explains_max_connections_and_thread_count() -> None:
    failure = classify_failure(_read("fail_1040_too_many_connections.log"), 1)
    assert failure is not None
    assert "16 client threads" in failure.cause
    assert "raise max_connections above the thread count" in failure.fix
    assert "dbperf derives it from the scenario" in failure.fix
    # the excerpt keeps the host and port from the line before the error
    assert failure.excerpt.startswith("unable to connect to MySQL server on host '127.0.0.1', port 35417")


def test_1461_explains_the_statement_count() -> None:
    failure = classify_failure(_read("fail_1461_prepared_stmt_limit.log"), 1)
    assert failure is not None
    assert "(10)" in failure.cause  # "current value: 10" from the server's message
    assert "8 client threads" in failure.cause
    for words in (
        "9 x tables + 2",
        "5 x tables + 2",
        "4 x tables + 2",
        "oltp_point_select",
        "max_prepared_stmt_count",
    ):
        assert words in failure.fix
    # the capture: 8 threads x (9 x 2 tables + 2) statements against a limit of 10
    assert required_prepared_statements("oltp_read_write", tables=2, threads=8) == 160


def test_2013_fix_warns_about_ignore_errors() -> None:
    failure = classify_failure(_read("fail_2013_server_killed.log"), 1)
    assert failure is not None
    assert "--mysql-ignore-errors" in failure.fix
    assert "139" in failure.fix


def test_connection_refused_names_host_and_port() -> None:
    failure = classify_failure(_read("fail_2002_connection_refused.log"), 1)
    assert failure is not None
    assert "127.0.0.1:35419" in failure.cause


def test_mysql_style_2003_and_postgres_refusals() -> None:
    mysql = (
        "FATAL: unable to connect to MySQL server on host 'db', port 3306, aborting...\n"
        "FATAL: error 2003: Can't connect to MySQL server on 'db:3306' (111)\n"
    )
    failure = classify_failure(mysql, 1)
    assert failure is not None
    assert (failure.kind, failure.error_code) == ("connection_refused", 2003)
    assert "db:3306" in failure.cause
    pg = 'FATAL: Connection to database failed: connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused\n'  # noqa: E501
    failure = classify_failure(pg, 1)
    assert failure is not None
    assert (failure.kind, failure.error_code) == ("connection_refused", None)


def test_crash_after_2013_needs_the_exit_code() -> None:
    text = _read("fail_139_crash_after_2013.log")
    assert classify_failure(text) is None  # the crash prints nothing
    for code in (139, -11):  # shell style and subprocess style
        failure = classify_failure(text, code)
        assert failure is not None
        assert failure.kind == "lost_connection"
        assert "--mysql-ignore-errors" in failure.fix


def test_killed_sysbench() -> None:
    text = _read("oltp_read_only.interval_only.log")
    assert classify_failure(text) is None
    for code in (137, -9):
        failure = classify_failure(text, code)
        assert failure is not None
        assert failure.kind == "unknown"
        assert "signal 9" in failure.cause


def test_exit_code_2_without_output() -> None:
    failure = classify_failure("", 2)
    assert failure is not None
    assert failure.kind == "threads_not_started"
    assert "forced shutdown" in failure.cause
    started = classify_failure("Threads started!\n", 2)
    assert started is not None
    assert started.kind == "overrun"


def test_exit_codes_without_a_message() -> None:
    assert classify_failure("", 0) is None
    assert classify_failure("") is None
    failure = classify_failure("something went wrong\n", 1)
    assert failure is not None
    assert (failure.kind, failure.excerpt) == ("unknown", "something went wrong")


def test_unknown_fatal_and_other_sql_errors() -> None:
    unknown = classify_failure("FATAL: something odd happened\n", 1)
    assert unknown is not None
    assert (unknown.kind, unknown.excerpt) == ("unknown", "something odd happened")
    deadlock = classify_failure(
        "FATAL: mysql_stmt_execute() returned error 1213 (Deadlock found) for query 'UPDATE ...'\n", 1
    )
    assert deadlock is not None
    assert (deadlock.kind, deadlock.error_code) == ("sql_error", 1213)
    assert "--mysql-ignore-errors" in deadlock.fix
    other = classify_failure('FATAL: MySQL error: 1290 "read-only"\n', 1)
    assert other is not None
    assert (other.kind, other.error_code) == ("sql_error", 1290)


def test_long_excerpts_are_trimmed() -> None:
    text = "FATAL: mysql_drv_query() returned error 1064 (syntax) for query '" + "x" * 1000 + "'\n"
    failure = classify_failure(text, 1)
    assert failure is not None
    assert len(failure.excerpt) == 300
    assert failure.excerpt.endswith("...")


# --------------------------------------------------------------------------------------------------
# overrun
# --------------------------------------------------------------------------------------------------


def test_overrun_of_the_blocked_run() -> None:
    # overrun_blocked_query.log: --time=3 but "total time: 7.2043s", exit status 0
    failure = overrun(3, 7.2043)
    assert failure is not None
    assert (failure.kind, failure.error_code) == ("overrun", None)
    assert "7.2043" in failure.excerpt
    assert "4.2 s longer" in failure.cause
    assert "--forced-shutdown" in failure.fix


@pytest.mark.parametrize(("expected", "total", "tolerance"), [(3, 3.0020, 2.0), (3, 5.0, 2.0), (10, 10.5, 0.5)])
def test_no_overrun_within_tolerance(expected: float, total: float, tolerance: float) -> None:
    assert overrun(expected, total, tolerance) is None


def test_overrun_with_a_tight_tolerance() -> None:
    assert overrun(3, 3.5, tolerance_s=0.1) is not None


# --------------------------------------------------------------------------------------------------
# required_prepared_statements (checked against MariaDB 10.11: exactly N passes, N - 1 fails with 1461)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "tables", "threads", "expected"),
    [
        ("oltp_read_write", 2, 2, 40),
        ("oltp_read_only", 2, 2, 24),
        ("oltp_write_only", 2, 2, 20),
        ("oltp_point_select", 2, 3, 6),
        ("select_random_points", 2, 2, 2),
        ("oltp_read_write", 10, 64, (9 * 10 + 2) * 64),
        ("oltp_read_only", 10, 64, (5 * 10 + 2) * 64),
        ("oltp_write_only", 10, 64, (4 * 10 + 2) * 64),
        ("oltp_point_select", 10, 64, 640),
        ("oltp_update_index", 4, 8, 32),
        ("oltp_update_non_index", 4, 8, 32),
        ("oltp_delete", 4, 8, 32),
        ("oltp_insert", 4, 8, 0),
        ("select_random_ranges", 1, 8, 8),
        ("/usr/share/sysbench/oltp_read_write.lua", 2, 8, 160),
        ("oltp_read_only.lua", 1, 1, 7),
    ],
)
def test_required_prepared_statements(script: str, tables: int, threads: int, expected: int) -> None:
    assert required_prepared_statements(script, tables, threads) == expected


def test_required_prepared_statements_options() -> None:
    assert required_prepared_statements("oltp_read_write", 2, 1, skip_trx=True) == 18
    assert required_prepared_statements("oltp_read_write", 2, 1, range_selects=False) == 12
    assert required_prepared_statements("oltp_read_only", 2, 1, skip_trx=True, range_selects=False) == 2
    assert required_prepared_statements("oltp_point_select", 2, 1, skip_trx=True) == 2


def test_required_prepared_statements_of_a_custom_script_is_an_upper_bound() -> None:
    # scenarios/lua/*.lua build on oltp_common: at most the 9 per-table statements + BEGIN/COMMIT
    assert required_prepared_statements("lua/cloud_mix.lua", 2, 2) == 40
    assert required_prepared_statements("lua/cloud_mix.lua", 2, 2, skip_trx=True) == 36
    assert required_prepared_statements("lua/cloud_mix.lua", 2, 2, range_selects=False) == 40


def test_required_prepared_statements_rejects_negative_counts() -> None:
    with pytest.raises(SysbenchError, match="must not be negative"):
        required_prepared_statements("oltp_read_write", -1, 2)
    with pytest.raises(SysbenchError):
        required_prepared_statements("oltp_point_select", 1, -2)
