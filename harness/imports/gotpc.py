"""Parser for the text output of ``go-tpc tpcc run`` (github.com/pingcap/go-tpc, ``--output plain``).

The formats, from go-tpc's source (read at commit 682637f, 2025-11, and its history):

* Per-operation reports, ``tpcc/workload.go`` ``outputRtMeasurement``::

      util.RenderString("%s%-6s - %s\\n", []string{"Prefix", "Operation", "Takes(s)", "Count", "TPM",
          "Sum(ms)", "Avg(ms)", "50th(ms)", "90th(ms)", "95th(ms)", "99th(ms)", "99.9th(ms)", "Max(ms)"}, lines)

  with the values of ``pkg/measurement/hist.go`` ``Summary()`` (``util.FloatToOneString`` is
  ``fmt.Sprintf("%.1f", f)``, the count ``%d``), and ``pkg/util/output.go`` ``RenderString`` joining
  ``header + ": " + value`` with ``", "``. So a line reads
  ``[Summary] NEW_ORDER - Takes(s): 600.0, Count: 60212, TPM: 6021.2, Sum(ms): ..., Max(ms): 512.0``.
  Until 2022-08 (commit 062d2d7) ``hist.go`` built the same text with ``fmt.Sprintf("Takes(s): %.1f, ")``
  and friends; until 2020-11 (commit 79c4a25) it printed ``Takes(s): %.1f, Count: %d, TPM: %.1f,
  Sum(ms): %d, Avg(ms): %d, 90th(ms): %d, 99th(ms): %d, 99.9th(ms): %d`` (``95th`` instead of ``90th``
  before that). Every one of these is read (:data:`TPC_LAYOUTS`); a line whose keys stop short of a
  layout is cut, and refused.
* The prefix, ``pkg/measurement/measure.go`` ``Output``: ``"[Current] "`` for the periodic reports
  (every ``--interval``, default 10s, from a histogram reset at each report) and ``"[Summary] "`` for
  the final one (from the start of the measured run).
* Failed transactions, ``pkg/measurement/measure.go`` ``getHist``: ``fmt.Sprintf("%s_ERR", op)``, a
  histogram beside each operation's, printed like it (``[Summary] NEW_ORDER_ERR - Takes(s): ...``)
  when not empty.
* The headline, ``tpcc/workload.go`` ``OutputStats``: ``"tpmC: %s, tpmTotal: %s, efficiency: %s\\n"``
  (since 2022-09, commit 631097e; efficiency is ``FloatToOneString(efc) + "%"``), before that
  ``"tpmC: %.1f, efficiency: %.1f%%\\n"`` (2020-11) and ``"tpmC: %.1f\\n"``. ``tpmC`` is the
  NEW_ORDER rate per minute; dbperf calls it NOPM, "tpmC-like (unaudited)": it is not an audited tpmC.
* ``cmd/go-tpc/tpcc.go`` prints ``Finished`` before the summary; ``--wait`` adds think-time lines
  ``[Current] KEYINGTIME-NEW_ORDER - 18.0s`` (``outputWaitTimesMeasurement``), which carry nothing kept.

Rules, as for every :class:`~harness.imports.logformat.LogFormat`: lines that are not go-tpc's are
ignored, but a line that starts like a report (``[Current] ``, ``[Summary] ``, ``tpmC:``) must be
complete, or :class:`~harness.errors.LogParseError` names it; a log with no report at all is refused at
its first line that is not go-tpc's. ``--output json`` (``util.RenderJson``: one JSON array per report, each
object header -> value with its keys sorted, ``{"Prefix": "[Summary] ", "Operation": "NEW_ORDER",
"Takes(s)": ...}``, and ``{"tpmC": ..., "tpmTotal": ..., "efficiency": "..%"}``) is read like the plain
lines; ``--output table`` is refused with that reason, and so is go-ycsb's output, naming it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from harness.errors import LogParseError
from harness.imports.logformat import LogFormat, Scan
from harness.imports.oplines import (
    GO_NUMBER,
    KeyTable,
    Layouts,
    OpLine,
    json_body,
    json_rows,
    json_tool,
    parse_fields,
    split_reports,
)

__all__ = ["TPC_KEYS", "TPC_LAYOUTS", "GoTpcFormat", "GoTpcLog", "parse_go_tpc_log", "tpc_sort_key"]

#: go-tpc's headers, every version: printed key -> (OpLine field, factor to milliseconds or per second)
TPC_KEYS: Final[KeyTable] = {
    "Takes(s)": ("takes_s", 1.0),
    "Count": ("count", 1.0),
    "TPM": ("rate_per_s", 1 / 60),
    "Sum(ms)": ("sum_ms", 1.0),
    "Avg(ms)": ("avg_ms", 1.0),
    "50th(ms)": ("p50_ms", 1.0),
    "90th(ms)": ("p90_ms", 1.0),
    "95th(ms)": ("p95_ms", 1.0),
    "99th(ms)": ("p99_ms", 1.0),
    "99.9th(ms)": ("p999_ms", 1.0),
    "Max(ms)": ("max_ms", 1.0),
}
#: The key sequences of go-tpc's versions: now (since 2020-11), until 2020-11, until 2020-03 or so.
TPC_LAYOUTS: Final[Layouts] = (
    (
        "Takes(s)",
        "Count",
        "TPM",
        "Sum(ms)",
        "Avg(ms)",
        "50th(ms)",
        "90th(ms)",
        "95th(ms)",
        "99th(ms)",
        "99.9th(ms)",
        "Max(ms)",
    ),
    ("Takes(s)", "Count", "TPM", "Sum(ms)", "Avg(ms)", "90th(ms)", "99th(ms)", "99.9th(ms)"),
    ("Takes(s)", "Count", "TPM", "Sum(ms)", "Avg(ms)", "95th(ms)", "99th(ms)", "99.9th(ms)"),
)
_FORMAT = (
    "'[Summary] NEW_ORDER - Takes(s): <s>, Count: <n>, TPM: <x>, Sum(ms): <x>, Avg(ms): <x>, "
    "50th(ms): <x>, 90th(ms): <x>, 95th(ms): <x>, 99th(ms): <x>, 99.9th(ms): <x>, Max(ms): <x>'"
)
_REPORT = re.compile(r"^\[(?P<kind>Current|Summary)\] (?P<name>[A-Za-z0-9_.-]+)\s* - (?P<body>.*)$")
_OP_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_REPORT_START = re.compile(r"^\[(?:Current|Summary)\] ")
_WAIT = re.compile(r"^\d+(?:\.\d+)?s$")  # --wait: the average keying/thinking time
_TPMC = re.compile(
    rf"^tpmC: (?P<tpmc>{GO_NUMBER})(?:, tpmTotal: (?P<total>{GO_NUMBER}))?"
    rf"(?:, efficiency: (?P<eff>{GO_NUMBER})%)?$"
)
_TPMC_FORMAT = "'tpmC: <x>, tpmTotal: <x>, efficiency: <x>%' (tpmTotal and efficiency in newer go-tpc only)"
_YCSB_LINE = re.compile(r"^(?:\*+ properties \*+|[A-Z][A-Z0-9_]*\s* - Takes\(s\): .*OPS: .*)$")
_TABLE = re.compile(r"^\|\s+(?:PREFIX|TPMC)\s+\|")
_KNOWN_PREFIXES: Final[tuple[str, ...]] = (
    "Finished",
    "load to ",
    "creating table ",
    "creating index ",
    "creating foreign key ",
    "begin to check ",
    "check prepare failed",
    "Skip preparing checking",
    "DROP TABLE IF EXISTS ",
    "execute ",
    "prepare statement error",
    "Got signal ",
    "Wait 10s for closed",
    "Auto-setting connection",
    "Failed to ",
    "+-",
)
_TIMESTAMPED = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] ")  # worker messages: failures, timeouts


@dataclass(frozen=True)
class GoTpcLog:
    """Everything dbperf reads from one go-tpc TPC-C log.

    ``intervals`` holds the ``[Current]`` reports in order (each one interval's transactions only);
    ``summary`` the ``[Summary]`` report (empty: the run stopped before it); the headline figures
    are None when the log has no ``tpmC:`` line (or an older go-tpc did not print them).
    """

    path: str
    intervals: tuple[tuple[OpLine, ...], ...]
    summary: tuple[OpLine, ...]
    tpmc: float | None
    tpm_total: float | None
    efficiency_pct: float | None
    failures: tuple[str, ...] = ()  # "execute run failed, err ..." messages, as printed (the first few)

    @property
    def finished(self) -> bool:
        return bool(self.summary)


def tpc_sort_key(name: str) -> str:
    """The map key go-tpc sorted the printed (upper-cased) name by: ``new_order``, ``new_order_ERR``."""
    if name.endswith("_ERR"):
        return name[: -len("_ERR")].lower() + "_ERR"
    return name.lower()


@dataclass(frozen=True)
class GoTpcFormat(LogFormat[GoTpcLog]):
    """go-tpc's ``tpcc run`` output, plain or ``--output json``."""

    tool = "go-tpc"
    expects = "go-tpc output ('[Current] NEW_ORDER - Takes(s): ...' lines)"
    foreign = (
        "not go-tpc TPC-C output: expected '[Current] NEW_ORDER - Takes(s): ...' reports, "
        "'[Summary] ...' lines and 'tpmC: ...'"
    )
    stops_early = (
        "log ends before any '[Current]' or '[Summary]' report (a prepare or check log, or a run "
        "stopped before its first --interval)"
    )

    def cut(self, line: str) -> bool:
        return bool(_REPORT_START.match(line)) or line.startswith("tpmC")

    def scan(self, lines: Sequence[str], text: str, path: str) -> Scan[GoTpcLog]:
        current: list[OpLine] = []
        summary: list[OpLine] = []
        tpmc = total = efficiency = None
        failures: list[str] = []
        first_foreign: int | None = None
        for lineno, line in enumerate(lines, 1):
            stripped = line.strip()
            if _REPORT_START.match(stripped):
                m = _REPORT.match(stripped)
                if m is None:
                    raise LogParseError(
                        path, lineno, f"malformed go-tpc report line: expected {_FORMAT}, found {stripped!r}"
                    )
                if _WAIT.match(m["body"].strip()):
                    continue
                if not _OP_NAME.match(m["name"]):
                    raise LogParseError(
                        path, lineno, f"operation {m['name']!r} is not an upper-case go-tpc name (NEW_ORDER)"
                    )
                op = parse_fields(
                    m["name"], m["body"], TPC_KEYS, TPC_LAYOUTS, lineno=lineno, path=path, expected=_FORMAT
                )
                (summary if m["kind"] == "Summary" else current).append(op)
            elif stripped.startswith("tpmC:"):
                t = _TPMC.match(stripped)
                if t is None:
                    raise LogParseError(
                        path, lineno, f"malformed tpmC line: expected {_TPMC_FORMAT}, found {stripped!r}"
                    )
                tpmc = float(t["tpmc"])
                total = float(t["total"]) if t["total"] else None
                efficiency = float(t["eff"]) if t["eff"] else None
            elif (rows := json_rows(stripped)) is not None:
                headline = _json_report(rows, path, lineno, current, summary)
                if headline is not None:
                    tpmc, total, efficiency = headline
            elif _TABLE.match(stripped):
                raise LogParseError(
                    path,
                    lineno,
                    "go-tpc --output table is not read: import --output plain (the default) or --output json",
                )
            elif _YCSB_LINE.match(stripped):
                raise LogParseError(
                    path,
                    lineno,
                    f"go-ycsb output, not go-tpc's: import it with 'dbperf import go-ycsb' ({stripped[:40]!r})",
                )
            elif "execute run failed" in stripped:
                if len(failures) < 5:
                    failures.append(stripped)
            elif first_foreign is None and stripped and not _known(stripped):
                first_foreign = lineno

        def build() -> GoTpcLog:
            if tpmc is not None and not summary:
                raise LogParseError(path, len(lines), "the log has a tpmC line but no '[Summary]' report: it is cut")
            return GoTpcLog(
                path=path,
                intervals=split_reports(current, tpc_sort_key),
                summary=_one_report(summary, path),
                tpmc=tpmc,
                tpm_total=total,
                efficiency_pct=efficiency,
                failures=tuple(failures),
            )

        return Scan(bool(current or summary), first_foreign, build)


def parse_go_tpc_log(text: str, path: str = "<string>") -> GoTpcLog:
    """Parse one ``go-tpc tpcc run`` output (stdout, as written to a log file).

    ``path`` only names the log in errors. Raises :class:`~harness.errors.LogParseError` for a
    malformed report or headline line, and for a log without any report.
    """
    return GoTpcFormat().parse(text, path)


_HEADLINE = tuple[float, float | None, float | None]


def _json_report(
    rows: list[dict[str, str]], path: str, lineno: int, current: list[OpLine], summary: list[OpLine]
) -> _HEADLINE | None:
    """Read one ``--output json`` line into ``current`` / ``summary``; the tpmC line's figures, if it is one."""
    if json_tool(rows) != "go-tpc":
        said = "go-ycsb output (outputstyle=json)" if json_tool(rows) == "go-ycsb" else "a JSON line of unknown keys"
        raise LogParseError(path, lineno, f"{said}, not go-tpc's: import go-ycsb logs with 'dbperf import go-ycsb'")
    headline: _HEADLINE | None = None
    for row in rows:
        if "tpmC" in row:
            text = ", ".join(f"{k}: {row[k]}" for k in ("tpmC", "tpmTotal", "efficiency") if k in row)
            t = _TPMC.match(text)
            if t is None:
                raise LogParseError(path, lineno, f"malformed go-tpc JSON tpmC object: expected {_TPMC_FORMAT}: {row}")
            total, eff = t["total"], t["eff"]
            headline = (float(t["tpmc"]), float(total) if total else None, float(eff) if eff else None)
            continue
        prefix, name = row.get("Prefix", "").strip(), row.get("Operation", "")
        if prefix not in ("[Current]", "[Summary]") or not _OP_NAME.match(name):
            raise LogParseError(
                path, lineno, f"go-tpc JSON object without a '[Current]'/'[Summary]' Prefix and an Operation: {row}"
            )
        if "Takes(s)" not in row:
            continue  # --wait's keying and thinking times ({"Avg(s)": ...}): nothing kept
        body = json_body(row, TPC_LAYOUTS, frozenset({"Prefix", "Operation"}))
        if body is None:
            keys = ", ".join(sorted(set(row) - {"Prefix", "Operation"}))
            raise LogParseError(path, lineno, f"go-tpc JSON {name} has the figures {keys}: no go-tpc printed these")
        op = parse_fields(name, body, TPC_KEYS, TPC_LAYOUTS, lineno=lineno, path=path, expected=_FORMAT)
        (summary if prefix == "[Summary]" else current).append(op)
    return headline


def _known(line: str) -> bool:
    return line.startswith(_KNOWN_PREFIXES) or bool(_TIMESTAMPED.match(line))


def _one_report(lines: list[OpLine], path: str) -> tuple[OpLine, ...]:
    reports = split_reports(lines, tpc_sort_key)
    if len(reports) > 1:
        second = reports[1][0]
        raise LogParseError(
            path,
            second.lineno,
            f"a second '[Summary]' report starts here ({second.name}): import one go-tpc run per file",
        )
    return reports[0] if reports else ()
