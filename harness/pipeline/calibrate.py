"""``dbperf calibrate``: measure this runner's unit times and keep them with its testbed (docs/forecast.md).

One server per call: its timing runs at one client (``repetitions`` of them, the settings' profile and
durations) and one cost run of each of three CPU-bound scenarios of different shape (a point select, a
read-only transaction, BEGIN and COMMIT alone) give its server CPU time per statement, per instruction and
per instruction-cache miss (solved from the three: harness.measure.server_units) and its time per statement
outside the server; the same of point selects on ci's dataset with a 6 MiB buffer pool give its time per
page read the pool missed. The I/O and loopback units are measured beside them in ``$TMPDIR``, where servers keep their
datadirs, the way the server's own variables say it syncs, writes and reads, on the server's CPUs (its
``cpuset``). Every run is stored as usual.
"""

from __future__ import annotations

import dataclasses
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from harness.config.settings import Settings
from harness.measure.calibration import (
    cpu_list,
    load_averages,
    load_calibration,
    log_writes_direct,
    measure_io,
    merged,
    read_mode,
    save_calibration,
)
from harness.measure.neighbours import parse_cpus
from harness.measure.server_units import SMALL_POOL, page_read_unit, server_units
from harness.measure.session import Reporter
from harness.model import stable_hash
from harness.model.forecast import Calibration, OldCalibrationError, UnitTime
from harness.pipeline.cases import Case, checked, resolve
from harness.pipeline.flow import measure_case
from harness.pipeline.opening import open_session

#: Scenarios whose time at one client is the server's CPU and the round trips (no syncs, no page reads once
#: warm), of different shape: one statement of ~42,000 instructions, 16 of ~3.6 million together (mostly
#: loops), and :func:`begin_commit` of the second.
CALIBRATION_SCENARIOS = ("oltp_point_select", "oltp_read_only")
#: sysbench's oltp_read_only with none of its statements but BEGIN and COMMIT: statements that run little
#: code (about 6,400 instructions and 260 instruction-cache misses each, against a point select's 42,000
#: and 2,950), which tell the CPU per statement from the CPU per code fetched.
BEGIN_COMMIT = "calibration_begin_commit"
_NO_STATEMENTS = {
    "point_selects": "0",
    "simple_ranges": "0",
    "sum_ranges": "0",
    "order_ranges": "0",
    "distinct_ranges": "0",
}
#: Point selects whose pool misses: the profile whose dataset (4 x 100,000 rows, about 90 MB) is far larger
#: than :data:`SMALL_POOL`, so nearly every one reads a page.
PAGE_READ_SCENARIO, PAGE_READ_PROFILE = "oltp_point_select", "ci"


@dataclasses.dataclass(frozen=True)
class Calibrated:
    calibration: Calibration
    path: Path
    run_ids: tuple[str, ...]


def calibrate(
    settings: Settings,
    reporter: Reporter,
    *,
    repetitions: int = 3,
    samples: int = 300,
) -> Calibrated:
    """Measure the calibration of ``settings.server`` on this testbed and write it (merged with the other
    servers' units already kept for this testbed)."""
    server = settings.one_server()
    cases = [resolve(settings, scenario, server) for scenario in CALIBRATION_SCENARIOS]
    cases.append(begin_commit(cases[1]))
    small = resolve(dataclasses.replace(settings, profile=PAGE_READ_PROFILE), PAGE_READ_SCENARIO, server)
    small = Case(small.server.with_variables({"innodb_buffer_pool_size": str(SMALL_POOL)}), small.scenario)
    plans: list[tuple[Case, Case]] = []
    for case in (*cases, small):
        timing = Case(case.server, case.scenario.with_overrides(threads=[1], repetitions=repetitions))
        cost_settings = dataclasses.replace(case.scenario.cost, repetitions=1, threads=(1,))
        plans.append((timing, Case(case.server, dataclasses.replace(case.scenario, cost=cost_settings))))
        checked((timing.server, timing.scenario))
    session = open_session(settings, reporter, containers=cases[0].server.provider == "container")
    before = load_averages()
    measured = [
        (
            measure_case(session, timing, kind="time", label="calibration"),
            measure_case(session, counting, kind="cost", label="calibration"),
        )
        for timing, counting in plans
    ]
    units = server_units(measured[:3])
    reads = page_read_unit(*measured[3], units)
    units = dataclasses.replace(
        units,
        page_read=reads if isinstance(reads, UnitTime) else None,
        page_read_note=reads if isinstance(reads, str) else "",
        run_ids=(*units.run_ids, *(r.run_id for case in measured[3:] for runs in case for r in runs)),
    )
    variables = next((r.variables for r in measured[0][0] if r.ok), {})
    mode = read_mode(variables)
    placed = cases[0].server
    server_cpus = parse_cpus(placed.cpuset) if placed.cpuset else None
    where = f" on CPUs {placed.cpuset}, the server's" if placed.cpuset else ""
    reporter.phase(f"measuring fsync, fdatasync, page reads ({mode}), writes{where}, and the loopback round trip")
    folder = Path(tempfile.gettempdir())
    io = measure_io(
        folder,
        samples=samples,
        direct_reads=mode == "O_DIRECT",
        direct_writes=log_writes_direct(variables),
        server_cpus=server_cpus,
        client_cpus=parse_cpus(placed.client_cpuset) if placed.client_cpuset else None,
    )
    fresh = Calibration(
        testbed=session.testbed.fingerprint,
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        data_dir=str(folder),
        read_mode=mode,
        load=f"{before} before, {load_averages()} after",
        io=io,
        servers=(units,),
        io_cpus=cpu_list(server_cpus),
    )
    try:
        old = load_calibration(settings.baselines_dir, fresh.testbed)
    except OldCalibrationError:  # measured before the two-scenario model: replaced whole
        old = None
    calibration = merged(old, fresh)
    path = save_calibration(settings.baselines_dir, calibration)
    return Calibrated(calibration, path, units.run_ids)


def begin_commit(read_only: Case) -> Case:
    """The calibration's empty transaction (:data:`BEGIN_COMMIT`): ``read_only``'s scenario with no statements
    but BEGIN and COMMIT, under its own name and hashes (its runs are never compared with read_only's); it
    loads read_only's dataset, whose snapshot it shares."""
    scenario = read_only.scenario
    options = {**scenario.options, **_NO_STATEMENTS}
    return Case(
        read_only.server,
        dataclasses.replace(
            scenario,
            name=BEGIN_COMMIT,
            description="BEGIN and COMMIT alone (dbperf calibrate)",
            options=options,
            definition_hash=stable_hash({"of": scenario.definition_hash, "options": options}),
            cost_hash=stable_hash({"of": scenario.cost_hash, "options": options}),
        ),
    )
