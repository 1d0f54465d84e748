"""From counts to time: a cost comparison's forecast of single-client time per transaction (docs/forecast.md).

Each side's time per transaction at one client is the sum, over the work it counted, of count x unit time::

    T = instructions x (server CPU per instruction)                the server build's own units,
      + L1i misses   x (server CPU per instruction-cache miss)     solved from three scenarios
      + statements   x (server CPU per statement + time per        (harness.measure.server_units): the
                        statement outside its CPU)                  code fetched, the client, the loopback
      + syncs        x (fdatasync of the bytes a commit writes      sys_fsync: redo syncs, redo_written
                        for a redo sync, an fsync for a data         per redo sync; a data file's
                        file's, + the excess after the idle time    beyond them (its flush setting);
                        before it)                                  the rest of T per sync
      + page reads   x (the server's time per page read its         sys_pread, else Innodb_buffer_pool_reads
                        pool missed, else a bare read of a page
                        not in cache)
      + writes       x (pwrite latency)                             sys_pwrite

The syncs counted in dispatch are the redo log's and the data files' (a tablespace's extension, a binary
log's): with ``innodb_flush_log_at_trx_commit`` 0 or 2 every one is a data file's, with 1 or 3 one per
transaction is a redo sync and the rest are data files'; without the setting all are taken for redo syncs.
A redo sync's unit is interpolated between the calibration's fdatasync after 4, 16 and 64 KiB by the redo
bytes per redo sync (linear, held at 4 KiB below it and continued along the last segment above 64 KiB); a
side with no redo count syncs at 4 KiB. A data file's sync commits the file system's journal, as an fsync
does: the calibration's fsync unit. A sync costs more the longer the device was left since the previous one:
the calibration's fdatasync after 0.5, 2 and 8 ms idle, less the back-to-back one, is that excess (linear
from 0 at no idle time, held at the last above it), read at the idle time of the side's own transaction:
the rest of its time per transaction (everything but the syncs) over its syncs.

The L1i misses are the cost runs' simulated 32 KiB instruction cache's (``icache_misses``): the code a
transaction fetches, which costs beyond its instructions when it is passed through once (parsing, opening
tables, a cache's lookup) and next to nothing when it is looped over. A calibration without that unit (from
before it, or whose three-unknown solve was negative) prices instructions alone and the note says so;
cost runs without the count cannot be priced by a calibration with it (:mod:`harness.pipeline.forecasts`).

The change of single-client TPS is ``T_base / T_head - 1`` (QPS alike: the statements per transaction are
the workload's), and each transaction's latency, so its p95 while the spread stays, moves by
``T_head - T_base``. Each unit's value is its mean; the interval spans every combination of the
units' lowest and highest batch means (a unit both sides share takes the same value on both). What the
model cannot see: concurrency, lock and latch waits, background work (page cleaning, purge, checkpoints)
and the kernel time of system calls other than these kinds.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.model.forecast import (
    ICACHE,
    ICACHE_TERM,
    ONE_CLIENT,
    SYNC_IDLE,
    SYNC_SIZES,
    Calibration,
    Forecast,
    ForecastTerm,
    ServerUnits,
    UnitTime,
)

#: (component label, the work-vector keys read in turn, the I/O unit it is multiplied by)
IO_COMPONENTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("syncs", ("sys_fsync",), "fdatasync"),
    ("page reads", ("sys_pread", "bp_reads"), "page_read"),
    ("writes", ("sys_pwrite",), "write"),
)


@dataclass(frozen=True)
class SideWork:
    """One side of a cost comparison: its work per transaction (medians over its runs: ``instr_per_txn``
    and work-vector components), statements per transaction, its server build's units, and whether its
    commits sync the redo log (:func:`commit_syncs`)."""

    work: Mapping[str, float]
    statements: float
    units: ServerUnits
    commit_syncs: bool | None = None  # whether each commit syncs the redo log (None: not known)

    @property
    def data_syncs(self) -> float:
        """Syncs per transaction in dispatch that are not the redo log's (a tablespace's extension, a
        binary log's): all of them when commits do not sync the redo log (``innodb_flush_log_at_trx_commit``
        0 or 2: its syncs are the background's), those beyond one per transaction when they do (1 or 3); none
        when the side's setting is not known (every sync is then taken for a redo sync)."""
        syncs = self.work.get("sys_fsync", 0.0)
        if self.commit_syncs is None or syncs <= 0:
            return 0.0
        return syncs if not self.commit_syncs else max(0.0, syncs - 1.0)

    @property
    def redo_syncs(self) -> float:
        """Syncs per transaction of the redo log: the syncs counted in dispatch less the data files'."""
        return max(0.0, self.work.get("sys_fsync", 0.0) - self.data_syncs)

    @property
    def sync_bytes(self) -> float | None:
        """Redo bytes per redo sync (``redo_written`` over :attr:`redo_syncs`), None without both counts."""
        syncs, redo = self.redo_syncs, self.work.get("redo_written")
        return redo / syncs if redo and syncs > 0 else None


