"""The ``dbperf`` command line: one command per task, sharing the pytest plugin's options.

Exit codes: 0 success (or inconclusive without ``--strict``), 1 a performance regression,
2 a usage or harness error (one line on stderr, no traceback), 130 interrupted. Anything else raised is a
bug in dbperf: one line naming the file its traceback went to, and exit 2 (:mod:`harness.crash`).
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import cast

import click

from harness import __version__
from harness.errors import HarnessError, InconclusiveVerdict, PerformanceRegression

EXIT_REGRESSION = 1
EXIT_ERROR = 2
#: The reader of dbperf's output left (``dbperf runs | head``): the code of a process ended by SIGPIPE.
EXIT_PIPE = 141


#: Every command: the module that defines it and its one-line help. The module is imported only when
#: the command runs (or its own --help is asked for), so `dbperf --help` and `dbperf runs` do not load
#: the pipeline, scipy or Docker's client. tests/unit/test_cli_lazy.py checks this table against the
#: commands themselves.
COMMANDS: dict[str, tuple[str, str]] = {
    "baseline": (
        "baseline_cmds",
        "Record and inspect baselines (baselines/<testbed>/<server>/<scenario>/<threads>t.json).",
    ),
    "cache": ("run_cmds", "Dataset snapshots (prepared once, restored for every run)."),
    "calibrate": ("forecast_cmds", "Measure this runner's calibration for forecasts and keep it with its testbed."),
    "calibration": ("forecast_cmds", "Show this testbed's calibration (the unit times forecasts use)."),
    "changes": ("report_cmds", "Find change points in the stored history: every series, or those the filters select."),
    "ci": ("ci_cmds", "Pull-request performance checks, decided from the git diff between two refs."),
    "compare": ("gate_cmds", "A/B-compare two servers (or one with --head-var) on scenarios, interleaved."),
    "export": ("report_cmds", "Write stored results in other tools' formats."),
    "gate": ("gate_cmds", "Run scenarios and judge them against this testbed's baselines."),
    "import": ("import_cmds", "Bring existing results into the store."),
    "judge": ("gate_cmds", "Judge stored runs again, without running anything."),
    "report": (
        "report_cmds",
        "Show stored runs: medians per scenario x server x threads, failures, testbed and versions.",
    ),
    "run": ("run_cmds", "Run scenarios on a server and store every run."),
    "runs": ("run_cmds", "List stored runs, newest first."),
    "scenarios": ("run_cmds", "List the scenario catalogue for a profile (validating every file)."),
    "servers": ("run_cmds", "List the servers (validating every file)."),
    "store": (
        "store_cmds",
        "Inspect, copy, rebuild and maintain the result store (a local file or a shared DuckLake).",
    ),
    "sweep": ("run_cmds", "Remove leftover servers, containers and temporary folders of dbperf processes that died."),
    "trend": ("report_cmds", "Build a static chart site of the stored history (opens from disk, no network needed)."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported when used; its --help lists them from :data:`COMMANDS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module = importlib.import_module(f"harness.cli.{COMMANDS[cmd_name][0]}")
            register = cast(Callable[[click.Group], None], module.register)
            register(self)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [
            (name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit))
            for name in names
            if name in COMMANDS
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


def usage_line(exc: click.ClickException) -> str:
    """A click error in one line (click prints four: usage, a hint, a blank line, the error), keeping its
    "Did you mean" and naming the help to read: ``No such option '--scenarios'. Did you mean '--scenario'?
    (dbperf run --help)``."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" ({ctx.command_path} --help)"
    return message


def main(argv: list[str] | None = None) -> None:
    """Entry point: runs the CLI and maps outcomes to exit codes."""
    try:
        _main(argv)
    except SystemExit as exc:
        _leave_abandoned_stores(exc)
        raise


def _leave_abandoned_stores(exc: SystemExit) -> None:
    """Leave at once when a store stopped answering (see :func:`harness.measure.fallback.call_within`).

    Its connection is still blocked on a worker thread inside DuckDB, and DuckDB's own threads abort
    the process ("terminate called ...") when Python tears the interpreter down around them: the
    closing line is already printed, so clean up as the normal exit would, then end without that."""
    fallback = sys.modules.get("harness.measure.fallback")
    if fallback is None or not fallback.ABANDONED:
        return
    from harness import workspace

    workspace.current().close()
    sys.stdout.flush()
    sys.stderr.flush()
    code = exc.code
    os._exit(code if isinstance(code, int) else (0 if code is None else EXIT_ERROR))


def _reader_gone() -> None:
    """The reader of dbperf's output closed its end (``dbperf runs | head``): not a bug, and nothing more can
    be said to it; leave as a process ended by SIGPIPE does, with no traceback and no crash report."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a stream without a descriptor (captured): nothing to do
            os.dup2(devnull, stream.fileno())
    sys.exit(EXIT_PIPE)


def _main(argv: list[str] | None) -> None:
    """One invocation under dbperf's own SIGINT/SIGTERM handling, counted from its first signal; the handlers
    it replaced are put back when it ends, so an in-process caller (the test suite, a benchmark) keeps its own
    and its next invocation's first interrupt unwinds again."""
    _signals.clear()
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    for signum in previous:
        signal.signal(signum, _terminate)
    try:
        _invoke(argv)
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)


def _invoke(argv: list[str] | None) -> None:
    entered = time.time()
    try:
        code = cli.main(args=argv, prog_name="dbperf", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:  # `dbperf` or `dbperf baseline` alone: the help
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.ClickException as exc:
        click.echo(f"dbperf: error: {usage_line(exc)}", err=True)
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _interrupted()
        click.echo("dbperf: aborted", err=True)
        sys.exit(130)
    except HarnessError as exc:
        click.echo(f"dbperf: error: {exc}", err=True)
        _note_overhead(argv, entered)
        sys.exit(EXIT_ERROR)
    except PerformanceRegression as exc:
        click.echo(f"dbperf: regression: {exc}", err=True)
        _note_overhead(argv, entered)
        sys.exit(EXIT_REGRESSION)
    except InconclusiveVerdict as exc:
        click.echo(f"dbperf: inconclusive (--strict): {exc}", err=True)
        _note_overhead(argv, entered)
        sys.exit(EXIT_REGRESSION)
    except KeyboardInterrupt:
        _interrupted()
    except BrokenPipeError:
        _reader_gone()
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug in dbperf, said in one line (harness.crash)
        from harness.crash import EXIT_CRASH, crash_line

        click.echo(crash_line(exc), err=True)
        sys.exit(EXIT_CRASH)
    _note_overhead(argv, entered)
    sys.exit(code if isinstance(code, int) else 0)


def _note_overhead(argv: list[str] | None, entered: float) -> None:
    """Keep this invocation's time outside its runs on this runner, when it opened a session and ran
    something (:mod:`harness.pipeline.overhead`; the next estimates read it)."""
    overhead = sys.modules.get("harness.pipeline.overhead")  # imported only by a command that opens a session
    if overhead is not None:
        words = argv if argv is not None else sys.argv[1:]
        overhead.note(" ".join(itertools.takewhile(lambda w: not w.startswith("-"), words[:2])), entered)
