"""The sysbench log parser against real sysbench 1.0.20 captures (tests/data/sysbench/README.md)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from harness.errors import HarnessError, LogParseError
from harness.imports.sysbench_log import LogInterval, ParsedLog, parse_sysbench_log
from harness.sysbench.histogram import HistogramBucket, parse_histogram

DATA = Path(__file__).resolve().parents[1] / "data" / "sysbench"


def _read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def _parse(name: str, exit_code: int | None = None) -> ParsedLog:
    return parse_sysbench_log(_read(name), str(DATA / name), exit_code=exit_code)


def _readme_exit_codes() -> dict[str, int]:
    rows = re.findall(r"^\| `([^`]+)` \| .* \| (\d+) \|$", _read("README.md"), re.MULTILINE)
    return {name: int(code) for name, code in rows}


EXIT_CODES = _readme_exit_codes()


# --------------------------------------------------------------------------------------------------
# The captures themselves
# --------------------------------------------------------------------------------------------------


def test_readme_lists_every_capture_with_its_exit_code() -> None:
    files = {p.name for p in DATA.glob("*.log")}
    assert files == set(EXIT_CODES)
    assert len(files) >= 30


@pytest.mark.parametrize("name", sorted(EXIT_CODES))
def test_captures_are_small(name: str) -> None:
    assert (DATA / name).stat().st_size < 50_000


# --------------------------------------------------------------------------------------------------
# The ten OLTP scripts: exact values, copied from the files
# --------------------------------------------------------------------------------------------------

# script, intervals, read, write, other, queries, transactions, tps, qps, total time, events,
# min, avg, max, 95th percentile, sum
SCRIPTS = [
    ("oltp_point_select", 2, 250082, 0, 0, 250082, 250082, 83298.10, 83298.10, 3.0016, 250082, 0.02, 0.02, 3.03, 0.05, 5957.34),  # noqa: E501
    ("oltp_read_only", 3, 112700, 0, 16100, 128800, 8050, 2680.78, 42892.41, 3.0022, 8050, 0.40, 0.74, 4.55, 1.58, 5994.45),  # noqa: E501
    ("oltp_read_write", 3, 49098, 14028, 7014, 70140, 3507, 1167.96, 23359.24, 3.0020, 3507, 0.72, 1.71, 3.81, 2.14, 5998.19),  # noqa: E501
    ("oltp_write_only", 2, 0, 48188, 24094, 72282, 12047, 4012.40, 24074.41, 3.0017, 12047, 0.24, 0.50, 2.95, 0.64, 5994.75),  # noqa: E501
    ("oltp_update_index", 3, 0, 23653, 0, 23653, 23653, 7878.45, 7878.45, 3.0016, 23653, 0.12, 0.25, 3.28, 0.33, 5994.47),  # noqa: E501
    ("oltp_update_non_index", 3, 0, 23572, 0, 23572, 23572, 7851.61, 7851.61, 3.0015, 23572, 0.10, 0.25, 4.43, 0.34, 5995.95),  # noqa: E501
    ("oltp_insert", 3, 0, 21350, 0, 21350, 21350, 7112.23, 7112.23, 3.0012, 21350, 0.11, 0.28, 7.90, 0.39, 5967.80),
    ("oltp_delete", 2, 0, 18302, 31100, 49402, 49402, 16458.43, 16458.43, 3.0010, 49402, 0.02, 0.12, 3.77, 0.29, 5985.65),  # noqa: E501
    ("select_random_points", 3, 97399, 0, 0, 97399, 97399, 32434.67, 32434.67, 3.0020, 97399, 0.04, 0.06, 2.98, 0.09, 5970.06),  # noqa: E501
    ("select_random_ranges", 2, 93752, 0, 0, 93752, 93752, 31230.18, 31230.18, 3.0013, 93752, 0.05, 0.06, 4.14, 0.11, 5974.66),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("script", "n_intervals", "reads", "writes", "other", "queries", "transactions", "tps", "qps",
     "total_time", "events", "lat_min", "lat_avg", "lat_max", "lat_p95", "lat_sum"),
    SCRIPTS,
)  # fmt: skip
def test_script_log_values(
    script: str,
    n_intervals: int,
    reads: int,
    writes: int,
    other: int,
    queries: int,
    transactions: int,
    tps: float,
    qps: float,
    total_time: float,
    events: int,
    lat_min: float,
    lat_avg: float,
    lat_max: float,
    lat_p95: float,
    lat_sum: float,
) -> None:
    log = _parse(f"{script}.log")
    assert log.sysbench_version == "1.0.20"
    assert log.threads == 2
    assert log.report_interval_s == 1.0
    assert log.failure is None
    assert log.histogram == ()
    assert len(log.intervals) == n_intervals
    assert [i.time_s for i in log.intervals] == [float(n) for n in range(1, n_intervals + 1)]
    s = log.summary
    assert s is not None
    assert (s.reads, s.writes, s.other, s.queries, s.transactions) == (
        reads,
        writes,
        other,
        queries,
        transactions,
    )
    assert (s.tps, s.qps, s.total_time_s, s.events) == (tps, qps, total_time, events)
    assert (s.ignored_errors, s.reconnects) == (0, 0)
    assert (s.latency_min_ms, s.latency_avg_ms, s.latency_max_ms) == (lat_min, lat_avg, lat_max)
    assert (s.latency_pct_ms, s.percentile, s.latency_sum_ms) == (lat_p95, 95.0, lat_sum)


@pytest.mark.parametrize("script", [row[0] for row in SCRIPTS])
def test_script_log_is_self_consistent(script: str) -> None:
    log = _parse(f"{script}.log")
    s = log.summary
    assert s is not None
    assert s.reads + s.writes + s.other == s.queries
    assert s.tps == pytest.approx(s.transactions / s.total_time_s, rel=1e-3)
    assert s.qps == pytest.approx(s.queries / s.total_time_s, rel=1e-3)
    assert log.threads is not None
    for interval in log.intervals:
        # "thds" counts running threads: a thread that finished early shows as 1 in the last report
        assert 1 <= interval.threads <= log.threads
        assert interval.percentile == 95.0
        parts = interval.reads_per_s + interval.writes_per_s + interval.other_per_s
        assert interval.qps == pytest.approx(parts, abs=0.03)
        assert (interval.errors_per_s, interval.reconnects_per_s) == (0.0, 0.0)


def test_interval_line_values_exactly() -> None:
    # [ 1s ] thds: 2 tps: 1033.96 qps: 20706.11 (r/w/o: 14500.37/4135.83/2069.91) lat (ms,95%): 2.26
    #   err/s: 0.00 reconn/s: 0.00
    first = _parse("oltp_read_write.log").intervals[0]
    assert first == LogInterval(
        time_s=1.0,
        threads=2,
        tps=1033.96,
        qps=20706.11,
        reads_per_s=14500.37,
        writes_per_s=4135.83,
        other_per_s=2069.91,
        latency_pct_ms=2.26,
        percentile=95.0,
        errors_per_s=0.0,
        reconnects_per_s=0.0,
    )


def test_interval_thread_count_is_threads_running() -> None:
    # the last report of this run was printed after one of the two threads had finished
    assert [i.threads for i in _parse("oltp_update_index.log").intervals] == [2, 2, 1]


def test_parsed_log_is_frozen() -> None:
    log = _parse("oltp_point_select.log")
    with pytest.raises(dataclasses.FrozenInstanceError):
        log.threads = 4  # type: ignore[misc]
    assert log.summary is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        log.summary.qps = 1.0  # type: ignore[misc]


# --------------------------------------------------------------------------------------------------
# Variants: no interval, percentile, histogram, interval-only, other versions
# --------------------------------------------------------------------------------------------------


def test_log_without_report_interval() -> None:
    log = _parse("oltp_read_only.nointerval.log")
    assert log.report_interval_s is None
    assert log.intervals == ()
    assert log.failure is None
    s = log.summary
    assert s is not None
    assert (s.reads, s.writes, s.other, s.queries) == (243124, 0, 34732, 277856)
    assert (s.transactions, s.tps, s.qps) == (17366, 5785.44, 92566.98)
    assert (s.total_time_s, s.events, s.latency_pct_ms, s.latency_sum_ms) == (3.0008, 17366, 0.39, 5991.04)


def test_percentile_99() -> None:
    log = _parse("oltp_read_write.p99.log")
    assert [i.percentile for i in log.intervals] == [99.0, 99.0, 99.0]
    assert [i.latency_pct_ms for i in log.intervals] == [4.33, 3.19, 3.55]
    assert [i.errors_per_s for i in log.intervals] == [0.0, 1.0, 1.0]
    s = log.summary
    assert s is not None
    assert (s.percentile, s.latency_pct_ms, s.ignored_errors, s.qps) == (99.0, 3.82, 2, 25909.20)
    assert (s.reads, s.writes, s.other, s.queries) == (54516, 5880, 17480, 77876)


def test_percentile_disabled() -> None:
    log = _parse("oltp_point_select.p0.log")
    assert [(i.percentile, i.latency_pct_ms) for i in log.intervals] == [(0.0, 0.0), (0.0, 0.0)]
    s = log.summary
    assert s is not None
    assert (s.percentile, s.latency_pct_ms, s.latency_sum_ms, s.qps) == (0.0, 0.0, 3988.60, 108831.15)


def test_histogram_log() -> None:
    log = _parse("oltp_point_select.histogram.log")
    s = log.summary
    assert s is not None
    assert (s.events, s.qps, s.latency_pct_ms) == (159644, 53160.79, 0.09)
    # "transactions:                        159644 (53160.79 per sec.)": columns touch
    assert (s.transactions, s.tps) == (159644, 53160.79)
    assert len(log.intervals) == 3
    assert len(log.histogram) == 195
    assert log.histogram[0] == HistogramBucket(value_ms=0.016, count=1)
    assert log.histogram[1] == HistogramBucket(value_ms=0.017, count=55)
    assert log.histogram[9] == HistogramBucket(value_ms=0.019, count=13567)
    assert log.histogram[-1] == HistogramBucket(value_ms=3.075, count=1)
    # three decimals: 0.017 is printed for three neighbouring buckets, kept apart
    assert [b.count for b in log.histogram if b.value_ms == 0.017] == [55, 227, 1525]
    values = [b.value_ms for b in log.histogram]
    assert values == sorted(values)
    total = sum(b.count for b in log.histogram)
    assert abs(total - s.events) <= (log.threads or 0)  # in-flight events at most
    assert total == 159644
    assert values[0] <= s.latency_min_ms + 0.01
    assert values[-1] == pytest.approx(s.latency_max_ms, rel=0.02)


def test_parse_histogram_on_whole_output_and_on_the_block() -> None:
    text = _read("oltp_point_select.histogram.log")
    expected = _parse("oltp_point_select.histogram.log").histogram
    assert parse_histogram(text.splitlines()) == expected
    assert parse_histogram(text.splitlines(keepends=True)) == expected
    lines = text.splitlines()
    start = lines.index("Latency histogram (values are in milliseconds)")
    block = lines[start : start + 1 + 1 + 195]
    assert parse_histogram(block) == expected  # with header and column line
    assert parse_histogram(block[2:]) == expected  # buckets only
    assert parse_histogram(iter(block[2:])) == expected  # any iterable
    assert parse_histogram([]) == ()
    assert parse_histogram(_read("oltp_point_select.log").splitlines()) == ()
    assert parse_histogram(["no histogram here"]) == ()


def test_parse_histogram_rejects_a_bad_bucket_with_its_line() -> None:
    lines = ["       0.016 |                                         1", "       0.017 |***  lots"]
    with pytest.raises(LogParseError) as err:
        parse_histogram(lines, path="hist.txt")
    assert (err.value.path, err.value.line) == ("hist.txt", 2)
    assert "histogram bucket" in err.value.problem


def test_histogram_inside_a_log_rejects_a_bad_bucket_with_its_line() -> None:
    lines = _read("oltp_point_select.histogram.log").splitlines()
    start = lines.index("Latency histogram (values are in milliseconds)")
    lines[start + 5] = "       0.017 |****       x"
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines), "h.log")
    assert err.value.line == start + 6


def test_interval_only_log() -> None:
    # sysbench was killed with SIGKILL after 3.5 s of a 10 s run: intervals, no summary, no FATAL
    log = _parse("oltp_read_only.interval_only.log")
    assert log.summary is None
    assert log.failure is None
    assert len(log.intervals) == 3
    assert [i.qps for i in log.intervals] == [84555.99, 88573.78, 89069.72]
    assert log.intervals[-1].other_per_s == 11133.96
    killed = _parse("oltp_read_only.interval_only.log", exit_code=EXIT_CODES["oltp_read_only.interval_only.log"])
    assert killed.failure is not None
    assert killed.failure.kind == "unknown"
    assert "signal 9" in killed.failure.cause
    assert killed.intervals == log.intervals


def test_crash_139_is_explained_only_with_the_exit_code() -> None:
    log = _parse("fail_139_crash_after_2013.log")
    assert (len(log.intervals), log.summary, log.failure) == (2, None, None)
    for code in (139, -11):
        crashed = _parse("fail_139_crash_after_2013.log", exit_code=code)
        assert crashed.failure is not None
        assert crashed.failure.kind == "lost_connection"
        assert "139" in crashed.failure.cause or "-11" in crashed.failure.cause


def test_overrun_log_keeps_its_stalled_intervals() -> None:
    log = _parse("overrun_blocked_query.log")
    assert log.failure is None  # exit 0: only the total time shows it, see sysbench_failures.overrun
    assert len(log.intervals) == 7
    assert [i.tps for i in log.intervals[2:]] == [0.0] * 5
    s = log.summary
    assert s is not None
    assert (s.total_time_s, s.latency_max_ms, s.events) == (7.2043, 6001.01, 88561)


def test_forced_shutdown_log_has_summary_and_failure() -> None:
    log = _parse("fail_forced_shutdown.log")
    assert len(log.intervals) == 3
    assert log.failure is not None
    assert log.failure.kind == "overrun"
    s = log.summary
    assert s is not None  # despite "Number of unfinished transactions on forced shutdown: 2"
    assert (s.total_time_s, s.events, s.qps, s.latency_sum_ms) == (4.0003, 54439, 13606.49, 2398.47)


def test_sysbench_1_0_17_header() -> None:
    log = _parse("sysbench_1.0.17_writeup.log")
    assert (log.sysbench_version, log.threads, log.report_interval_s) == ("1.0.17", 1, None)
    assert log.intervals == ()
    s = log.summary
    assert s is not None
    assert (s.reads, s.writes, s.other, s.queries, s.transactions) == (12894, 3684, 1842, 18420, 921)
    assert (s.tps, s.qps, s.total_time_s) == (92.01, 1840.11, 10.0086)
    assert (s.latency_min_ms, s.latency_avg_ms, s.latency_max_ms) == (8.23, 10.86, 24.98)
    assert (s.latency_pct_ms, s.latency_sum_ms) == (14.46, 10004.08)


def test_sysbench_1_0_17_intervals() -> None:
    # 1.0.17 prints the same interval format (the write-up quotes 10 s intervals with 64 threads)
    text = (
        "sysbench 1.0.17 (using bundled LuaJIT 2.1.0-beta2)\n\n"
        "Report intermediate results every 10 second(s)\n"
        "[ 10s ] thds: 64 tps: 90576.56 qps: 90576.56 (r/w/o: 90576.56/0.00/0.00) "
        "lat (ms,95%): 1.25 err/s: 0.00 reconn/s: 0.00\n"
    )
    log = parse_sysbench_log(text)
    assert log.report_interval_s == 10.0
    assert log.intervals[0].time_s == 10.0
    assert log.intervals[0].threads == 64
    assert log.intervals[0].tps == 90576.56


# --------------------------------------------------------------------------------------------------
# Failed runs
# --------------------------------------------------------------------------------------------------

FAILURES = [
    ("fail_1040_too_many_connections.log", "too_many_connections", 1040, 0),
    ("fail_1461_prepared_stmt_limit.log", "prepared_stmt_limit", 1461, 0),
    ("fail_2013_connection_killed.log", "lost_connection", 2013, 2),
    ("fail_2013_server_killed.log", "lost_connection", 2013, 2),
    ("fail_2002_connection_refused.log", "connection_refused", 2002, 0),
    ("fail_1045_access_denied.log", "access_denied", 1045, 0),
    ("fail_invalid_option.log", "invalid_option", None, 0),
    ("fail_invalid_value.log", "invalid_option", None, 0),
    ("fail_unknown_benchmark.log", "invalid_option", None, 0),
    ("fail_threads_not_started.log", "threads_not_started", None, 0),
    ("fail_prepare_tables_exist.log", "tables_exist", 1050, 0),
    ("fail_prepare_tables_exist.threads1.log", "tables_exist", 1050, 0),
    ("fail_1146_no_tables.log", "sql_error", 1146, 0),
    ("fail_1049_unknown_database.log", "sql_error", 1049, 0),
]


@pytest.mark.parametrize(("name", "kind", "code", "n_intervals"), FAILURES)
def test_failed_run_parses_with_failure(name: str, kind: str, code: int | None, n_intervals: int) -> None:
    for exit_code in (None, EXIT_CODES[name]):
        log = _parse(name, exit_code=exit_code)
        assert log.failure is not None
        assert (log.failure.kind, log.failure.error_code) == (kind, code)
        assert len(log.intervals) == n_intervals
        assert log.summary is None
        assert log.histogram == ()


def test_failed_run_keeps_intervals_before_the_failure() -> None:
    log = _parse("fail_2013_server_killed.log")
    assert [i.qps for i in log.intervals] == [23243.24, 21304.63]
    assert log.threads == 2


def test_option_error_has_no_header() -> None:
    log = _parse("fail_invalid_value.log")  # stderr only, printed before the version header
    assert (log.sysbench_version, log.threads) == (None, None)


# --------------------------------------------------------------------------------------------------
# Malformed input
# --------------------------------------------------------------------------------------------------


def _lines(name: str) -> list[str]:
    return _read(name).splitlines()


def _line_of(lines: list[str], prefix: str) -> int:
    """1-based number of the first line whose stripped text starts with prefix."""
    return next(n for n, line in enumerate(lines, 1) if line.strip().startswith(prefix))


@pytest.mark.parametrize("text", ["", "\n", "   \n\n \t\n"])
def test_empty_log(text: str) -> None:
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log(text, "empty.log")
    assert (err.value.path, err.value.line) == ("empty.log", 1)
    assert "empty log" in err.value.problem
    assert str(err.value).startswith("empty.log:1: ")
    assert isinstance(err.value, HarnessError)


def test_garbage() -> None:
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\nhello world\n<html>\n", "g.log")
    assert err.value.line == 2
    assert "not sysbench output" in err.value.problem
    assert "'hello world'" in err.value.problem


def test_garbage_after_a_header_names_the_first_foreign_line() -> None:
    text = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nInitializing worker threads...\n\nrandom noise\n"
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log(text)
    assert (err.value.path, err.value.line) == ("<string>", 5)


def test_log_stopped_before_anything_was_reported() -> None:
    lines = _lines("oltp_read_write.log")
    started = _line_of(lines, "Threads started!")
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines[:started]) + "\n\n", "early.log")
    assert err.value.line == started
    assert "before any interval line" in err.value.problem


@pytest.mark.parametrize(
    ("cut_after", "expected"),
    [
        ("SQL statistics:", "queries performed:"),
        ("transactions:", "queries:"),
        ("reconnects:", "General statistics:"),
        ("General statistics:", "total time:"),
        ("Latency (ms):", "min:"),
        ("95th percentile:", "sum:"),
    ],
)
def test_cut_summary_raises_at_the_last_line(cut_after: str, expected: str) -> None:
    lines = _lines("oltp_read_write.log")
    keep = _line_of(lines, cut_after)
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines[:keep]) + "\n", "cut.log")
    assert err.value.line == keep
    assert "cut" in err.value.problem
    assert f"'{expected}" in err.value.problem


def test_summary_cut_in_the_middle_of_a_value() -> None:
    lines = _lines("oltp_read_write.log")
    n = _line_of(lines, "total time:")
    lines[n - 1] = "    total time:                          3.00"
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines[:n]), "cut.log")
    assert err.value.line == n
    assert "after 'total time:'" in err.value.problem
    assert "'3.00'" in err.value.problem


@pytest.mark.parametrize(
    ("field", "bad", "what"),
    [
        ("read:", "        read:                            lots", "<count>"),
        ("transactions:", "    transactions:                        3507   (fast per sec.)", "per sec."),
        ("min:", "         min:                                    abc", "<ms>"),
        ("95th percentile:", "         95th percentile:                       n/a", "<ms>"),
        ("total number of events:", "    total number of events:              3507.5", "<count>"),
    ],
)
def test_non_numeric_summary_value_names_its_line(field: str, bad: str, what: str) -> None:
    lines = _lines("oltp_read_write.log")
    n = _line_of(lines, field)
    lines[n - 1] = bad
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines), "bad.log")
    assert err.value.line == n
    assert what in err.value.problem
    assert f"after '{field}'" in err.value.problem


def test_missing_summary_line_names_the_line_found_instead() -> None:
    lines = _lines("oltp_read_write.log")
    n = _line_of(lines, "write:")
    del lines[n - 1]
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines), "missing.log")
    assert err.value.line == n  # the 'other:' line now sits where 'write:' was expected
    assert "expected 'write: <count>'" in err.value.problem
    assert "'other:" in err.value.problem


def test_malformed_interval_line() -> None:
    lines = _lines("oltp_read_write.log")
    n = _line_of(lines, "[ 2s ]")
    lines[n - 1] = lines[n - 1].replace("tps: 1218.26", "tps: many")
    with pytest.raises(LogParseError) as err:
        parse_sysbench_log("\n".join(lines), "interval.log")
    assert err.value.line == n
    assert "malformed interval line" in err.value.problem


def test_foreign_lines_in_a_good_log_are_ignored() -> None:
    lines = _lines("oltp_read_write.log")
    lines.insert(3, "my lua script says hello")
    lines.append("[ 4s ] queue length: 0, concurrency: 2")
    log = parse_sysbench_log("\r\n".join(lines))
    assert log.summary == _parse("oltp_read_write.log").summary


def test_last_of_several_summaries_wins() -> None:
    text = _read("oltp_read_write.log")
    other = _read("oltp_read_only.nointerval.log")
    log = parse_sysbench_log(text + "\n[ 3s ] Checkpoint report:\n" + other)
    assert log.summary == _parse("oltp_read_only.nointerval.log").summary
    assert len(log.intervals) == 3
