"""A server build's units on this runner, solved from its calibration scenarios (docs/forecast.md).

Timing runs at one client give each scenario's server CPU and wall time per transaction; a cost run gives
its counts: statements, instructions counted in dispatch, and the misses of a simulated 32 KiB level-1
instruction cache (``icache_misses``: the lines of code the transaction fetched). The server's CPU per
transaction is taken for::

    cpu = statements x s + instructions x p + instruction-cache misses x q

solved from three scenarios of different shape: a point select (one statement through much code: about 14
instructions per line fetched), a read-only transaction (16 statements whose 3.6 million instructions are mostly loops
over code already fetched: 75 per line) and BEGIN and COMMIT alone (statements through little code). Code a
statement passes through once is fetched again after every wake-up and costs that fetch beside its
instructions; code it loops over is fetched once. One price per instruction cannot tell the two apart.
Per statement, the wall time the server's CPU does not explain (the client, the loopback) is its time
outside the server. Without miss counts, or when the three-unknown solve comes out negative (noise), the
first two scenarios give a two-unknown solve (``s`` and ``p``), and the units say so.

Then a page read as the server does it: point selects on a dataset larger than a small buffer pool, whose
time beyond what those units give, per page the pool missed, is the server's time per page read (the read
and what the pool does for it: finding a free page, evicting one).
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence

import numpy as np

from harness.measure.calibration import CalibrationError
from harness.model import RunResult
from harness.model.forecast import ICACHE, ScenarioWork, ServerUnits, UnitTime

Runs = tuple[Sequence[RunResult], Sequence[RunResult]]
"""One calibration scenario's timing runs at one client and its cost runs."""


def _scenario(
    timing: Sequence[RunResult], cost: Sequence[RunResult]
) -> tuple[ScenarioWork, list[RunResult], list[RunResult]]:
    timed = [r for r in timing if r.ok and r.threads == 1 and r.metrics.tps and r.metrics.cpu_per_txn]
    counted = [r for r in cost if r.ok and r.metrics.instr_per_txn and r.totals is not None and r.totals.events]
    if not timed or not counted:
        raise CalibrationError(
            "the calibration needs timing runs at 1 client with server CPU time and a cost run of each scenario; "
            "a run failed or the server's CPU time could not be read (see `dbperf runs`)"
        )
    misses = [r.metrics.work[ICACHE] for r in counted if ICACHE in r.metrics.work]
    work = ScenarioWork(
        scenario=timed[0].scenario,
        instr_per_txn=statistics.median(float(r.metrics.instr_per_txn or 0.0) for r in counted),
        statements_per_txn=statistics.median(r.totals.queries / r.totals.events for r in counted if r.totals),
        cpu_us=statistics.fmean(float(r.metrics.cpu_per_txn or 0.0) for r in timed),
        wall_us=statistics.fmean(1e6 / float(r.metrics.tps or 1.0) for r in timed),
        icache_per_txn=statistics.median(misses) if len(misses) == len(counted) else None,
    )
    return work, timed, counted


def _per_run(timed: Sequence[RunResult], work: ScenarioWork) -> tuple[list[float], list[float]]:
    """Each timing run's server CPU per transaction and time outside the server per statement (µs)."""
    cpu = [float(r.metrics.cpu_per_txn or 0.0) for r in timed]
    outside = [
        max(0.0, 1e6 / float(r.metrics.tps or 1.0) - c) / work.statements_per_txn
        for r, c in zip(timed, cpu, strict=True)
    ]
    return cpu, outside


def solve(first: ScenarioWork, second: ScenarioWork, cpu1: float, cpu2: float) -> tuple[float, float]:
    """Server CPU per statement and per instruction (microseconds) that give both scenarios' CPU time per
    transaction: ``cpu = statements x per_statement + instructions x per_instruction``."""
    n1, i1, n2, i2 = first.statements_per_txn, first.instr_per_txn, second.statements_per_txn, second.instr_per_txn
    det = n1 * i2 - n2 * i1
    if det == 0:
        raise CalibrationError("the two calibration scenarios have the same shape of work: no solve")
    return (cpu1 * i2 - cpu2 * i1) / det, (n1 * cpu2 - n2 * cpu1) / det


