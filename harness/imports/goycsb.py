"""Parser for the text output of ``go-ycsb load`` and ``go-ycsb run`` (github.com/pingcap/go-ycsb).

The formats, from go-ycsb's source (read at commit d383d2b, 2024-04, and its history):

* The properties block, ``cmd/go-ycsb/client.go`` ``runClientCommandFunc``::

      fmt.Println("***************** properties *****************")
      for key, value := range globalProps.Map() { fmt.Printf("\\"%s\\"=\\"%s\\"\\n", key, value) }
      fmt.Println("**********************************************")

  in map order; ``"command"="load"`` or ``"run"`` (since 2022-07) and ``"dotransactions"="false"``
  (load) or ``"true"`` (run) say the phase, ``"threadcount"`` the threads (1 when absent).
* Per-operation reports, ``pkg/measurement/histograms.go`` ``Output``:
  ``util.RenderString(w, "%-6s - %s\\n", header, lines)`` with ``pkg/measurement/measurement.go``'s
  ``header = []string{"Operation", "Takes(s)", "Count", "OPS", "Avg(us)", "Min(us)", "Max(us)",
  "50th(us)", "90th(us)", "95th(us)", "99th(us)", "99.9th(us)", "99.99th(us)"}`` and the values of
  ``pkg/measurement/histogram.go`` ``Summary()`` (``%.1f`` for Takes(s) and OPS, ``%d`` for the rest),
  joined ``header + ": " + value`` with ``", "`` (``pkg/util/output.go`` ``RenderString``): a line reads
  ``READ   - Takes(s): 10.0, Count: 49822, OPS: 4982.5, Avg(us): 391, Min(us): 148, ...``.
  The ``50th``/``90th``/``95th`` figures and the ``TOTAL`` operation (every successful operation)
  came in 2023-01 (commit fe11c47); before, ``Summary()`` wrote ``fmt.Sprintf("Takes(s): %.1f, ")`` ...
  ``"99.99th(us): %d"`` itself, and before 2019-09 ``... Max(us): %d, 95th(us): %d, 99th(us): %d``.
  Every version is read (:data:`YCSB_LAYOUTS`); a line whose keys stop short of one is cut, and refused.
* Failed operations, ``pkg/client/dbwrapper.go`` ``measure``: ``fmt.Sprintf("%s_ERROR", op)``.
  ``READ_MODIFY_WRITE`` (``pkg/workload/core.go``) is measured around its own READ and UPDATE,
  which are counted too.
* Periodic reports, ``pkg/client/client.go`` ``Run``: every ``measurement.interval`` seconds (default
  10, ``--interval``) after ``warmuptime``, the same lines (``measurement.Summary()``). The histograms
  are never reset: each report is cumulative since the first measured operation.
* The end of a phase, ``cmd/go-ycsb/client.go``: ``fmt.Println("****...")``,
  ``fmt.Printf("Run finished, takes %s\\n", time.Now().Sub(start))`` (a Go duration, ``1m0.0123s``),
  then ``measurement.Output()``: the final report, unless ``measurement.output_file`` sends it to a file.

``outputstyle=json`` (``util.RenderJson``: one JSON array per report, objects header -> value with
sorted keys, ``{"50th(us)": ..., "Operation": "READ", ...}``) is read like the plain lines; the table
style and go-tpc's output are refused, naming them.

Operation lines are cut into reports where their sorted order starts again
(:func:`harness.imports.oplines.split_reports`). A log may hold a load phase and a run phase one after
the other (each starts with its properties block). Rules as for every
:class:`~harness.imports.logformat.LogFormat`: foreign lines are ignored, a line that starts like
go-ycsb's must be complete, and a log without any report is refused at its first foreign line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from harness.errors import LogParseError
from harness.imports.logformat import LogFormat, Scan
from harness.imports.oplines import (
    KeyTable,
    Layouts,
    OpLine,
    go_duration_s,
    json_body,
    json_rows,
    json_tool,
    parse_fields,
    split_reports,
)

__all__ = ["YCSB_KEYS", "YCSB_LAYOUTS", "GoYcsbFormat", "GoYcsbLog", "YcsbPhase", "parse_go_ycsb_log"]

_US: Final = 1e-3
#: go-ycsb's headers, every version: printed key -> (OpLine field, factor to milliseconds)
YCSB_KEYS: Final[KeyTable] = {
    "Takes(s)": ("takes_s", 1.0),
    "Count": ("count", 1.0),
    "OPS": ("rate_per_s", 1.0),
    "Avg(us)": ("avg_ms", _US),
    "Min(us)": ("min_ms", _US),
    "Max(us)": ("max_ms", _US),
    "50th(us)": ("p50_ms", _US),
    "90th(us)": ("p90_ms", _US),
    "95th(us)": ("p95_ms", _US),
    "99th(us)": ("p99_ms", _US),
    "99.9th(us)": ("p999_ms", _US),
    "99.99th(us)": ("p9999_ms", _US),
}
#: The key sequences of go-ycsb's versions: now (since 2023-01), 2019-09 to 2023-01, before 2019-09.
YCSB_LAYOUTS: Final[Layouts] = (
    (
        "Takes(s)",
        "Count",
        "OPS",
        "Avg(us)",
        "Min(us)",
        "Max(us)",
        "50th(us)",
        "90th(us)",
        "95th(us)",
        "99th(us)",
        "99.9th(us)",
        "99.99th(us)",
    ),
    ("Takes(s)", "Count", "OPS", "Avg(us)", "Min(us)", "Max(us)", "99th(us)", "99.9th(us)", "99.99th(us)"),
    ("Takes(s)", "Count", "OPS", "Avg(us)", "Min(us)", "Max(us)", "95th(us)", "99th(us)"),
)
_FORMAT = (
    "'READ   - Takes(s): <s>, Count: <n>, OPS: <x>, Avg(us): <n>, Min(us): <n>, Max(us): <n>, "
    "50th(us): <n>, 90th(us): <n>, 95th(us): <n>, 99th(us): <n>, 99.9th(us): <n>, 99.99th(us): <n>'"
)
_PROPS_START = re.compile(r"^\*+ properties \*+$")
_STARS = re.compile(r"^\*{10,}$")
_PROPERTY = re.compile(r'^"(?P<key>[^"]*)"="(?P<value>.*)"$')
_OP_START = re.compile(r"^[A-Z][A-Z0-9_]*\s* - ")
_OP = re.compile(r"^(?P<name>[A-Z][A-Z0-9_]*)\s* - (?P<body>Takes\(s\): .*)$")
_FINISHED = re.compile(r"^Run finished, takes (?P<took>\S+)$")
_CSV = re.compile(r"^operation,timestamp_us,latency_us$")
_GO_TPC_LINE = re.compile(r"^(?:\[(?:Current|Summary)\] [A-Z]|tpmC: )")
_TABLE = re.compile(r"^\|\s+OPERATION\s+\|")
_KNOWN_PREFIXES: Final[tuple[str, ...]] = (
    "operation err:",
    "Got signal ",
    "Wait 10s for closed",
    "Exporting the full latency spectrum",
    "totalOpCount(",
)
Phase = Literal["load", "run"]


@dataclass(frozen=True)
class YcsbPhase:
    """One ``go-ycsb load`` or ``go-ycsb run`` in a log.

    ``reports`` are the periodic reports (cumulative); ``final`` the report after ``Run finished``
    (empty: the phase stopped before it, or ``measurement.output_file`` sent it elsewhere);
    ``wall_s`` what ``Run finished, takes`` says (warm-up included).
    """

    lineno: int
    properties: Mapping[str, str] = field(default_factory=dict)
    reports: tuple[tuple[OpLine, ...], ...] = ()
    final: tuple[OpLine, ...] = ()
    wall_s: float | None = None

    @property
    def command(self) -> Phase:
        said = self.properties.get("command")
        if said in ("load", "run"):
            return "run" if said == "run" else "load"
        return "load" if self.properties.get("dotransactions", "true").lower() == "false" else "run"

    @property
    def threads(self) -> int:
        raw = self.properties.get("threadcount", "1")
        return int(raw) if raw.isdigit() and int(raw) > 0 else 1

    @property
    def finished(self) -> bool:
        return self.wall_s is not None


@dataclass(frozen=True)
class GoYcsbLog:
    """Every phase of one go-ycsb log, in order."""

    path: str
    phases: tuple[YcsbPhase, ...]


@dataclass
class _Builder:
    """The phase being read (mutable while parsing; frozen into a :class:`YcsbPhase`)."""

    lineno: int
    properties: dict[str, str] = field(default_factory=dict)
    periodic: list[OpLine] = field(default_factory=list)
    final: list[OpLine] = field(default_factory=list)
    wall_s: float | None = None
    in_properties: bool = False

    def freeze(self, path: str) -> YcsbPhase:
        final = split_reports(self.final, str)
        if len(final) > 1:
            raise LogParseError(
                path, final[1][0].lineno, f"the report after 'Run finished' starts again at {final[1][0].name}"
            )
        return YcsbPhase(
            lineno=self.lineno,
            properties=dict(self.properties),
            reports=split_reports(self.periodic, str),
            final=final[0] if final else (),
            wall_s=self.wall_s,
        )


def _json_report(rows: list[dict[str, str]], path: str, lineno: int) -> list[OpLine]:
    """One ``outputstyle=json`` report line's operations."""
    if json_tool(rows) != "go-ycsb":
        said = "go-tpc output (--output json)" if json_tool(rows) == "go-tpc" else "a JSON line of unknown keys"
        raise LogParseError(path, lineno, f"{said}, not go-ycsb's: import go-tpc logs with 'dbperf import go-tpc'")
    out = []
    for row in rows:
        name = row.get("Operation", "")
        body = json_body(row, YCSB_LAYOUTS, frozenset({"Operation"}))
        if not _OP_START.match(f"{name} - ") or body is None:
            keys = ", ".join(sorted(set(row) - {"Operation"}))
            raise LogParseError(path, lineno, f"go-ycsb JSON {name!r} has the figures {keys}: no go-ycsb printed these")
        out.append(parse_fields(name, body, YCSB_KEYS, YCSB_LAYOUTS, lineno=lineno, path=path, expected=_FORMAT))
    return out


