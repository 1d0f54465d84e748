"""The ``dbperf`` command line: one command per task, sharing the pytest plugin's options.

Exit codes: 0 success (or inconclusive without ``--strict``), 1 a performance regression,
2 a usage or harness error (one line on stderr, no traceback), 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

import click

from harness import __version__
from harness.errors import HarnessError, InconclusiveVerdict, PerformanceRegression

EXIT_REGRESSION = 1
EXIT_ERROR = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="dbperf")
def cli() -> None:
    """dbperf: performance-regression checks for MySQL and MariaDB with real servers and sysbench.

    Run a pinned scenario against a server, store every result in DuckDB, and judge
    changes against baselines or in interleaved A/B comparisons.

    \b
    Start here:
      dbperf run --scenario oltp_point_select            # embedded MariaDB, quick profile
      dbperf runs                                        # what is stored
      dbperf scenarios / dbperf servers                  # what can be run

    Settings resolve as: flag > DBPERF_* environment > [tool.dbperf] in pyproject.toml > default.
    """


def _register() -> None:
    from harness.cli import ci_cmds, gate_cmds, report_cmds, run_cmds, store_cmds

    for module in (run_cmds, gate_cmds, report_cmds, ci_cmds, store_cmds):
        module.register(cli)


_register()


_signals: list[int] = []
_INTERRUPTED = "interrupted; servers stopped and temporary files removed"


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGINT/SIGTERM: the first unwinds (servers stop, folders go); a second is noted while that runs;
    a third leaves at once, the rest to the next dbperf command (or `dbperf sweep`)."""
    del frame
    _signals.append(signum)
    name = signal.Signals(signum).name
    if len(_signals) == 1:
        raise KeyboardInterrupt(name)
    if len(_signals) == 2:
        click.echo(
            f"dbperf: {name}: still stopping servers and removing temporary files (again to leave now)", err=True
        )
        return
    click.echo("dbperf: leaving now; the next dbperf command (or `dbperf sweep`) removes what is left", err=True)
    os._exit(130)


def _interrupted() -> None:
    from harness import workspace

    workspace.current().close()
    name = signal.Signals(_signals[0]).name if _signals else "SIGINT"
    click.echo(f"dbperf: {_INTERRUPTED} ({name})", err=True)
    sys.exit(130)


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the CLI and maps outcomes to exit codes."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    try:
        code = cli.main(args=argv, prog_name="dbperf", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _interrupted()
        click.echo("dbperf: aborted", err=True)
        sys.exit(130)
    except HarnessError as exc:
        click.echo(f"dbperf: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except PerformanceRegression as exc:
        click.echo(f"dbperf: regression: {exc}", err=True)
        sys.exit(EXIT_REGRESSION)
    except InconclusiveVerdict as exc:
        click.echo(f"dbperf: inconclusive (--strict): {exc}", err=True)
        sys.exit(EXIT_REGRESSION)
    except KeyboardInterrupt:
        _interrupted()
    sys.exit(code if isinstance(code, int) else 0)
