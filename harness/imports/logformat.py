"""One interface for every client log dbperf imports, and the one skeleton that refuses what is not one.

sysbench's text output (:mod:`harness.imports.textlog`), go-tpc's (:mod:`harness.imports.gotpc`) and
go-ycsb's (:mod:`harness.imports.goycsb`) are each a :class:`LogFormat`: the format reads the lines it
knows (:meth:`LogFormat.scan`), and :meth:`LogFormat.parse` holds what all of them refuse, the same way,
with a :class:`~harness.errors.LogParseError` naming the file and line:

* binary content (a NUL byte: a binary given by mistake, or a log a crash padded with NULs);
* an empty log;
* a last line that starts like one of the tool's reports but has no line end (the log is cut);
* a log without any report: at its first line that is not the tool's (:attr:`LogFormat.foreign`), or,
  when every line is the tool's, at its last line (:attr:`LogFormat.stops_early`).

A line that starts like one of the tool's but is malformed is the format's own to refuse, in its words.
:func:`read_logs` reads and parses every file of an import before any run is built, so one bad file
stores nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from harness.errors import LogParseError

LogT = TypeVar("LogT")


@dataclass(frozen=True)
class Scan(Generic[LogT]):
    """What a format's pass over a log's lines found.

    ``reported``: the log holds at least one of the tool's reports; ``first_foreign``: the number of
    its first line that is not the tool's (None: every line is); ``build``: the log, checked whole,
    called once the skeleton's own checks have passed.
    """

    reported: bool
    first_foreign: int | None
    build: Callable[[], LogT]


class LogFormat(ABC, Generic[LogT]):
    """One tool's log format. Subclasses say what the tool prints; :meth:`parse` is the same for all."""

    #: The tool, as errors name it.
    tool: ClassVar[str]
    #: What an empty log should have held: ``empty log: expected <expects>``.
    expects: ClassVar[str]
    #: What a log without any report is not, and what it should hold: ``<foreign>, found '<line>'``.
    foreign: ClassVar[str]
    #: Why a log of the tool's own lines holds no report (said at its last line).
    stops_early: ClassVar[str]

    @abstractmethod
    def scan(self, lines: Sequence[str], text: str, path: str) -> Scan[LogT]:
        """Read every line the tool prints, refusing one that starts like the tool's but is malformed."""

    def cut(self, line: str) -> bool:
        """Whether ``line``, the last of a log without a final line end, starts like a report (it is cut)."""
        return False

    def parse(self, text: str, path: str = "<string>") -> LogT:
        """The log in ``text``; ``path`` only names it in errors (:class:`~harness.errors.LogParseError`)."""
        nul = text.find("\x00")
        if nul >= 0:  # the tools write text; NULs are a binary file, or a log cut and padded by a crash
            offset = len(text[:nul].encode("utf-8", errors="replace"))
            raise LogParseError(
                path,
                text.count("\n", 0, nul) + 1,
                f"binary content: a NUL byte at offset {offset}; "
                f"give the text file {self.tool}'s output was written to",
            )
        lines = text.splitlines()
        if not any(line.strip() for line in lines):
            raise LogParseError(path, 1, f"empty log: expected {self.expects}")
        scan = self.scan(lines, text, path)
        if lines and not text.endswith("\n") and self.cut(lines[-1]):
            raise LogParseError(path, len(lines), "the log ends in the middle of this line: it is cut")
        if not scan.reported:
            if scan.first_foreign is not None:
                found = lines[scan.first_foreign - 1].strip()
                raise LogParseError(path, scan.first_foreign, f"{self.foreign}, found {found!r}")
            last = max(n for n, line in enumerate(lines, 1) if line.strip())
            raise LogParseError(path, last, self.stops_early)
        return scan.build()


@dataclass(frozen=True)
class ReadLog(Generic[LogT]):
    """One file of an import: its name, its text (a run's id is its content's hash) and the log in it."""

    path: str
    text: str
    log: LogT


def read_logs(fmt: LogFormat[LogT], paths: Sequence[Path]) -> list[ReadLog[LogT]]:
    """Every file read and parsed, in order, before any run is built: one bad file stores nothing."""
    out = []
    for path in paths:
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise LogParseError(str(path), 0, f"cannot read the file ({exc.strerror})") from exc
        out.append(ReadLog(str(path), text, fmt.parse(text, str(path))))
    return out