@dataclass(frozen=True)
class GoYcsbFormat(LogFormat[GoYcsbLog]):
    """go-ycsb's ``load`` / ``run`` output, one phase or several, plain or ``outputstyle=json``."""

    tool = "go-ycsb"
    expects = "go-ycsb output (a properties block and operation reports)"
    foreign = "not go-ycsb output: expected a '***** properties *****' block and 'READ   - Takes(s): ...' reports"
    stops_early = "log ends before any operation report (stopped before its first measurement.interval)"

    def cut(self, line: str) -> bool:
        return bool(_OP_START.match(line.strip()))

    def scan(self, lines: Sequence[str], text: str, path: str) -> Scan[GoYcsbLog]:
        phases: list[_Builder] = []
        first_foreign: int | None = None
        for lineno, line in enumerate(lines, 1):
            stripped = line.strip()
            phase = phases[-1] if phases else None
            if _PROPS_START.match(stripped):
                phases.append(_Builder(lineno=lineno, in_properties=True))
            elif phase is not None and phase.in_properties:
                if _STARS.match(stripped):
                    phase.in_properties = False
                elif (p := _PROPERTY.match(stripped)) is not None:
                    phase.properties[p["key"]] = p["value"]
                else:
                    raise LogParseError(
                        path, lineno, f'malformed go-ycsb property: expected \'"name"="value"\', found {stripped!r}'
                    )
            elif _OP_START.match(stripped):
                m = _OP.match(stripped)
                if m is None:
                    raise LogParseError(
                        path, lineno, f"malformed go-ycsb report line: expected {_FORMAT}, found {stripped!r}"
                    )
                op = parse_fields(
                    m["name"], m["body"], YCSB_KEYS, YCSB_LAYOUTS, lineno=lineno, path=path, expected=_FORMAT
                )
                # a log cut above its properties block
                phase = phase if phase is not None else _started(phases, lineno)
                (phase.final if phase.wall_s is not None else phase.periodic).append(op)
            elif stripped.startswith("Run finished"):
                f = _FINISHED.match(stripped)
                took = go_duration_s(f["took"]) if f else None
                if took is None:
                    raise LogParseError(
                        path,
                        lineno,
                        f"malformed line: expected 'Run finished, takes <Go duration>', found {stripped!r}",
                    )
                phase = phase if phase is not None else _started(phases, lineno)
                phase.wall_s = took
            elif (rows := json_rows(stripped)) is not None:
                phase = phase if phase is not None else _started(phases, lineno)
                (phase.final if phase.wall_s is not None else phase.periodic).extend(_json_report(rows, path, lineno))
            elif _CSV.match(stripped) or _TABLE.match(stripped):
                what = {"o": "measurementtype=csv/raw", "|": "outputstyle=table"}[stripped[0]]
                raise LogParseError(
                    path,
                    lineno,
                    f"go-ycsb {what} output is not read: import the histogram output in plain (default) or json style",
                )
            elif _GO_TPC_LINE.match(stripped):
                raise LogParseError(
                    path,
                    lineno,
                    f"go-tpc output, not go-ycsb's: import it with 'dbperf import go-tpc' ({stripped[:60]!r})",
                )
            elif (
                first_foreign is None
                and stripped
                and not _STARS.match(stripped)
                and not stripped.startswith(_KNOWN_PREFIXES)
            ):
                first_foreign = lineno

        def build() -> GoYcsbLog:
            return GoYcsbLog(
                path=path, phases=tuple(p.freeze(path) for p in phases if p.periodic or p.final or p.wall_s)
            )

        if phases and phases[-1].in_properties:
            raise LogParseError(path, len(lines), "the log ends inside a properties block: it is cut")
        return Scan(any(p.periodic or p.final for p in phases), first_foreign, build)


def _started(phases: list[_Builder], lineno: int) -> _Builder:
    """A phase begun without its properties block (a log cut above it)."""
    phases.append(_Builder(lineno=lineno))
    return phases[-1]


def parse_go_ycsb_log(text: str, path: str = "<string>") -> GoYcsbLog:
    """Parse one go-ycsb output (one or more ``load``/``run`` phases, stdout as written to a file).

    Raises :class:`~harness.errors.LogParseError` for a malformed operation line, properties block
    or ``Run finished`` line, for a log without any report, and for binary content (a NUL byte).
    """
    return GoYcsbFormat().parse(text, path)
