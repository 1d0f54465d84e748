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
  uses ``totals:`` alone;
* ``events:`` names the columns of every cost line; dbperf keeps ``Ir`` first and, when the server was
  started with ``--collect-systime=yes`` (``events: Ir sysCount sysTime``), reads ``sysCount``: the
  system calls made inside the collected code, booked as self cost to the libc function that made them
  (``fdatasync``, ``pwrite64``, ``__libc_recv``...). :func:`syscall_kind` groups those names by kind.
  With ``--cache-sim=yes`` it also counts a simulated cache's misses (:data:`CACHE_EVENTS`); dbperf reads
  their totals for the window.

Functions a stripped binary does not name come as addresses (``fn=(7) 0x0000000000de0b60``). With the
server's binaries at hand (this machine's, or a container image's), :func:`name_by_extent` renames each after the
function its unwind table says holds it: ``[mariadbd, 524 bytes]`` (:mod:`harness.servers.unwind`),
a name the same code keeps at another address in another build; functions of one size in one binary
share it.

Why not ``callgrind_annotate``: after ``callgrind_control -z`` the functions on the stack at the reset
have ``calls=0`` edges, and ``--inclusive=no`` books their callees' cost as the caller's self cost
(docs/method.md, "Cost mode"). Here self cost is only what a function's own cost lines say, checked against a
hand-computed dump in ``tests/data/callgrind/``.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import shutil
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import SysbenchError
from harness.model import CostProfile, FunctionCost
from harness.model.flame_graph import CallGraph
from harness.servers.unwind import Extents, function_extents

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


