"""``dbperf calibrate`` and ``dbperf calibration show``: this runner's unit times for forecasts."""

from __future__ import annotations

import json
from typing import Any

import click

from harness.cli.options import json_option, pop_shared, shared
from harness.model.forecast import Calibration


@click.command("calibrate")
@click.option(
    "--samples", type=click.IntRange(50, 100_000), default=300, show_default=True, help="samples of each I/O unit"
)
@click.option(
    "--runs",
    "repetitions",
    type=click.IntRange(1, 50),
    default=3,
    show_default=True,
    help="timing runs at 1 client of each scenario (their range is the server's units' spread)",
)
@shared("server", "profile", "store", "time", "warmup", "servers-dir", "scenarios-dir", "baselines-dir", "cache-dir")
def calibrate_cmd(samples: int, repetitions: int, **kwargs: Any) -> int:
    """Measure this runner's calibration for forecasts and keep it with its testbed.

    Timing runs at 1 client and one cost run each of oltp_point_select, oltp_read_only and BEGIN and COMMIT
    alone on the server give its server CPU time per statement, per instruction and per miss of a simulated
    instruction cache (the code fetched; solved from the three) and the time each statement adds outside
    the server's CPU; the same of point selects on ci's dataset with a 6 MiB buffer
    pool give its time per page read the pool missed. fsync, fdatasync (after 4, 16 and 64 KiB, and after
    0.5, 2 and 8 ms idle), a bare page read not in cache (O_DIRECT when the server reads so), a write and a
    loopback round trip are measured in $TMPDIR, where servers keep their datadirs, on the server's CPUs (its
    cpuset; the loopback from the client's). Written to
    <baselines-dir>/<testbed>/calibration.json; a changed testbed has none until it is measured again.
    Every run is stored.

    \b
    Example:
      dbperf calibrate --server mariadb-local --time 10
      dbperf calibration show
    """
    from harness.pipeline.calibrate import calibrate
    from harness.report.terminal import TerminalReporter

    settings = pop_shared(kwargs)
    done = calibrate(settings, TerminalReporter(), repetitions=repetitions, samples=samples)
    _print(done.calibration)
    click.echo(f"calibration written to {done.path}")
    return 0


@click.group("calibration")
def calibration_group() -> None:
    """Show this testbed's calibration (the unit times forecasts use)."""


@calibration_group.command("show")
@json_option
@shared("baselines-dir", "testbed-class")
def show_cmd(as_json: bool, **kwargs: Any) -> int:
    """Show the calibration kept for this testbed: each unit's mean, the range the forecast's interval
    uses, and the median and 5-95 % range of its samples."""
    from harness.errors import ConfigError
    from harness.measure.calibration import calibration_path, load_calibration
    from harness.sysbench.driver import check_version
    from harness.testbed import fingerprint

    settings = pop_shared(kwargs)
    version = check_version()
    # a container server's testbed names the container engine too: its calibration is kept apart
    testbeds = dict.fromkeys(
        fingerprint(version, with_engine=engine, hardware_class=settings.testbed_class).fingerprint
        for engine in (False, True)
    )
    found = [c for t in testbeds if (c := load_calibration(settings.baselines_dir, t)) is not None]
    if not found:
        where = calibration_path(settings.baselines_dir, next(iter(testbeds)))
        raise ConfigError(f"this testbed has no calibration ({where}): run `dbperf calibrate` to measure it")
    if as_json:
        click.echo(json.dumps([c.document() for c in found], indent=2))
    for calibration in found if not as_json else ():
        _print(calibration)
    return 0


def _print(calibration: Calibration) -> None:
    from rich.text import Text

    from harness.report.forecast_sections import CALIBRATION_HEADER, calibration_notes, calibration_rows
    from harness.report.tables import new_table, show
    from harness.report.terminal import console

    out = console()
    columns = [(name, "left" if i == 0 else "right") for i, name in enumerate(CALIBRATION_HEADER)]
    table = new_table("dbperf calibration", columns)  # type: ignore[arg-type]
    for row in calibration_rows(calibration):
        table.add_row(*row)
    show(out, table)
    for line in calibration_notes(calibration):
        out.print(Text(line, style="dim"))


def register(group: click.Group) -> None:
    group.add_command(calibrate_cmd)
    group.add_command(calibration_group)
