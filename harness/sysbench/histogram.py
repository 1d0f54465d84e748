"""sysbench's latency histogram (``--histogram=on``): every non-empty bucket of the measured window.

Percentiles come from these buckets (p50/p95/p99 of the window), not from one bucketed value per
interval; the counts add up to the run's events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.errors import LogParseError

_NUM = r"\d+(?:\.\d+)?"
HIST_HEADER = re.compile(r"^\s*Latency histogram \(values are in milliseconds\)\s*$")
_HIST_COLUMNS = re.compile(r"^\s*value\s+-+\s*distribution\s*-+\s*count\s*$")
_HIST_BUCKET = re.compile(rf"^\s*(?P<value>{_NUM})\s*\|\s*\**\s*(?P<count>\d+)\s*$")
_HIST_FORMAT = "a histogram bucket '<value ms> |*** <count>'"


@dataclass(frozen=True)
class HistogramBucket:
    """One ``--histogram=on`` line: ``value |**** count`` (value in milliseconds, 3 decimals)."""

    value_ms: float
    count: int


def parse_buckets(numbered: Iterable[tuple[int, str]], path: str) -> tuple[HistogramBucket, ...]:
    buckets: list[HistogramBucket] = []
    for lineno, line in numbered:
        if not line.strip() or _HIST_COLUMNS.match(line) or HIST_HEADER.match(line):
            continue
        m = _HIST_BUCKET.match(line)
        if m is None:
            raise LogParseError(path, lineno, f"expected {_HIST_FORMAT}, found {line.strip()!r}")
        buckets.append(HistogramBucket(value_ms=float(m["value"]), count=int(m["count"])))
    return tuple(buckets)


def histogram_block(lines: Sequence[str], header: int) -> tuple[list[tuple[int, str]], int]:
    """The numbered lines of the histogram whose header is at index ``header``, and the index after it."""
    block: list[tuple[int, str]] = []
    i = header + 1
    while i < len(lines) and lines[i].strip():
        block.append((i + 1, lines[i]))
        i += 1
    return block, i


def parse_histogram(lines: Iterable[str], *, path: str = "<histogram>") -> tuple[HistogramBucket, ...]:
    """The buckets of sysbench's ``--histogram=on`` output, in printed (ascending) order.

    ``lines`` is either a whole sysbench output, in which case the block after the last
    ``Latency histogram (values are in milliseconds)`` header is read, or just the histogram (with or
    without its header and column lines), in which case every non-blank line must be a bucket.
    Lines without a header and without any bucket give ``()`` (a run without ``--histogram=on``).
    Bucket values are printed with three decimals, so neighbouring buckets may show the same value;
    they are kept apart. The counts add up to the run's events. A line that should be a bucket and
    is not raises :class:`~harness.errors.LogParseError` with its 1-based line number.
    """
    text_lines = [line.rstrip("\r\n") for line in lines]
    headers = [i for i, line in enumerate(text_lines) if HIST_HEADER.match(line)]
    if headers:
        block, _ = histogram_block(text_lines, headers[-1])
        return parse_buckets(block, path)
    if not any(_HIST_BUCKET.match(line) for line in text_lines):
        return ()  # an output without --histogram=on
    return parse_buckets(enumerate(text_lines, 1), path)
