"""The baseline commands: record (run a scenario and keep its repetitions) and show (what is recorded)."""

from __future__ import annotations

import dataclasses
import json
import shlex
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from harness import pipeline
from harness.cli.gate_cmds import echo_error, repetitions_note
from harness.cli.options import RUN_OPTIONS, filters, json_option, pop_shared, shared
from harness.cli.run_cmds import scenario_names
from harness.cli.selection import check_names, no_runs, pop_filter
from harness.judge import stats
from harness.judge.baselines import all_baselines
from harness.model import Outcome, RunResult
from harness.report.tables import new_table, show
from harness.report.terminal import TerminalReporter, console, print_summary


@click.group("baseline")
def baseline_group() -> None:
    """Record and inspect baselines (baselines/<testbed>/<server>/<scenario>/<threads>t.json)."""


@baseline_group.command("record")
@click.option(
    "--force",
    is_flag=True,
    help="replace a baseline recorded for the same build and configuration (its numbers would change by noise only)",
)
@json_option
@shared(*RUN_OPTIONS, "baselines-dir")
def baseline_record(force: bool, as_json: bool, **kwargs: Any) -> int:
    """Run a scenario and record its repetitions as baselines: timing (this testbed) and cost (travels).

    Writes one file per kind and thread count. Refuses when any run failed. A file already there is
    named before anything runs and when it is replaced; one recorded for the same build and
    configuration from at least as many runs is kept unless --force, and said in a note (exit 0: the
    rest was recorded). --repetitions sets the timing runs; with fewer than the gate's design check
    needs, a note gives the count and the exact command (6 for oltp_point_select: then a gate needs
    6 candidate runs, not 500). The cost runs keep their scenario's [cost] count unless --cost is given.

    \b
    Examples:
      dbperf baseline record --scenario oltp_point_select --server mariadb-local --no-cost --repetitions 6
      dbperf baseline record --scenario oltp_point_select --server mariadb-local --cost   # cost runs only
    """
    settings = pop_shared(kwargs)
    server = settings.one_server()
    cases = [pipeline.resolve(settings, name, server) for name in scenario_names(settings)]
    repetitions_note(settings, [c.scenario for c in cases])
    written: list[Path] = []
    outcomes: list[Outcome] = []
    for case in cases:
        outcome = pipeline.record(settings, case, TerminalReporter(sys.stderr), force=force)
        outcomes.append(outcome)
        print_summary(outcome.runs, sys.stderr)
        for warning in outcome.warnings:
            click.echo(f"note: {warning}", err=True)
        written += outcome.written
        if outcome.error:
            break
    runs = [r for o in outcomes for r in o.runs]
    if as_json:
        click.echo(json.dumps({"written": [str(p) for p in written]}, indent=2))
    else:
        for path in written:
            click.echo(f"recorded -> {path} ({_recorded_from(path, runs, settings.baselines_dir)})")
    for outcome in outcomes:
        echo_error(outcome)
    return max(o.exit_code for o in outcomes)


def _recorded_from(path: Path, runs: Sequence[RunResult], root: Path) -> str:
    """``timing, 8 runs at 2 threads``: what one written baseline file holds."""
    try:
        kind = "cost" if path.relative_to(root).parts[0] == "cost" else "time"
    except ValueError:
        kind = "time"
    threads = int(path.stem.rstrip("t")) if path.stem.rstrip("t").isdigit() else 0
    count = sum(1 for r in runs if r.kind == kind and r.threads == threads)
    return f"{'cost' if kind == 'cost' else 'timing'}, {count} runs at {threads} thread{'s' * (threads != 1)}"


@baseline_group.command("show")
@filters("scenario", "server", "threads")
@json_option
@shared("baselines-dir")
def baseline_show(as_json: bool, **kwargs: Any) -> int:
    """Summarise the recorded baselines (median and noise of each metric)."""
    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    every = all_baselines(settings.baselines_dir)
    check_names(
        run_filter,
        catalogue=(settings.scenarios_dir, settings.servers_dir),
        stored=lambda: ([b.scenario for b in every], [b.server for b in every]),
        stored_as=f"the baselines ({settings.baselines_dir})",
    )
    found = [b for b in every if run_filter.matches(b.scenario, b.server, b.threads, "")]
    if not found:
        if every:
            message = f"no baselines match ({run_filter.describe()}) in {settings.baselines_dir}"
        else:
            message = (
                f"no baselines in {settings.baselines_dir} (record one, e.g.: dbperf baseline record "
                f"--scenario oltp_point_select --server mariadb-local --repetitions 6 --baselines-dir "
                f"{shlex.quote(str(settings.baselines_dir))})"
            )
        return no_runs(message, as_json=as_json)
    if as_json:
        click.echo(json.dumps([{**dataclasses.asdict(b), "path": str(b.path)} for b in found], indent=2))
        return 0
    table = new_table(
        f"baselines in {settings.baselines_dir}",
        [
            (col, "left")
            for col in (
                "kind",
                "testbed",
                "server",
                "version",
                "config",
                "scenario",
                "threads",
                "reps",
                "QPS (median)",
                "QPS noise",
                "p95 ms",
                "CPU µs/txn",
                "instr/txn",
                "recorded",
                "git",
            )
        ],
    )
    for b in found:
        qps = b.values("qps")
        p95 = b.values("p95_ms")
        cpu = b.values("cpu_per_txn")
        instr = b.values("instr_per_txn")
        cost = b.kind == "cost"
        table.add_row(
            b.kind,
            "any (travels)" if cost else b.testbed_fingerprint,
            b.server,
            b.server_version,
            b.requested_hash if cost and b.requested_hash else b.config_hash,
            b.scenario,
            str(b.threads),
            str(len(b.run_ids)),
            f"{statistics.median(qps):,.0f}" if qps else "-",
            f"{stats.coefficient_of_variation(qps) * 100:.1f} %" if len(qps) > 1 else "-",
            f"{statistics.median(p95):.3f}" if p95 else "-",
            f"{statistics.median(cpu):.1f}" if cpu else "-",
            f"{statistics.median(instr):,.0f}" if instr else "-",
            b.recorded_at,
            b.git_sha[:10],
        )
    show(console(), table)
    return 0


def register(group: click.Group) -> None:
    group.add_command(baseline_group)
