"""The summary block of sysbench 1.0.x text output (``SQL statistics`` / ``General statistics`` /
``Latency (ms)``), read field by field: a line that is cut or not numeric raises
:class:`~harness.errors.LogParseError` naming it and what was expected there (see
:mod:`harness.imports.sysbench_log`, which finds the block in a whole log)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from harness.errors import LogParseError

NUM = r"\d+(?:\.\d+)?"
"""A number as sysbench prints it (an integer or a decimal)."""


@dataclass(frozen=True)
class LogSummary:
    """The final ``SQL statistics`` / ``General statistics`` / ``Latency (ms)`` block."""

    reads: int
    writes: int
    other: int
    queries: int
    transactions: int
    tps: float
    qps: float
    ignored_errors: int
    reconnects: int
    total_time_s: float
    events: int
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    latency_pct_ms: float
    percentile: float
    latency_sum_ms: float


# Lines sysbench may interleave with the summary (other threads' messages, forced shutdown notes).
_SUMMARY_SKIPPABLE = re.compile(r"^\s*(?:FATAL:|WARNING:|\(last message repeated|Number of unfinished transactions)")


_T = TypeVar("_T")


class _SummaryReader:
    """Reads the fields of one summary block in order, raising LogParseError at the first bad line."""

    def __init__(self, lines: Sequence[str], start: int, path: str) -> None:
        self.lines = lines
        self.index = start  # index of the next line to read
        self.path = path

    def _next_line(self, wanted: str) -> tuple[int, str]:
        while self.index < len(self.lines):
            line = self.lines[self.index]
            self.index += 1
            if line.strip() and not _SUMMARY_SKIPPABLE.match(line):
                return self.index, line
        raise LogParseError(
            self.path,
            max(len(self.lines), 1),
            f"log ends inside the summary block (it is cut): expected {wanted} after this line",
        )

    def heading(self, title: str) -> None:
        lineno, line = self._next_line(f"'{title}'")
        if line.strip() != title:
            raise LogParseError(self.path, lineno, f"expected '{title}' in the summary block, found {line.strip()!r}")

    def field(self, label: str, what: str, convert: Callable[[str], _T | None]) -> _T:
        pattern = re.compile(rf"^\s*{re.escape(label)}:\s*(?P<value>.*?)\s*$")
        return self.matched_field(pattern, f"'{label}: {what}'", label, what, convert)[1]

    def matched_field(
        self,
        pattern: re.Pattern[str],
        wanted: str,
        label: str,
        what: str,
        convert: Callable[[str], _T | None],
    ) -> tuple[re.Match[str], _T]:
        lineno, line = self._next_line(wanted)
        m = pattern.match(line)
        if m is None:
            raise LogParseError(self.path, lineno, f"expected {wanted} in the summary block, found {line.strip()!r}")
        raw = m["value"]
        value = convert(raw)
        if value is None:
            shown = line.strip().split(":", 1)[0] or label
            raise LogParseError(self.path, lineno, f"expected {what} after '{shown}:', found {raw!r}")
        return m, value


_COUNT = re.compile(r"^\d+$")


_COUNT_RATE = re.compile(rf"^(\d+)\s*\(\s*({NUM}) per sec\.\)$")


_SECONDS = re.compile(rf"^({NUM})s$")


_MS = re.compile(rf"^{NUM}$")


_PERCENTILE = re.compile(rf"^\s*(?:(?P<pct>{NUM})(?:st|nd|rd|th) percentile|percentile stats):\s*(?P<value>.*?)\s*$")


def _count(raw: str) -> int | None:
    return int(raw) if _COUNT.match(raw) else None


def _count_rate(raw: str) -> tuple[int, float] | None:
    m = _COUNT_RATE.match(raw)
    return (int(m.group(1)), float(m.group(2))) if m else None


def _seconds(raw: str) -> float | None:
    m = _SECONDS.match(raw)
    return float(m.group(1)) if m else None


def _ms(raw: str) -> float | None:
    return float(raw) if _MS.match(raw) else None


def _percentile_value(raw: str) -> float | None:
    if raw == "disabled":
        return 0.0
    return _ms(raw)


def read_summary(lines: Sequence[str], start: int, path: str) -> tuple[LogSummary, int]:
    """Parse the summary whose ``SQL statistics:`` line is at index ``start - 1``."""
    r = _SummaryReader(lines, start, path)
    count = "<count>"
    count_rate = "<count> (<rate> per sec.)"
    r.heading("queries performed:")
    reads = r.field("read", count, _count)
    writes = r.field("write", count, _count)
    other = r.field("other", count, _count)
    r.field("total", count, _count)
    transactions, tps = r.field("transactions", count_rate, _count_rate)
    queries, qps = r.field("queries", count_rate, _count_rate)
    ignored_errors, _ = r.field("ignored errors", count_rate, _count_rate)
    reconnects, _ = r.field("reconnects", count_rate, _count_rate)
    r.heading("General statistics:")
    total_time_s = r.field("total time", "<seconds>s (like '3.0020s')", _seconds)
    events = r.field("total number of events", count, _count)
    r.heading("Latency (ms):")
    latency_min_ms = r.field("min", "<ms>", _ms)
    latency_avg_ms = r.field("avg", "<ms>", _ms)
    latency_max_ms = r.field("max", "<ms>", _ms)
    m, latency_pct_ms = r.matched_field(
        _PERCENTILE,
        "'<N>th percentile: <ms>' (or 'percentile stats: disabled')",
        "percentile",
        "<ms>",
        _percentile_value,
    )
    percentile = float(m["pct"]) if m["pct"] is not None else 0.0
    latency_sum_ms = r.field("sum", "<ms>", _ms)
    summary = LogSummary(
        reads=reads,
        writes=writes,
        other=other,
        queries=queries,
        transactions=transactions,
        tps=tps,
        qps=qps,
        ignored_errors=ignored_errors,
        reconnects=reconnects,
        total_time_s=total_time_s,
        events=events,
        latency_min_ms=latency_min_ms,
        latency_avg_ms=latency_avg_ms,
        latency_max_ms=latency_max_ms,
        latency_pct_ms=latency_pct_ms,
        percentile=percentile,
        latency_sum_ms=latency_sum_ms,
    )
    return summary, r.index