def sync_unit(size: float | None, points: Sequence[tuple[float, float]]) -> float:
    """The time of a sync after ``size`` bytes written, from ``(bytes, µs)`` points measured: linear between
    them, the smallest's below it (or without a size), along the last segment above the largest."""
    ordered = sorted(points)
    if not ordered:
        raise ValueError("no sync unit calibrated")
    if size is None or size <= ordered[0][0] or len(ordered) == 1:
        return ordered[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(ordered):
        if size <= x1:
            return y0 + (y1 - y0) * (size - x0) / (x1 - x0)
    (x0, y0), (x1, y1) = ordered[-2], ordered[-1]
    return max(y1, y1 + (y1 - y0) * (size - x1) / (x1 - x0))


def idle_excess(idle_us: float | None, points: Sequence[tuple[float, float]]) -> float:
    """What a sync costs beyond a back-to-back one after ``idle_us`` since the previous sync, from ``(idle
    µs, excess µs)`` points measured: linear from 0 at no idle time, held at the last point above it, never
    below 0; 0 without an idle time or points."""
    if idle_us is None or idle_us <= 0 or not points:
        return 0.0
    ordered = [(0.0, 0.0), *sorted(points)]
    for (x0, y0), (x1, y1) in itertools.pairwise(ordered):
        if idle_us <= x1:
            return max(0.0, y0 + (y1 - y0) * (idle_us - x0) / (x1 - x0))
    return max(0.0, ordered[-1][1])


def commit_syncs(variables: Mapping[str, str]) -> bool | None:
    """Whether a server's commits sync the redo log (``innodb_flush_log_at_trx_commit`` 1 or 3), None when
    its variables do not say."""
    value = variables.get("innodb_flush_log_at_trx_commit", "").strip()
    return value in {"1", "3"} if value in {"0", "1", "2", "3"} else None


def _sync(side: SideWork, values: Mapping[str, float], idle_us: float | None = None) -> float:
    """The mean time of one of the side's syncs: a redo sync at its bytes, a data file's (a tablespace's
    extension: a journal commit, as an fsync's) at the fsync unit, weighted by their counts, each with the
    excess after the idle time before it."""
    sized = sync_unit(side.sync_bytes, [(size, values[name]) for size, name in SYNC_SIZES if name in values])
    back_to_back = values.get("fdatasync", 0.0)
    excess = [(idle, values[name] - back_to_back) for idle, name in SYNC_IDLE if name in values]
    redo, data = side.redo_syncs, side.data_syncs
    if redo + data > 0:
        sized = (redo * sized + data * values.get("fsync", back_to_back)) / (redo + data)
    return sized + idle_excess(idle_us, excess)


def _count(work: Mapping[str, float], keys: Sequence[str]) -> float | None:
    return next((work[k] for k in keys if k in work), None)


def _variables(base: SideWork, head: SideWork, calibration: Calibration) -> dict[str, UnitTime]:
    out: dict[str, UnitTime] = {}
    for side in (base, head):
        key = side.units.build_id or side.units.server
        out[f"{key}:instruction"] = side.units.instruction
        out[f"{key}:cpu_statement"] = side.units.cpu_statement
        out[f"{key}:statement"] = side.units.statement
        if side.units.page_read is not None:
            out[f"{key}:page_read"] = side.units.page_read
        if side.units.icache_miss is not None:
            out[f"{key}:icache_miss"] = side.units.icache_miss
    data_syncs = ("fsync",) if base.data_syncs > 0 or head.data_syncs > 0 else ()
    syncs = (*data_syncs, *(n for _, n in SYNC_SIZES), *(n for _, n in SYNC_IDLE))
    for name in (*syncs, *(n for _, _, n in IO_COMPONENTS)):
        unit = calibration.unit(name)
        if unit is not None:
            out[name] = unit
    return out


def _rest(side: SideWork, values: Mapping[str, float], io: Sequence[tuple[str, float]]) -> float:
    """The time per transaction of everything but its syncs."""
    key = side.units.build_id or side.units.server
    cpu = side.work.get("instr_per_txn", 0.0) * values[f"{key}:instruction"]
    cpu += side.work.get(ICACHE, 0.0) * values.get(f"{key}:icache_miss", 0.0)
    per_statement = side.statements * (values[f"{key}:cpu_statement"] + values[f"{key}:statement"])
    return cpu + per_statement + sum(count * values[name] for name, count in io if name != "fdatasync")


def _syncs(io: Sequence[tuple[str, float]]) -> float:
    return sum(count for name, count in io if name == "fdatasync")


def _idle(rest: float, syncs: float) -> float | None:
    return rest / syncs if syncs > 0 else None


def _time(side: SideWork, values: Mapping[str, float], io: Sequence[tuple[str, float]]) -> float:
    rest, syncs = _rest(side, values, io), _syncs(io)
    return rest + syncs * _sync(side, values, _idle(rest, syncs)) if syncs > 0 else rest


def _unit_name(side: SideWork, name: str, names: Mapping[str, UnitTime]) -> str:
    """The unit a side's count of ``name`` is priced at: a page read at its server's own page read where the
    calibration measured one, else the runner's unit."""
    own = f"{side.units.build_id or side.units.server}:{name}"
    return own if name == "page_read" and own in names else name


def _io(side: SideWork, names: Mapping[str, UnitTime]) -> list[tuple[str, float]]:
    out = []
    for _, keys, name in IO_COMPONENTS:
        count = _count(side.work, keys)
        unit = _unit_name(side, name, names)
        if count is not None and unit in names:
            out.append((unit, count))
    return out


def _terms(base: SideWork, head: SideWork, names: Mapping[str, UnitTime]) -> tuple[ForecastTerm, ...]:
    medians = {n: u.value_us for n, u in names.items()}
    b_idle, h_idle = (_idle(_rest(s, medians, _io(s, names)), _syncs(_io(s, names))) for s in (base, head))
    terms = [
        ForecastTerm(
            "instructions",
            base.work.get("instr_per_txn", 0.0),
            head.work.get("instr_per_txn", 0.0),
            base.units.instruction.value_us,
            head.units.instruction.value_us,
        ),
        *(
            [
                ForecastTerm(
                    ICACHE_TERM,
                    base.work.get(ICACHE, 0.0),
                    head.work.get(ICACHE, 0.0),
                    base.units.icache_miss.value_us if base.units.icache_miss else 0.0,
                    head.units.icache_miss.value_us if head.units.icache_miss else 0.0,
                )
            ]
            if base.units.icache_miss or head.units.icache_miss
            else []
        ),
        ForecastTerm(
            "statements",
            base.statements,
            head.statements,
            base.units.cpu_statement.value_us + base.units.statement.value_us,
            head.units.cpu_statement.value_us + head.units.statement.value_us,
        ),
    ]
    for label, keys, name in IO_COMPONENTS:
        unit = names.get(name)
        if unit is None:
            continue
        b, h = _count(base.work, keys), _count(head.work, keys)
        if b is None and h is None:
            continue
        if name == "fdatasync":
            b_unit, h_unit = _sync(base, medians, b_idle), _sync(head, medians, h_idle)
            terms.append(ForecastTerm(label, b or 0.0, h or 0.0, b_unit, h_unit))
        else:
            b_unit, h_unit = (medians[_unit_name(side, name, names)] for side in (base, head))
            terms.append(ForecastTerm(label, b or 0.0, h or 0.0, b_unit, h_unit))
    return tuple(terms)


def outcome_of(low_pct: float, high_pct: float, bound_pct: float) -> str:
    """regression when the whole TPS interval lies beyond a drop of ``bound_pct``, improvement beyond a rise
    of it, pass when it rules out such a drop, else unknown."""
    if high_pct < -bound_pct:
        return "regression"
    if low_pct > bound_pct:
        return "improvement"
    if low_pct > -bound_pct:
        return "pass"
    return "unknown"


def forecast(
    base: SideWork,
    head: SideWork,
    calibration: Calibration,
    *,
    bound_pct: float = 5.0,
    holds: str = ONE_CLIENT,
    gating: bool = False,
    caveat: str = "",
    unseen: Sequence[str] = (),
) -> Forecast:
    """Each side's time per transaction at one client and the change it implies (module docstring);
    ``unseen`` names counts a side lacks that the forecast took from the other, said in its note."""
    units = _variables(base, head, calibration)
    names = list(units)
    base_io, head_io = _io(base, units), _io(head, units)
    medians = {n: u.value_us for n, u in units.items()}
    t_base, t_head = _time(base, medians, base_io), _time(head, medians, head_io)
    changes: list[float] = []
    deltas: list[float] = []
    for corner in itertools.product((0, 1), repeat=len(names)):
        values = {n: (units[n].low_us, units[n].high_us)[c] for n, c in zip(names, corner, strict=True)}
        b, h = _time(base, values, base_io), _time(head, values, head_io)
        changes.append(100.0 * (b / h - 1.0) if h > 0 else 0.0)
        deltas.append(h - b)
    tps = 100.0 * (t_base / t_head - 1.0) if t_head > 0 else 0.0
    low, high = min(changes), max(changes)
    missing = [label for label, _, name in IO_COMPONENTS if name not in units]
    if (_syncs(base_io) or _syncs(head_io)) and not any(name in units for _, name in SYNC_IDLE):
        missing.append("syncs after idle time")
    bare = [
        side.units.page_read_note or "a calibration from before it"
        for side, io in ((base, base_io), (head, head_io))
        if any(name == "page_read" and count > 0 for name, count in io)
    ]
    if bare:  # priced at the runner's bare read: the server's own was not measured
        missing.append(f"the server's page read ({bare[0]}; a bare read used)")
    unfetched = [s.units.icache_note or "a calibration from before it" for s in (base, head) if not s.units.icache_miss]
    if unfetched:  # instructions priced alone: code fetched once costs as much as code looped over
        missing.append(f"the code fetched ({unfetched[0]}; one price per instruction used)")
    note = "; ".join(
        part
        for part in (f"not calibrated: {', '.join(missing)}" if missing else "", *(f"not seen: {u}" for u in unseen))
        if part
    )
    return Forecast(
        base_us=t_base,
        head_us=t_head,
        tps_pct=tps,
        tps_low_pct=min(low, tps),
        tps_high_pct=max(high, tps),
        delta_us=t_head - t_base,
        delta_low_us=min(deltas),
        delta_high_us=max(deltas),
        terms=_terms(base, head, units),
        holds=holds,
        calibrated=f"testbed {calibration.testbed}, calibrated {calibration.measured_at} (load {calibration.load})",
        outcome=outcome_of(low, high, bound_pct),  # type: ignore[arg-type]
        bound_pct=bound_pct,
        gating=gating,
        note=note,
        caveat=caveat,
    )


def holds_for(per_threads: Mapping[int, float], *, flat: float = 0.9) -> str:
    """Where a single-client forecast stops holding, from a stored thread sweep (TPS by client count):
    the first client count whose TPS per client falls below ``flat`` x the single client's, or the model's
    own limit where there is no sweep with a single-client point."""
    if 1 not in per_threads or len(per_threads) < 2 or per_threads[1] <= 0:
        return ONE_CLIENT
    one = per_threads[1]
    flat_to = 1
    for threads in sorted(t for t in per_threads if t > 1):
        share = per_threads[threads] / threads / one
        if share < flat:
            return (
                f"holds at 1 client, and to {flat_to} by the stored sweep; not at {threads} clients and more, "
                f"where each client gets {100 * share:.0f} % of one client's TPS (queueing and contention "
                "are outside the model)"
            )
        flat_to = threads
    return f"holds at 1 client; the stored sweep stays flat per client up to {flat_to} clients"