#: System call kinds, from the name of the libc function that made the call (after the prefixes
#: ``__libc_``, ``__GI_``, ``__`` and suffixes such as ``_nocancel`` are taken off). Anything else is "other".
SYSCALL_KINDS: tuple[str, ...] = ("fsync", "pwrite", "pread", "net", "futex", "clock", "other")
_KIND_NAMES: dict[str, str] = {
    **dict.fromkeys(("fsync", "fdatasync", "sync_file_range", "syncfs"), "fsync"),
    **dict.fromkeys(("pwrite", "pwrite64", "pwritev", "pwritev2", "pwritev64"), "pwrite"),
    **dict.fromkeys(("pread", "pread64", "preadv", "preadv2", "preadv64"), "pread"),
    **dict.fromkeys(("send", "sendto", "sendmsg", "recv", "recvfrom", "recvmsg", "poll", "ppoll"), "net"),
    **dict.fromkeys(("futex", "futex_wait", "futex_wake", "syscall"), "futex"),
    **dict.fromkeys(("clock_gettime", "clock_gettime64", "gettimeofday", "time", "time_syscall"), "clock"),
}
_PREFIXES = re.compile(r"^(?:__libc_|__GI_|__)+")
_SUFFIXES = re.compile(r"(?:_nocancel|_syscall|@@?GLIBC\S*|\(.*)$")
#: The simulated caches' miss events dbperf keeps (window totals): level-1 instruction reads, data reads and
#: writes, and the last level's of each.
CACHE_EVENTS: tuple[str, ...] = ("I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
#: glibc 2.41+ makes every cancellable system call (send, recv, pread, pwrite, fdatasync, futex waits, ...)
#: through these trampolines, so the call is booked to them; dbperf books it to the function that called
#: the first trampoline instead (the wrapper whose name says what the call was).
TRAMPOLINES = frozenset(("__syscall_cancel", "__internal_syscall_cancel", "__syscall_cancel_arch"))


def syscall_kind(function: str) -> str:
    """The kind of system call a function that made one stands for (``fsync``, ``net``, ... or ``other``).

    ``pthread_*``, ``lll_*`` and ``futex*`` functions (mutexes, condition variables) are ``futex``.
    """
    name = _SUFFIXES.sub("", _PREFIXES.sub("", function.strip()))
    if name in _KIND_NAMES:
        return _KIND_NAMES[name]
    if name.startswith(("pthread_", "lll_", "futex", "___pthread")) or "futex" in name:
        return "futex"
    return "other"


@dataclass
class _Function:
    self_ir: int = 0
    outgoing: int = 0  # inclusive cost of the calls made from this function's body
    calls: int = 0  # calls into this function
    sys_count: int = 0  # system calls made in the function's own body (--collect-systime)


class _Parser:
    """One pass over a dump: Ir (the first event) and, when collected, sysCount."""

    def __init__(self) -> None:
        self.names: dict[str, dict[str, str]] = {"ob": {}, "fl": {}, "fn": {}}
        self.functions: dict[str, _Function] = defaultdict(_Function)
        self.positions = 1
        self.function = "???"
        self.callee: str | None = None
        self.in_call = False
        self.totals: int | None = None
        self.summary: int | None = None
        self.sys_column: int | None = None  # index of sysCount among the events, when collected
        self.sys_totals: int | None = None
        self.event_names: list[str] = []
        self.cache_totals: dict[str, int] = {}  # the window's simulated cache misses, when collected
        #: system calls made under a trampoline (inclusive), by the function that called into it
        self.trampoline_calls: dict[str, int] = defaultdict(int)
        #: caller → callee → inclusive Ir of those calls (the call graph, :func:`call_graph`)
        self.edges: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

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
        column = self.sys_column
        if self.in_call:
            self.functions[self.function].outgoing += ir
            if self.callee is not None and ir:
                self.edges[self.function][self.callee] += ir
            if column is not None and self.callee in TRAMPOLINES and len(values) > column:
                self.trampoline_calls[self.function] += int(values[column])
            self.in_call = False
            self.callee = None
            return
        function = self.functions[self.function]
        function.self_ir += ir
        if column is not None and len(values) > column:
            function.sys_count += int(values[column])

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
        elif key == "events":
            self.events(value.split())
        elif key == "totals":
            self.totals = int(value.split()[0])
            column = self.sys_column
            if column is not None:
                counts = value.split()
                self.sys_totals = int(counts[column]) if len(counts) > column else 0
            counts = value.split()
            self.cache_totals = {
                name: int(counts[i]) if i < len(counts) else 0
                for i, name in enumerate(self.event_names)
                if name in CACHE_EVENTS
            }
        elif key == "summary":
            self.summary = int(value.split()[0])

    def events(self, names: list[str]) -> None:
        if not names or names[0] != "Ir":
            raise SysbenchError(
                f"the callgrind dump counts {' '.join(names) or 'no events'}, not Ir first: it was not written "
                "by dbperf's callgrind recipe; run the cost measurement again"
            )
        self.sys_column = names.index("sysCount") if "sysCount" in names else None
        self.event_names = names


def _syscalls(parser: _Parser) -> dict[str, int]:
    """System calls by kind (every kind, zeros included) and their ``total``; {} when not collected."""
    if parser.sys_column is None:
        return {}
    kinds = dict.fromkeys(SYSCALL_KINDS, 0)
    in_trampolines = 0
    for name, function in parser.functions.items():
        if name in TRAMPOLINES:
            in_trampolines += function.sys_count
        elif function.sys_count:
            kinds[syscall_kind(name)] += function.sys_count
    for caller, count in parser.trampoline_calls.items():
        if caller not in TRAMPOLINES:
            kinds[syscall_kind(caller)] += count
            in_trampolines -= count
    kinds["other"] += in_trampolines  # calls whose caller the dump does not show (on the stack at the reset)
    total = sum(kinds.values())
    if parser.sys_totals is not None and parser.sys_totals != total:
        raise SysbenchError(
            f"the callgrind dump's system calls do not add up (functions {total}, totals {parser.sys_totals}): "
            "the dump is damaged; run the cost measurement again"
        )
    return {**kinds, "total": total}


def _parsed(text: str) -> _Parser:
    parser = _Parser()
    for raw in text.splitlines():
        line = raw.rstrip()
        if line and line[0] != "#":
            parser.line(line)
    if parser.totals is None:
        raise SysbenchError(
            "the callgrind dump has no 'totals:' line: it was cut short; run the cost measurement again"
        )
    return parser


def call_graph(dump: bytes) -> CallGraph:
    """The call graph of a stored dump (gzipped or plain): self Ir per function, inclusive Ir per call edge."""
    raw = gzip.decompress(dump) if dump[:2] == b"\x1f\x8b" else dump
    parser = _parsed(raw.decode("utf-8", errors="replace"))
    assert parser.totals is not None
    return CallGraph(
        total=parser.totals,
        self_ir={name: f.self_ir for name, f in parser.functions.items() if f.self_ir},
        edges={caller: dict(callees) for caller, callees in parser.edges.items()},
    )


def parse_dump(text: str) -> CostProfile:
    """The total instructions of a dump (its ``totals:`` line), every function's self and inclusive cost,
    and, when collected, the system calls by kind (:func:`syscall_kind`) and the simulated cache misses."""
    parser = _parsed(text)
    assert parser.totals is not None
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
    return CostProfile(
        total_ir=parser.totals, functions=functions, syscalls=_syscalls(parser), cache_misses=parser.cache_totals
    )


#: Free space under which a cut-short dump is blamed on a full disk.
FULL_DISK_BYTES = 1 << 20


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


_ADDRESS = re.compile(r"^(c?fn)=\((\d+)\) 0x([0-9a-fA-F]+)(?:'\d+)?$")  # 'N: a recursion level


def extent_name(binary: str, size: int) -> str:
    """The name of a function a binary does not name: ``[mariadbd, 524 bytes]``."""
    return f"[{Path(binary).name}, {size} bytes]"


def name_by_extent(text: str, extents_for: Callable[[str], Extents] = lambda path: function_extents(Path(path))) -> str:
    """The dump with every function named by address renamed after the function holding it in its
    binary's unwind table (:func:`extent_name`); addresses no table covers keep their name."""
    objects: dict[str, str] = {}
    current = callee = ""
    out = []
    for raw_line in text.splitlines():
        line = raw_line
        if line.startswith(("ob=", "cob=")):
            key, _, value = line.partition("=")
            match = _COMPRESSED.match(value)
            path = value
            if match:
                if match.group(2) is not None:
                    objects[match.group(1)] = match.group(2)
                path = objects.get(match.group(1), "")
            if key == "ob":
                current, callee = path, ""
            else:
                callee = path
        elif (found := _ADDRESS.match(line)) is not None:
            kind, ident, address = found.groups()
            binary = (callee or current) if kind == "cfn" else current
            extent = extents_for(binary).find(int(address, 16)) if binary.startswith("/") else None
            if extent is not None:
                line = f"{kind}=({ident}) {extent_name(binary, extent[1])}"
        if line.startswith("cfn="):
            callee = ""
        out.append(line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def read_dump(path: Path, extents_for: Callable[[str], Extents] | None = None) -> CostProfile:
    """Parse a dump file (plain or gzipped) and keep its gzipped text in the profile; with ``extents_for``
    (the server's binaries' function extents: :func:`harness.servers.binary_extents`), functions named by
    address are named by their binary and size (:func:`name_by_extent`) in both."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SysbenchError(f"cannot read the callgrind dump {path}: {exc.strerror}") from exc
    if extents_for is not None:
        plain = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        raw = name_by_extent(plain.decode("utf-8", errors="replace"), extents_for).encode()
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
    return dataclasses.replace(profile, dump=packed)