def solve_fetches(works: Sequence[ScenarioWork], cpus: Sequence[float]) -> tuple[float, float, float]:
    """Server CPU per statement, per instruction and per instruction-cache miss (microseconds) that give
    three scenarios' CPU time per transaction: ``cpu = statements x s + instructions x p + misses x q``."""
    rows = [[w.statements_per_txn, w.instr_per_txn, w.icache_per_txn or 0.0] for w in works]
    try:
        s, p, q = np.linalg.solve(np.array(rows, dtype=float), np.array(cpus, dtype=float))
    except np.linalg.LinAlgError:
        raise CalibrationError("the three calibration scenarios have the same shape of work: no solve") from None
    return float(s), float(p), float(q)


def _unit(name: str, value: float, corners: Sequence[float], samples: int, how: str) -> UnitTime:
    return UnitTime(name, value, max(0.0, min(*corners, value)), max(*corners, value), samples, how=how)


def _fetch_units(
    works: Sequence[ScenarioWork], runs: Sequence[tuple[list[float], list[float]]], count: int
) -> tuple[UnitTime, UnitTime, UnitTime] | str:
    """The three-unknown solve of the first three scenarios, its spread over every corner of each
    scenario's lowest and highest run; a reason (text) where it cannot be used."""
    three = works[:3]
    if len(three) < 3:
        return "two scenarios measured"
    if any(w.icache_per_txn is None for w in three):
        return "the cost runs counted no instruction-cache misses"
    s, p, q = solve_fetches(three, [w.cpu_us for w in three])
    if s < 0 or p <= 0 or q <= 0:
        return (
            f"the three-scenario solve gave {s:.1f} µs per statement, {p * 1000:.3f} ns per instruction and "
            f"{q * 1000:.2f} ns per instruction-cache miss (noise)"
        )
    ranges = [(min(cpu), max(cpu)) for cpu, _ in runs[:3]]
    corners = [solve_fetches(three, c) for c in itertools.product(*ranges)]
    how = f"solved from {', '.join(w.scenario for w in three)}, 1 client"
    return (
        _unit("cpu_statement", s, [c[0] for c in corners], count, f"server CPU per statement ({how})"),
        _unit("instruction", p, [c[1] for c in corners], count, f"server CPU per instruction ({how})"),
        _unit(
            "icache_miss",
            q,
            [c[2] for c in corners],
            count,
            f"server CPU per miss of a simulated 32 KiB L1 instruction cache ({how})",
        ),
    )


def server_units(scenarios: Sequence[Runs]) -> ServerUnits:
    """A server build's units from its scenarios' timing runs at one client and cost runs (module
    docstring): with three scenarios and their instruction-cache misses, the CPU per statement, per
    instruction and per miss solved from the three; else the CPU per statement and per instruction solved
    from the first two (at the means of their runs; the spread spans every corner of each scenario's lowest
    and highest run). The time outside the server per statement is the mean of the scenarios'. A negative
    two-unknown solve (noise), or one scenario alone, falls back to the first scenario's CPU per instruction
    and no CPU per statement, and says so."""
    measured = [_scenario(timing, cost) for timing, cost in scenarios]
    works = tuple(w for w, _, _ in measured)
    runs = [_per_run(timed, w) for w, timed, _ in measured]
    first = measured[0][1][0]
    count = sum(len(cpu) for cpu, _ in runs)
    outside = statistics.fmean((w.wall_us - w.cpu_us) / w.statements_per_txn for w in works)
    ranges = [(min(o), max(o)) for _, o in runs]
    statement = _unit(
        "statement",
        max(0.0, outside),
        [statistics.fmean(c) for c in itertools.product(*ranges)],
        count,
        f"wall time minus server CPU, per statement ({', '.join(w.scenario for w in works)}, 1 client)",
    )
    fetches = _fetch_units(works, runs, count)
    if isinstance(fetches, str):
        cpu_statement, instruction, fallback = _two_units(works, runs, count)
        icache, note = None, fetches
    else:
        (cpu_statement, instruction, icache), fallback, note = fetches, "", ""
    return ServerUnits(
        server=first.server,
        build_id=first.build_id,
        version=first.server_version,
        instruction=instruction,
        cpu_statement=cpu_statement,
        statement=statement,
        scenarios=works,
        fallback=fallback,
        run_ids=tuple(r.run_id for _, timed, counted in measured for r in (*timed, *counted)),
        icache_miss=icache,
        icache_note=note,
    )


