"""Commands that judge: baseline record/show, gate (against baselines) and compare (A/B)."""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from harness import pipeline
from harness.cli.options import GATE_OPTIONS, pop_shared, shared
from harness.errors import ConfigError
from harness.judge import stats
from harness.judge.baselines import all_baselines
from harness.judge.gate import DEFAULT_ALPHA
from harness.model import Verdict
from harness.report.terminal import TerminalReporter, console, print_summary
from harness.report.verdicts import headline, print_verdicts


@click.group("baseline")
def baseline_group() -> None:
    """Record and inspect baselines (baselines/<testbed>/<server>/<scenario>/<threads>t.json)."""


@baseline_group.command("record")
@click.option("--scenario", "-s", required=True, help="scenario name")
@shared(*GATE_OPTIONS)
def baseline_record(scenario: str, **kwargs: Any) -> int:
    """Run a scenario and record its repetitions as the baseline for this testbed.

    Writes one file per thread count. Refuses when any run failed. Use enough repetitions
    (the profile's, or --repetitions, at least 5) for the gate to be able to decide.
    """
    settings = pop_shared(kwargs)
    outcome = pipeline.record(settings, pipeline.resolve(settings, scenario), TerminalReporter(sys.stderr))
    print_summary(outcome.runs, sys.stderr)
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    for path in outcome.written:
        click.echo(f"recorded -> {path}")
    _closing(outcome)
    return outcome.exit_code


@baseline_group.command("show")
@click.option("--scenario", "-s", help="only this scenario")
@click.option("--server", "server", help="only this server")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@shared("baselines-dir")
def baseline_show(scenario: str | None, server: str | None, as_json: bool, **kwargs: Any) -> int:
    """Summarise the recorded baselines (median and noise of each metric)."""
    settings = pop_shared(kwargs)
    found = [
        b
        for b in all_baselines(settings.baselines_dir)
        if (scenario is None or b.scenario == scenario) and (server is None or b.server == server)
    ]
    if as_json:
        click.echo(json.dumps([{**dataclasses.asdict(b), "path": str(b.path)} for b in found], indent=2))
        return 0
    if not found:
        click.echo(
            f"no baselines in {settings.baselines_dir} (record one: dbperf baseline record --scenario S --server T)"
        )
        return 0
    from rich.table import Table

    table = Table(title=f"baselines in {settings.baselines_dir}", title_justify="left")
    for col in (
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
        "recorded",
        "git",
    ):
        table.add_column(col)
    for b in found:
        qps = b.values("qps")
        p95 = b.values("p95_ms")
        cpu = b.values("cpu_per_txn")
        table.add_row(
            b.testbed_fingerprint,
            b.server,
            b.server_version,
            b.config_hash,
            b.scenario,
            str(b.threads),
            str(len(qps)),
            f"{statistics.median(qps):,.0f}" if qps else "-",
            f"{stats.coefficient_of_variation(qps) * 100:.1f} %" if len(qps) > 1 else "-",
            f"{statistics.median(p95):.3f}" if p95 else "-",
            f"{statistics.median(cpu):.1f}" if cpu else "-",
            b.recorded_at,
            b.git_sha[:10],
        )
    console().print(table)
    return 0


@click.command("gate")
@click.option("--scenario", "-s", required=True, help="scenario name")
@click.option("--strict", is_flag=True, help="exit 1 on inconclusive verdicts too")
@click.option("--alpha", type=float, default=DEFAULT_ALPHA, show_default=True, help="family-wise error rate")
@click.option("--json", "as_json", is_flag=True, help="print the verdicts as JSON on stdout")
@shared(*GATE_OPTIONS)
def gate_cmd(scenario: str, strict: bool, alpha: float, as_json: bool, **kwargs: Any) -> int:
    """Run a scenario and judge it against this testbed's baseline.

    Exit 0 pass (inconclusive too, with a warning, unless --strict), 1 regression, 2 error or failed run.
    With no baseline the runs are stored and the command says how to record one.
    """
    settings = pop_shared(kwargs)
    outcome = pipeline.gate(
        settings,
        [pipeline.resolve(settings, scenario)],
        TerminalReporter(sys.stderr),
        pipeline.JudgeOptions(alpha=alpha, strict=strict),
    )
    if as_json:
        click.echo(json.dumps(outcome.document(), indent=2, default=str))
    else:
        print_summary(outcome.runs)
        print_verdicts(outcome.verdicts)
    _warn_inconclusive(outcome.verdicts, strict)
    _closing(outcome)
    return outcome.exit_code


