"""The per-operation lines go-tpc and go-ycsb print: ``NAME - Key: value, Key: value, ...``.

Both tools render a row of figures with the same helper (``util.RenderString``: each header, ``": "``,
the value, joined by ``", "``) behind the operation's name formatted ``%-6s - ``, so one reader serves
both; each tool passes the table of keys it prints (:data:`harness.imports.gotpc.TPC_KEYS`,
:data:`harness.imports.goycsb.YCSB_KEYS`). Figures are kept in milliseconds whatever the unit printed.

Both tools print the operations of one report sorted by their map key (Go's ``sort.Strings``), so a
report ends where the order starts again (:func:`split_reports`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from harness.errors import LogParseError

#: A number as Go's ``%.1f`` / ``%d`` print it (``NaN`` and ``+Inf`` when a rate divides by zero).
GO_NUMBER = r"-?\d+(?:\.\d+)?|NaN|[+-]Inf"
_NUMBER = re.compile(rf"^(?:{GO_NUMBER})$")
_FIELD = re.compile(r"^(?P<key>[^:,]+):\s(?P<value>\S+)$")


@dataclass(frozen=True)
class OpLine:
    """One operation's figures from one report, latencies in milliseconds (None: not printed).

    ``takes_s`` is the tool's ``Takes(s)``: seconds since that operation's histogram got its first
    value. ``rate_per_s`` is go-tpc's ``TPM`` / 60 or go-ycsb's ``OPS``: ``count / takes_s``.
    As printed, ``count`` is the line's and ``errors`` 0; once a type's failures are folded in
    (:func:`harness.imports.printed_operations.fold_errors`), ``count`` counts its successes only (go-tpc's
    ``NEW_ORDER``, go-ycsb's ``READ``), ``errors`` its failures (``NEW_ORDER_ERR``, ``READ_ERROR``), and
    the latency figures are the successes'.
    """

    lineno: int
    name: str
    takes_s: float
    count: int
    rate_per_s: float
    errors: int = 0
    sum_ms: float | None = None
    avg_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    p999_ms: float | None = None
    p9999_ms: float | None = None
    printed: str = ""  # the figures exactly as the tool printed them (``Takes(s): 27.3, Count: ...``)


#: printed key -> (OpLine field, factor to the field's unit)
KeyTable = Mapping[str, tuple[str, float]]
#: The sequences of keys a tool's versions printed, newest first.
Layouts = tuple[tuple[str, ...], ...]


def parse_fields(
    name: str, body: str, keys: KeyTable, layouts: Layouts, *, lineno: int, path: str, expected: str
) -> OpLine:
    """Read ``Key: value, Key: value, ...`` (``body``) into an :class:`OpLine` named ``name``.

    The keys must be, in order, one of ``layouts`` (what some version of the tool printed), every
    value a number; otherwise :class:`~harness.errors.LogParseError` names the line and ``expected``
    (the format, as the tool prints it). A line that is the start of a layout is said to be cut.
    """

    def refuse(problem: str) -> LogParseError:
        return LogParseError(path, lineno, f"{problem} in an operation line: expected {expected}")

    values: dict[str, float] = {}
    order: list[str] = []
    for part in body.strip().split(", "):
        m = _FIELD.match(part.strip())
        if m is None:
            raise refuse(f"{part.strip()!r} is not 'Key: value'")
        key, raw = m["key"].strip(), m["value"]
        if key not in keys:
            raise refuse(f"unknown figure {key!r}")
        field, factor = keys[key]
        if field in values:
            raise refuse(f"{key!r} printed twice")
        if not _NUMBER.match(raw):
            raise refuse(f"{key} {raw!r} is not a number")
        values[field] = float(raw) * factor
        order.append(key)
    if tuple(order) not in layouts:
        longer = [layout for layout in layouts if layout[: len(order)] == tuple(order)]
        if longer:
            raise refuse(f"the line is cut: {longer[0][len(order)]} missing after {order[-1]}")
        raise refuse(f"figures {', '.join(order)}: not in the order any version printed them")
    count = values["count"]
    if count != int(count) or count < 0:
        raise refuse(f"Count {count!r} is not a whole number")
    return OpLine(
        lineno=lineno,
        name=name,
        takes_s=values["takes_s"],
        count=int(count),
        rate_per_s=values["rate_per_s"],
        sum_ms=values.get("sum_ms"),
        avg_ms=values.get("avg_ms"),
        min_ms=values.get("min_ms"),
        max_ms=values.get("max_ms"),
        p50_ms=values.get("p50_ms"),
        p90_ms=values.get("p90_ms"),
        p95_ms=values.get("p95_ms"),
        p99_ms=values.get("p99_ms"),
        p999_ms=values.get("p999_ms"),
        p9999_ms=values.get("p9999_ms"),
        printed=body.strip(),
    )


def split_reports(lines: Sequence[OpLine], sort_key: Callable[[str], str]) -> tuple[tuple[OpLine, ...], ...]:
    """Cut consecutive operation lines into reports: a report's names rise in ``sort_key`` order.

    A name that does not sort after the one before starts a new report. (Exact for go-ycsb, whose
    every report repeats every operation seen so far; for go-tpc's ``[Current]`` reports, two reports
    that share no operation and follow in order would be read as one, which a TPC-C mix, with
    NEW_ORDER and PAYMENT in every interval, does not produce.)
    """
    reports: list[list[OpLine]] = []
    previous: str | None = None
    for line in lines:
        key = sort_key(line.name)
        if previous is None or key <= previous:
            reports.append([])
        reports[-1].append(line)
        previous = key
    return tuple(tuple(r) for r in reports)


def interval_counts(report: Sequence[OpLine], before: Sequence[OpLine]) -> tuple[OpLine, ...]:
    """A cumulative report (go-ycsb's) minus the one before it: the counts of that interval only."""
    earlier = {line.name: line.count for line in before}
    return tuple(replace(line, count=max(0, line.count - earlier.get(line.name, 0))) for line in report)


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration_s(text: str) -> float | None:
    """Seconds in a Go ``time.Duration`` string (``1m0.0123s``, ``512.3ms``, ``2h0m0s``), or None."""
    text = text.strip()
    if text == "0s":
        return 0.0
    total = 0.0
    pos = 0
    for m in _DURATION_PART.finditer(text):
        if m.start() != pos:
            return None
        total += float(m[1]) * _UNIT_S[m[2]]
        pos = m.end()
    return total if pos == len(text) and pos > 0 and math.isfinite(total) else None


def json_rows(line: str) -> list[dict[str, str]] | None:
    """A line both tools print with ``--output json`` / ``outputstyle=json`` (``util.RenderJson``): a JSON
    array of objects, header -> value, every value a string (``json.Marshal`` sorts the keys). None
    for any other line."""
    if not line.startswith("[{"):
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, list) or not all(
        isinstance(row, dict) and all(isinstance(v, str) for v in row.values()) for row in data
    ):
        return None
    return data


def json_tool(rows: Sequence[Mapping[str, str]]) -> str:
    """Which tool printed these JSON rows, by their keys: go-tpc (``TPM``, ``Prefix``, ``tpmC``), go-ycsb (``OPS``)."""
    keys = set().union(*(row.keys() for row in rows)) if rows else set()
    if keys & {"TPM", "Prefix", "tpmC"}:
        return "go-tpc"
    if "OPS" in keys or "Operation" in keys:  # go-tpc's rows carry a Prefix besides
        return "go-ycsb"
    return "unknown"


def json_body(row: Mapping[str, str], layouts: Layouts, ignore: frozenset[str]) -> str | None:
    """The row's figures as the plain output prints them (``Key: value, ...`` in the layout's order), or
    None when its keys are not a layout the tool printed."""
    keys = set(row) - ignore
    for layout in layouts:
        if set(layout) == keys:
            return ", ".join(f"{key}: {row[key]}" for key in layout)
    return None
