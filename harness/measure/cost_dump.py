"""Reading callgrind dump files: the total instructions and where they went, function by function.

The format (valgrind's "Callgrind Format Specification", version 1) in the parts that matter here:

* name compression: ``fn=(12) name`` defines id 12 and a later ``fn=(12)`` refers to it; objects
  (``ob``/``cob``), files (``fl``/``fi``/``fe``/``cfi``/``cfl``) and functions (``fn``/``cfn``) have
  separate id spaces;
* ``fn=`` switches the current function; ``fi=``/``fe=`` switch the file of the following cost lines
  (inlined code) but not the function;
* ``calls=COUNT TARGET`` is followed by exactly one cost line: the call site's position, then the
  *inclusive* cost of those calls. That line is never the caller's self cost;
* a cost line is ``positions`` columns (``positions:`` in the header; ``line`` by default) and then
  the event counts, missing trailing counts being 0;
* ``totals:`` closes the dump and ``summary:`` heads it; they differ by a constant per dump, so dbperf
  uses ``totals:`` alone.

Why not ``callgrind_annotate``: after ``callgrind_control -z`` the functions on the stack at the reset
have ``calls=0`` edges, and ``--inclusive=no`` books their callees' cost as the caller's self cost
(FACTS.md). Here self cost is only what a function's own cost lines say, checked against a
hand-computed dump in ``tests/data/callgrind/``.
"""

from __future__ import annotations

import gzip
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.errors import SysbenchError
from harness.model import CostProfile, FunctionCost

_COMPRESSED = re.compile(r"^\((\d+)\)(?:\s(.*))?$")
_SPACE = {
    "ob": "ob",
    "cob": "ob",
    "fl": "fl",
    "fi": "fl",
    "fe": "fl",
    "cfi": "fl",
    "cfl": "fl",
    "fn": "fn",
    "cfn": "fn",
}


@dataclass
class _Function:
    self_ir: int = 0
    outgoing: int = 0  # inclusive cost of the calls made from this function's body
    calls: int = 0  # calls into this function


class _Parser:
    """One pass over a dump (first event, Ir, only)."""

    def __init__(self) -> None:
        self.names: dict[str, dict[str, str]] = {"ob": {}, "fl": {}, "fn": {}}
        self.functions: dict[str, _Function] = defaultdict(_Function)
        self.positions = 1
        self.function = "???"
        self.callee: str | None = None
        self.in_call = False
        self.totals: int | None = None
        self.summary: int | None = None

    def resolve(self, kind: str, value: str) -> str:
        match = _COMPRESSED.match(value)
        if not match:
            return value
        table = self.names[_SPACE[kind]]
        if match.group(2) is not None:
            table[match.group(1)] = match.group(2)
            return match.group(2)
        return table.get(match.group(1), f"({match.group(1)})")

    def cost(self, line: str) -> None:
        fields = line.split()
        values = fields[self.positions :]
        ir = int(values[0]) if values else 0
        if self.in_call:
            self.functions[self.function].outgoing += ir
            self.in_call = False
            self.callee = None
        else:
            self.functions[self.function].self_ir += ir

    def line(self, line: str) -> None:
        first = line[0]
        if first.isdigit() or first in "+-*":
            self.cost(line)
            return
        key, eq, value = line.partition("=")
        if eq and key in _SPACE:
            name = self.resolve(key, value)
            if key == "fn":
                self.function = name
                self.callee = None
            elif key == "cfn":
                self.callee = name
            return
        if eq and key == "calls":
            self.in_call = True
            if self.callee is not None:
                self.functions[self.callee].calls += int(value.split()[0])
            return
        if eq and key in ("jump", "jcnd"):
            return
        key, colon, value = line.partition(":")
        if not colon:
            return
        if key == "positions":
            self.positions = len(value.split())
        elif key == "totals":
            self.totals = int(value.split()[0])
        elif key == "summary":
            self.summary = int(value.split()[0])


def parse_dump(text: str) -> CostProfile:
    """The total instructions of a dump (its ``totals:`` line) and every function's self and inclusive cost."""
    parser = _Parser()
    for raw in text.splitlines():
        line = raw.rstrip()
        if line and line[0] != "#":
            parser.line(line)
    if parser.totals is None:
        raise SysbenchError(
            "the callgrind dump has no 'totals:' line: it was cut short; run the cost measurement again"
        )
    functions = tuple(
        sorted(
            (
                FunctionCost(name, f.self_ir, f.self_ir + f.outgoing, f.calls)
                for name, f in parser.functions.items()
                if f.self_ir or f.outgoing
            ),
            key=lambda f: (-f.self_ir, f.name),
        )
    )
    return CostProfile(total_ir=parser.totals, functions=functions)


#: Free space under which a cut-short dump is blamed on a full disk.
FULL_DISK_BYTES = 1 << 20


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def read_dump(path: Path) -> CostProfile:
    """Parse a dump file (plain or gzipped) and keep its gzipped text in the profile."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SysbenchError(f"cannot read the callgrind dump {path}: {exc.strerror}") from exc
    if raw[:2] == b"\x1f\x8b":
        packed, text = raw, gzip.decompress(raw).decode("utf-8", errors="replace")
    else:
        packed, text = gzip.compress(raw, compresslevel=6), raw.decode("utf-8", errors="replace")
    try:
        profile = parse_dump(text)
    except SysbenchError:
        free = _free_bytes(path.parent)
        if free is not None and free < FULL_DISK_BYTES:  # valgrind says nothing when it cannot write the dump
            raise SysbenchError(
                f"the callgrind dump {path} was cut short: No space left on device ({free // 1024} kB free "
                "there); free space, or point TMPDIR (server data folders, sysbench's and callgrind's files) "
                "at a disk with room"
            ) from None
        raise
    return CostProfile(total_ir=profile.total_ir, functions=profile.functions, dump=packed)
