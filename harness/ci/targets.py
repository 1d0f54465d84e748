"""Which scenarios exercise a changed server setting: the plan aims where the change bites.

Each row of the sensitivity table (:data:`harness.ci.scope.SENSITIVITY`) may name a class of setting
(:data:`CLASSES`), and each class names the scenarios of the catalogue that exercise it, the most telling
first and at most :attr:`TargetClass.limit` of them (the check must stay affordable):

* **durability** (flushing, redo, doublewrite) -> write scenarios with a commit per statement and tpcc;
* **buffer pool and caches** -> read scenarios whose data does not fit the smaller of the two sides'
  buffer pools (largest first); when every one fits, the largest, and the reason says it fits;
* **temporary tables and sorts** -> scenarios with range queries (sorts, DISTINCT, scans);
* **thread handling** -> the thread sweeps (two or more client counts in the profile);
* **binary log** -> write scenarios, with whether either side writes a binary log at all;
* **query plans** (optimizer switches, statistics) -> statements the optimiser has a choice in;
* **per-statement overhead** (instrumentation, character sets, statement timers) -> the lightest statement,
  a point select, where a fixed cost per statement is the largest share of the work.

A changed setting of no class (and a new build, a CPU placement) runs the default set. Setting names are
matched after :func:`canonical` (case, ``-``/``_``, ``loose-``, an unambiguous prefix). The classes and
the plans they give are shown in docs/pull-request-checks.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from harness.model import Scenario, Server
from harness.servers.variables import PINNED, requested_values, size_bytes

#: About how many bytes a loaded row takes in InnoDB, by the workload's loader (for "does the data fit the
#: buffer pool"): sysbench's sbtest rows with their secondary index, YCSB's 10 fields of 100 bytes, and a
#: TPC-C warehouse's rows per item (stock, customers, orders, order lines). docs/pull-request-checks.md.
ROW_BYTES = {"ycsb": 1100, "tpcc": 900, "": 240}

DURABILITY = "durability"
CACHES = "buffer pool and caches"
TEMP = "temporary tables and sorts"
THREADS = "thread handling"
BINLOG = "binary log"
PLANS = "query plans"
OVERHEAD = "per-statement overhead"
_POOL = "innodb_buffer_pool_size"


@dataclass(frozen=True)
class TargetClass:
    """A class of setting and how to find the scenarios that exercise it."""

    name: str
    what: str  # the scenarios, in words ("write scenarios and tpcc")
    #: the most telling scenarios of the stock catalogue, in order (buffer pool: the first of equal size)
    preferred: tuple[str, ...]
    admits: Callable[[Scenario], bool]  # any other scenario of the class (a catalogue without the preferred)
    limit: int = 3


def _writes(s: Scenario) -> bool:
    return s.writes and len(s.threads) == 1


def _reads(s: Scenario) -> bool:
    return not s.writes and len(s.threads) == 1


def _ranges(s: Scenario) -> bool:
    return len(s.threads) == 1 and bool(re.search(r"range|scan|sort", s.description, re.IGNORECASE))


def _sweep(s: Scenario) -> bool:
    return len(s.threads) > 1


CLASSES: dict[str, TargetClass] = {
    c.name: c
    for c in (
        TargetClass(DURABILITY, "write scenarios and tpcc", ("oltp_insert", "oltp_write_only", "tpcc"), _writes),
        TargetClass(CACHES, "read scenarios whose data does not fit the buffer pool", ("oltp_read_only",), _reads, 2),
        TargetClass(TEMP, "scenarios with range queries", ("oltp_read_only", "select_random_ranges", "ycsb_e"),
                    _ranges),
        TargetClass(THREADS, "thread sweeps", ("threadpool_select", "threadpool_read_write"), _sweep, 2),
        TargetClass(BINLOG, "write scenarios", ("oltp_insert", "oltp_write_only"), _writes, 2),
        TargetClass(PLANS, "statements the optimiser has a choice in", ("oltp_read_only", "select_random_points",
                                                                          "tpcc"), _ranges),
        TargetClass(OVERHEAD, "lightest statement, where a fixed cost per statement weighs most",
                    ("oltp_point_select",), _reads, 1),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Pick:
    """A scenario chosen for a comparison, and why (the plan's "chosen" column)."""

    scenario: str
    why: str


def canonical(name: str, known: Sequence[str] = ()) -> str:
    """A setting's canonical name: lower case, ``_`` for ``-``, without ``loose_``, and a prefix the server
    would accept (MariaDB takes any unambiguous prefix) completed when exactly one of ``known`` starts with
    it. harness/config/ has no canonical-name function yet; this small one stands in for it."""
    clean = name.strip().lower().replace("-", "_").removeprefix("loose_")
    if clean in known:
        return clean
    longer = [k for k in known if k.startswith(clean)]
    return longer[0] if len(longer) == 1 else clean


def dataset_bytes(scenario: Scenario) -> int:
    """About how much of InnoDB the scenario's dataset takes at its profile (:data:`ROW_BYTES`)."""
    loader = scenario.dataset_name or scenario.script
    kind = next((k for k in ROW_BYTES if k and k in loader), "")
    return scenario.tables * scenario.table_size * ROW_BYTES[kind]


def pool_bytes(server: Server) -> int:
    """The buffer pool a server runs with: its own setting, else the pinned default."""
    value = requested_values(server).get(_POOL, PINNED[_POOL])
    return size_bytes(value) or size_bytes(PINNED[_POOL]) or 0


def binlog_on(server: Server) -> bool:
    """Whether a server writes a binary log (``log_bin`` set and not off; dbperf pins it off for MySQL)."""
    values = requested_values(server)
    return "log_bin" in values and values["log_bin"].strip().lower() not in ("0", "off", "false")


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _preferred(cls: TargetClass, catalogue: Mapping[str, Scenario]) -> list[str]:
    found = [n for n in cls.preferred if n in catalogue]
    if not found:
        found = sorted(n for n, s in catalogue.items() if cls.admits(s))
    return found[: cls.limit]


def _caches(cls: TargetClass, catalogue: Mapping[str, Scenario], pool: int, what: str) -> list[Pick]:
    def rank(name: str) -> tuple[int, int, str]:  # largest data first; of equal size, the preferred first
        order = cls.preferred.index(name) if name in cls.preferred else len(cls.preferred)
        return -dataset_bytes(catalogue[name]), order, name

    reads = sorted((n for n, s in catalogue.items() if cls.admits(s)), key=rank)
    spill = [n for n in reads if dataset_bytes(catalogue[n]) > pool]
    if spill:
        return [
            Pick(n, f"{what}: its data (about {_mb(dataset_bytes(catalogue[n]))}) does not fit the smaller pool "
                    f"({_mb(pool)})")
            for n in spill[: cls.limit]
        ]  # fmt: skip
    return [
        Pick(n, f"{what}: the largest read data (about {_mb(dataset_bytes(catalogue[n]))}), which fits the smaller "
                f"pool ({_mb(pool)}): the change may not show")
        for n in reads[:1]
    ]  # fmt: skip


def picks(
    classes: Mapping[str, Sequence[str]],
    catalogue: Mapping[str, Scenario],
    base: Server | None = None,
    head: Server | None = None,
) -> list[Pick]:
    """The scenarios each class of the changed settings names (``classes``: class -> the settings), with why.

    ``base`` and ``head`` are the two definitions of the changed server: their buffer pools decide what
    does not fit, their ``log_bin`` whether a binary-log setting does anything."""
    chosen: dict[str, list[str]] = {}
    for name, settings in classes.items():
        cls = CLASSES[name]
        what = f"{cls.name} ({', '.join(settings)})"
        if name == CACHES:
            pools = [pool_bytes(s) for s in (base, head) if s is not None] or [size_bytes(PINNED[_POOL]) or 0]
            found = _caches(cls, catalogue, min(pools), what)
        elif name == BINLOG:
            sides = [binlog_on(s) for s in (base, head) if s is not None]
            off = "off on both sides: it should change nothing"
            state = "on" if all(sides) else "on one side" if any(sides) else off
            found = [Pick(n, f"{what}: a write scenario, binary log {state}") for n in _preferred(cls, catalogue)]
        else:
            found = [Pick(n, f"{what}: bites in the {cls.what}") for n in _preferred(cls, catalogue)]
        for pick in found:
            chosen.setdefault(pick.scenario, []).append(pick.why)
    return [Pick(n, "; ".join(whys)) for n, whys in chosen.items()]


def classify(names: Sequence[str], class_of: Callable[[str], str]) -> tuple[dict[str, list[str]], list[str]]:
    """The changed settings by class (``class_of`` gives a name's class, "" for none), and those of no class."""
    classes: dict[str, list[str]] = {}
    unclassed: list[str] = []
    for name in names:
        found = class_of(name)
        if found:
            classes.setdefault(found, []).append(name)
        else:
            unclassed.append(name)
    return classes, unclassed
