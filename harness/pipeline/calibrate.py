"""``dbperf calibrate``: measure this runner's unit times and keep them with its testbed (docs/forecast.md).

One server per call: its timing runs at one client (``repetitions`` of them, the settings' profile and
durations) and one cost run of each of two CPU-bound scenarios of different weight give its server CPU
time per statement and per instruction (solved from the two) and its time per statement outside the server;
the same of point selects on ci's dataset with a 6 MiB buffer pool give its time per page read the pool
missed. The I/O and loopback units are measured beside them in ``$TMPDIR``, where servers keep their
datadirs, the way the server's own variables say it syncs, writes and reads. Every run is stored as usual.
"""

from __future__ import annotations

import dataclasses
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from harness.config.settings import Settings
from harness.measure.calibration import (
    SMALL_POOL,
    load_averages,
    load_calibration,
    log_writes_direct,
    measure_io,
    merged,
    page_read_unit,
    read_mode,
    save_calibration,
    server_units,
)
from harness.measure.session import Reporter
from harness.model.forecast import Calibration, OldCalibrationError, UnitTime
from harness.pipeline.cases import Case, checked, resolve
from harness.pipeline.flow import measure_case
from harness.pipeline.opening import open_session

#: Two scenarios whose time at one client is the server's CPU and the round trips (no syncs, no page reads
#: once warm), of different weight: one statement of ~42,000 instructions, 16 of ~3.6 million together.
CALIBRATION_SCENARIOS = ("oltp_point_select", "oltp_read_only")
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
    units = server_units(measured[:2])
    reads = page_read_unit(*measured[2], units)
    units = dataclasses.replace(
        units,
        page_read=reads if isinstance(reads, UnitTime) else None,
        page_read_note=reads if isinstance(reads, str) else "",
        run_ids=(*units.run_ids, *(r.run_id for case in measured[2:] for runs in case for r in runs)),
    )
    variables = next((r.variables for r in measured[0][0] if r.ok), {})
    mode = read_mode(variables)
    reporter.phase(f"measuring fsync, fdatasync, page reads ({mode}), writes and the loopback round trip")
    folder = Path(tempfile.gettempdir())
    io = measure_io(
        folder, samples=samples, direct_reads=mode == "O_DIRECT", direct_writes=log_writes_direct(variables)
    )
    fresh = Calibration(
        testbed=session.testbed.fingerprint,
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        data_dir=str(folder),
        read_mode=mode,
        load=f"{before} before, {load_averages()} after",
        io=io,
        servers=(units,),
    )
    try:
        old = load_calibration(settings.baselines_dir, fresh.testbed)
    except OldCalibrationError:  # measured before the two-scenario model: replaced whole
        old = None
    calibration = merged(old, fresh)
    path = save_calibration(settings.baselines_dir, calibration)
    return Calibrated(calibration, path, units.run_ids)