def _two_units(
    works: Sequence[ScenarioWork], runs: Sequence[tuple[list[float], list[float]]], count: int
) -> tuple[UnitTime, UnitTime, str]:
    """The CPU per statement and per instruction solved from the first two scenarios, and "" (their spread
    over every corner of each one's lowest and highest run); or, when that solve is negative or there is one
    scenario, the first scenario's CPU per instruction, none per statement, and why (the fallback)."""
    fallback = "one scenario measured" if len(works) < 2 else ""
    if not fallback:
        per_statement, per_instruction = solve(works[0], works[1], works[0].cpu_us, works[1].cpu_us)
        if per_statement >= 0 and per_instruction > 0:
            cpu_ranges = [(min(c), max(c)) for c, _ in runs[:2]]
            corners = [solve(works[0], works[1], c1, c2) for c1, c2 in itertools.product(*cpu_ranges)]
            how = f"solved from {works[0].scenario} and {works[1].scenario}, 1 client"
            return (
                _unit(
                    "cpu_statement", per_statement, [a for a, _ in corners], count, f"server CPU per statement ({how})"
                ),
                _unit(
                    "instruction",
                    per_instruction,
                    [b for _, b in corners],
                    count,
                    f"server CPU per instruction ({how})",
                ),
                "",
            )
        fallback = (
            f"the two-scenario solve gave {per_statement:.1f} µs per statement and "
            f"{per_instruction * 1000:.3f} ns per instruction (noise)"
        )
    w, cpu = works[0], runs[0][0]
    instruction = _unit(
        "instruction",
        w.cpu_us / w.instr_per_txn,
        [min(cpu) / w.instr_per_txn, max(cpu) / w.instr_per_txn],
        len(cpu),
        f"server CPU per instruction counted in dispatch ({w.scenario} alone, 1 client)",
    )
    cpu_statement = UnitTime("cpu_statement", 0.0, 0.0, 0.0, 0, how="not solved: " + fallback)
    return cpu_statement, instruction, f"{fallback}: CPU per instruction from {w.scenario} alone, none per statement"


#: The buffer pool (bytes) the page-read scenario runs with: too small for its dataset, so most point
#: selects miss (6 MiB: above every supported server's minimum).
SMALL_POOL = 6 * 1024 * 1024
#: Fewer page reads per transaction than this in the page-read runs, and the unit is not solved (the pool
#: held the data: too few reads to divide the time by).
MIN_READS_PER_TXN = 0.2


def page_read_unit(timing: Sequence[RunResult], cost: Sequence[RunResult], units: ServerUnits) -> UnitTime | str:
    """The server's time per page read that its buffer pool missed, from timing runs at one client and a
    cost run of point selects with a small pool (:data:`SMALL_POOL`): each run's wall time per transaction
    less what the server's other units give for its statements, counted instructions and instruction-cache
    misses, over the page reads per transaction the run's own status counters saw (``bp_reads``); the mean
    of the runs, their lowest and highest as its spread. A reason (text) instead when it cannot be solved."""
    work, timed, _ = _scenario(timing, cost)
    rest = work.statements_per_txn * (units.cpu_statement.value_us + units.statement.value_us)
    rest += work.instr_per_txn * units.instruction.value_us
    if units.icache_miss is not None:
        rest += (work.icache_per_txn or 0.0) * units.icache_miss.value_us
    reads = [float(r.metrics.work.get("bp_reads", 0.0)) for r in timed]
    if min(reads) < MIN_READS_PER_TXN:
        return f"{min(reads):.2f} page reads per transaction at a {SMALL_POOL >> 20} MiB pool: too few to time"
    per_run = [(1e6 / float(r.metrics.tps or 1.0) - rest) / n for r, n in zip(timed, reads, strict=True)]
    value = (work.wall_us - rest) / statistics.fmean(reads)
    if value <= 0:
        return f"the page-read runs took {work.wall_us:,.1f} µs per transaction, no more than the other units give"
    return UnitTime(
        "page_read_server",
        value,
        max(0.0, min(*per_run, value)),
        max(*per_run, value),
        len(per_run),
        how=(
            f"server time per page read its pool missed ({work.scenario} at a {SMALL_POOL >> 20} MiB pool, "
            f"1 client, {statistics.fmean(reads):.2f} reads per transaction: wall time less the other units)"
        ),
    )