def _closing(outcome: pipeline.Outcome) -> None:
    if outcome.error:
        click.echo(f"dbperf: error: {outcome.error}", err=True)


def _warn_inconclusive(verdicts: Sequence[Verdict], strict: bool) -> None:
    if any(v.outcome == "inconclusive" for v in verdicts):
        extra = " (--strict: failing)" if strict else ""
        click.echo(f"warning: {headline(verdicts)}: some verdicts are inconclusive{extra}", err=True)


def parse_head_vars(values: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--head-var takes NAME=VALUE (e.g. thread_handling=pool-of-threads), got {item!r}")
        out[name.strip()] = value.strip()
    return out


@click.command("compare")
@click.option("--base", required=True, help="base server")
@click.option("--head", help="head server (default: the base with --head-var overrides)")
@click.option("--head-var", multiple=True, metavar="NAME=VALUE", help="server variable override for the head")
@click.option("--scenario", "-s", "scenario_names", multiple=True, required=True, help="scenario (repeatable)")
@click.option("--max-repetitions", type=int, help="extend inconclusive comparisons up to this many pairs")
@click.option("--seed", type=int, help="seed of the randomised balanced order (printed when not given)")
@click.option("--strict", is_flag=True, help="exit 1 on inconclusive verdicts too")
@click.option("--alpha", type=float, default=DEFAULT_ALPHA, show_default=True, help="family-wise error rate")
@click.option("--json", "as_json", is_flag=True, help="print the verdicts as JSON on stdout")
@click.option("--markdown", "markdown_out", type=click.Path(path_type=Path), help="also write a Markdown report")
@shared(*GATE_OPTIONS)
def compare_cmd(
    base: str,
    head: str | None,
    head_var: tuple[str, ...],
    scenario_names: tuple[str, ...],
    max_repetitions: int | None,
    seed: int | None,
    strict: bool,
    alpha: float,
    as_json: bool,
    markdown_out: Path | None,
    **kwargs: Any,
) -> int:
    """A/B-compare two servers (or one with --head-var) on scenarios, interleaved.

    Base and head run in a randomised balanced order (ABBA...), each repetition on a fresh server
    from the dataset snapshot; per-pair log ratios are judged with the Hodges-Lehmann estimate and
    the exact Wilcoxon signed-rank interval, Holm-corrected across every scenario x metric.

    \b
    Example (what does the thread pool cost or gain?):
      dbperf compare --base mariadb-local --head-var thread_handling=pool-of-threads \\
          --scenario oltp_point_select --repetitions 10
    """
    settings = pop_shared(kwargs)
    overrides = parse_head_vars(head_var)
    if head is None and not overrides:
        raise ConfigError("give --head SERVER or at least one --head-var NAME=VALUE")
    specs = []
    for name in scenario_names:
        base_case = pipeline.resolve(settings, name, base)
        head_server = pipeline.resolve(settings, name, head).server if head else base_case.server
        if overrides:
            head_server = head_server.with_variables(overrides)
        if head_server.name == base_case.server.name and not overrides:
            click.echo("note: base and head are the same server: this is an A/A comparison", err=True)
            head_server = head_server.with_variables({}, name=f"{head_server.name}(A/A)")
        specs.append(pipeline.ComparisonSpec(base_case.server, head_server, base_case.scenario))
    options = pipeline.JudgeOptions(alpha=alpha, strict=strict, seed=seed, max_pairs=max_repetitions)
    outcome = pipeline.compare(settings, specs, TerminalReporter(sys.stderr), options)
    if markdown_out is not None:
        from harness.report.markdown import render_markdown

        testbed = outcome.runs[0].testbed if outcome.runs else None
        markdown_out.write_text(
            render_markdown(outcome.verdicts, outcome.runs, testbed=testbed, warnings=outcome.warnings)
        )
    if as_json:
        click.echo(json.dumps(outcome.document(), indent=2, default=str))
    else:
        print_verdicts(outcome.verdicts)
        click.echo(f"{outcome.pairs} pair(s) in {outcome.looks} look(s), seed {outcome.seed}, group {outcome.group_id}")
    _warn_inconclusive(outcome.verdicts, strict)
    _closing(outcome)
    return outcome.exit_code


def register(group: click.Group) -> None:
    for command in (baseline_group, gate_cmd, compare_cmd):
        group.add_command(command)
