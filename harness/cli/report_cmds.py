"""Commands that show stored results: report, trend, changes, export bmf."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
import pyarrow.compute as pc
from rich.table import Table

from harness import pipeline
from harness.cli.options import pop_shared, shared
from harness.errors import ConfigError, ReportError, StoreError
from harness.model import METRIC_LABELS, METRICS, RunResult
from harness.report.terminal import console, runs_table, scaling_table
from harness.report.verdicts import fmt_value
from harness.store import ResultStore, open_store


def _note(message: str) -> None:
    click.echo(message, err=True)


def select_runs(
    store: ResultStore,
    *,
    group: str | None,
    scenario: str | None,
    server: str | None,
    threads: int | None,
    all_runs: bool,
) -> tuple[list[RunResult], str]:
    """The runs a report is about, and a phrase saying which.

    ``--group`` picks one group; otherwise the group of the newest matching run (one ``dbperf run``
    or ``ci run``), unless ``--all`` asks for every matching run.
    """
    filters: dict[str, Any] = {"scenario": scenario, "server": server, "threads": threads}
    if group is None and not all_runs:
        newest = store.runs(**filters, limit=1)
        if not newest:
            raise StoreError(f"no matching runs in {store.location}: `dbperf runs` lists what is stored")
        group = newest[0].group_id or None
        if group is None:
            raise StoreError(
                f"the newest matching run ({newest[0].run_id}) belongs to no group: pass --group ID, "
                "or --all for every matching run"
            )
        _note(f"dbperf: using the newest group {group} (choose another with --group, or --all)")
    runs = store.runs(**filters, group_id=group)
    if not runs:
        where = f"group {group}" if group else "the filters"
        raise StoreError(f"no runs match {where} in {store.location}: `dbperf runs` lists what is stored")
    described = f"group {group}" if group else "all matching runs"
    return sorted(runs, key=lambda r: (r.scenario, r.server, r.threads, r.repetition, r.run_id)), described


def _chart_links(values: Sequence[str]) -> list[tuple[str, str]]:
    links = []
    for value in values:
        label, sep, url = value.partition("=")
        if not sep or not label or not url:
            raise click.BadParameter(f"{value!r}: use LABEL=URL", param_hint="--chart")
        links.append((label, url))
    return links


@click.command("report")
@click.option("--group", "group", metavar="ID", help="the runs of this group (default: the newest group)")
@click.option("--scenario", "-s", help="only this scenario")
@click.option("--server", "server", metavar="SERVER", help="only this server")
@click.option("--threads", type=int, help="only this thread count")
@click.option("--all", "all_runs", is_flag=True, help="every matching run instead of one group")
@click.option(
    "--format", "fmt", type=click.Choice(["terminal", "markdown"]), default="terminal", show_default=True,
    help="terminal tables, or GitHub Markdown for a job summary or PR comment",
)  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="write to this file instead of stdout")
@click.option("--append", is_flag=True, help="append to --out (e.g. $GITHUB_STEP_SUMMARY) instead of replacing it")
@click.option("--title", help="heading of the Markdown report")
@click.option("--chart", "charts", multiple=True, metavar="LABEL=URL", help="link or embed a chart (repeatable)")
@shared("store")
def report_cmd(
    group: str | None,
    scenario: str | None,
    server: str | None,
    threads: int | None,
    all_runs: bool,
    fmt: str,
    out: Path | None,
    append: bool,
    title: str | None,
    charts: tuple[str, ...],
    **kwargs: Any,
) -> int:
    """Show stored runs: medians per scenario x server x threads, failures, testbed and versions.

    Without --group the newest group of runs is shown (one `dbperf run` or CI job).
    Markdown is what a GitHub job summary or pull-request comment shows; images given with
    --chart ending in .png/.svg are embedded, other URLs linked.

    \b
    Examples:
      dbperf report                                       # newest group, terminal tables
      dbperf report --group nightly-42 --format markdown --out report.md
      dbperf report --scenario oltp_read_only --server mariadb-11.8 --format markdown \\
          --out "$GITHUB_STEP_SUMMARY" --append --chart "trend=png/oltp_read_only-trend.png"
    """
    from harness.report.markdown import render_runs_markdown

    settings = pop_shared(kwargs)
    store = open_store(settings.store)
    runs, described = select_runs(
        store, group=group, scenario=scenario, server=server, threads=threads, all_runs=all_runs
    )
    links = _chart_links(charts)
    if fmt == "markdown":
        text = render_runs_markdown(runs, title=title or f"dbperf: {described}", chart_links=links)
        if out is None:
            click.echo(text, nl=False)
        else:
            try:
                with out.open("a" if append else "w", encoding="utf-8") as handle:
                    handle.write(("\n" if append and out.exists() and out.stat().st_size else "") + text)
            except OSError as exc:
                raise ReportError(f"cannot write {out}: {exc}") from exc
            _note(f"dbperf: wrote the Markdown report of {len(runs)} run(s) to {out}")
        return 0
    if out is not None:
        with out.open("a" if append else "w", encoding="utf-8") as handle:
            _print_runs(runs, described, handle)
        _note(f"dbperf: wrote the report of {len(runs)} run(s) to {out}")
    else:
        _print_runs(runs, described, None)
    return 0


def _print_runs(runs: list[RunResult], described: str, stream: Any) -> None:
    out = console(stream)
    out.print(runs_table(runs, title=f"{len(runs)} run(s): {described}"))
    scaling = scaling_table(runs)
    if scaling is not None:
        out.print(scaling)
    failed = sum(1 for r in runs if not r.ok)
    out.print(f"{len(runs)} run(s), {failed} failed.")


def _filter_in(table: pa.Table, column: str, values: Sequence[object]) -> pa.Table:
    if not values:
        return table
    return table.filter(pc.is_in(table.column(column), value_set=pa.array(list(values))))


@click.command("trend")
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder to write the site to"
)
@click.option("--scenario", "-s", "scenarios", multiple=True, help="only these scenarios (repeatable)")
@click.option("--server", "servers", multiple=True, metavar="SERVER", help="only these servers (repeatable)")
@click.option("--threads", "threads", multiple=True, type=int, help="only these thread counts (repeatable)")
@click.option("--title", default="dbperf trends", show_default=True, help="page title")
@click.option("--no-images", is_flag=True, help="skip the PNG export (faster)")
@click.option("--scale", type=float, default=1.0, show_default=True, help="PNG scale factor (2 for retina)")
@shared("store")
def trend_cmd(
    out: Path,
    scenarios: tuple[str, ...],
    servers: tuple[str, ...],
    threads: tuple[int, ...],
    title: str,
    no_images: bool,
    scale: float,
    **kwargs: Any,
) -> int:
    """Build a static chart site of the stored history (opens from disk, no network needed).

    Per scenario: QPS and p95 across commits (median, min-max band, change points marked), by
    server version (box plots) and against thread count (one line per server and config), with
    dropdown filters for scenario, server and threads and run details on hover. The same charts go
    to OUT/png/ as PNG images for pull requests and READMEs.

    \b
    Examples:
      dbperf trend --out site                       # then open site/index.html
      dbperf trend --out site --scenario oltp_read_only --server mariadb-11.8 --no-images
    """
    from harness.report.site import build_site

    settings = pop_shared(kwargs)
    store = open_store(settings.store)
    table = store.metrics_table(
        scenario=scenarios[0] if len(scenarios) == 1 else None,
        server=servers[0] if len(servers) == 1 else None,
        threads=threads[0] if len(threads) == 1 else None,
    )
    table = _filter_in(_filter_in(_filter_in(table, "scenario", scenarios), "server", servers), "threads", threads)
    result = build_site(pipeline.history(table), out, title=title, images=not no_images, scale=scale)
    click.echo(
        f"wrote {result.index} in {result.seconds:.1f} s: {result.runs:,} ok runs, {result.points:,} commit "
        f"points, {len(result.changes)} change point(s), {len(result.images)} image(s) in {out / 'png'}"
    )
    return 0


@click.command("changes")
@click.option("--scenario", "-s", required=True, help="scenario name")
@click.option("--server", "server", required=True, metavar="SERVER", help="server name")
@click.option("--metric", type=click.Choice(list(METRICS)), default="qps", show_default=True, help="metric to analyse")
@click.option("--threads", type=int, help="only this thread count (default: each thread count separately)")
@click.option("--alpha", type=float, default=0.01, show_default=True, help="significance of each accepted change")
@click.option("--permutations", type=int, default=199, show_default=True, help="shuffles per permutation test")
@click.option("--min-size", type=int, default=3, show_default=True, help="fewest commits on each side of a change")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the permutations (reproducible)")
@click.option("--json", "as_json", is_flag=True, help="print the series and changes as JSON")
@shared("store")
def changes_cmd(
    scenario: str,
    server: str,
    metric: str,
    threads: int | None,
    alpha: float,
    permutations: int,
    min_size: int,
    seed: int,
    as_json: bool,
    **kwargs: Any,
) -> int:
    """Find change points in the stored history of one scenario on one server.

    The series is the median of the repetitions per commit (runs without a git sha are grouped by
    day), in time order, one series per thread count. Changes are found by E-divisive means with a
    permutation test (as in MongoDB's and Apache Otava's performance CI); each is printed with the
    levels before and after, its size in % and its confidence (1 - p).

    \b
    Examples:
      dbperf changes --scenario oltp_read_only --server mariadb-11.8 --metric qps
      dbperf changes -s oltp_point_select --server mysql-9.7 --metric p95_ms --threads 8 --json
    """
    from harness.judge.changes import change_marks
    from harness.store.history import commit_points

    settings = pop_shared(kwargs)
    if min_size < 2:
        raise click.BadParameter("must be at least 2", param_hint="--min-size")
    if not 0.0 < alpha < 1.0:
        raise click.BadParameter("must be between 0 and 1", param_hint="--alpha")
    store = open_store(settings.store)
    table = store.metrics_table(scenario=scenario, server=server, threads=threads, status="ok")
    if table.num_rows == 0:
        raise StoreError(
            f"no ok runs of {scenario} on {server}{f' at {threads} threads' if threads else ''} in "
            f"{store.location}: `dbperf runs --scenario {scenario}` lists what is stored"
        )
    points = commit_points(table, (metric,))
    try:
        marks = change_marks(points, (metric,), alpha=alpha, permutations=permutations, min_size=min_size, seed=seed)
    except ValueError as exc:
        raise ConfigError(f"change-point detection: {exc}") from exc
    counts = points.group_by("threads").aggregate([(metric, "count")]).to_pylist()
    lengths = {int(r["threads"]): int(r[f"{metric}_count"]) for r in counts}
    if as_json:
        doc = {
            "scenario": scenario,
            "server": server,
            "metric": metric,
            "method": {"name": "e-divisive means", "alpha": alpha, "permutations": permutations,
                       "min_size": min_size, "seed": seed},
            "series": [
                {
                    "threads": t,
                    "points": n,
                    "changes": [m.as_dict() for m in marks if m.threads == t],
                }
                for t, n in sorted(lengths.items())
            ],
        }  # fmt: skip
        click.echo(json.dumps(doc, indent=2))
        return 0
    out = console()
    label = METRIC_LABELS.get(metric, metric)
    table_out = Table(title=f"change points: {scenario} on {server}, {label} (alpha {alpha:g})", title_justify="left")
    for name in ("threads", "at", "commit / day", "first run", "before", "after", "change", "p", "confidence"):
        table_out.add_column(name, justify="right" if name not in ("commit / day", "first run") else "left")
    for m in marks:
        worse = (m.change_pct < 0) == (not METRICS[metric])
        style = "red" if worse else "green"
        table_out.add_row(
            str(m.threads), f"{m.index + 1}/{m.series_length}", m.point[:12], m.at,
            f"{fmt_value(m.before)}", f"{fmt_value(m.after)}", f"[{style}]{m.change_pct:+.1f} %[/{style}]",
            f"{m.p_value:.3f}", f"{m.confidence * 100:.1f} %",
        )  # fmt: skip
    if marks:
        out.print(table_out)
    for t, n in sorted(lengths.items()):
        found = sum(1 for m in marks if m.threads == t)
        note = f" (too short: at least {2 * min_size} commits are needed)" if n < 2 * min_size else ""
        out.print(f"{t} thread(s): {n} commit(s), {found} change point(s){note}")
    if not marks:
        out.print("no change points found")
    return 0


@click.group("export")
def export_group() -> None:
    """Write stored results in other tools' formats."""


@export_group.command("bmf")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="JSON file to write")
@click.option("--group", "group", metavar="ID", help="the runs of this group (default: the newest group)")
@click.option("--scenario", "-s", help="only this scenario")
@click.option("--server", "server", metavar="SERVER", help="only this server")
@click.option("--threads", type=int, help="only this thread count")
@click.option("--all", "all_runs", is_flag=True, help="every matching run instead of one group")
@shared("store")
def export_bmf(
    out: Path,
    group: str | None,
    scenario: str | None,
    server: str | None,
    threads: int | None,
    all_runs: bool,
    **kwargs: Any,
) -> int:
    """Write Bencher Metric Format (BMF) JSON for `bencher run --adapter json`.

    One benchmark per <server>/<scenario>/<threads>t with the measures throughput (median QPS),
    p95-latency and p99-latency (ms), cpu-per-txn (µs) and instructions-per-txn when measured;
    lower_value/upper_value are the min and max over the repetitions. Only ok runs are exported,
    and the document is validated against the BMF schema before it is written.

    \b
    Examples:
      dbperf export bmf --out bmf.json                      # the newest group
      dbperf export bmf --out bmf.json --group "$GITHUB_RUN_ID"
      bencher run --adapter json --file bmf.json --project dbperf --branch main --testbed bench-01 \\
          --threshold-measure throughput --threshold-test t_test --threshold-lower-boundary 0.99 --err
    """
    from harness.report.bmf import write_bmf

    settings = pop_shared(kwargs)
    store = open_store(settings.store)
    runs, described = select_runs(
        store, group=group, scenario=scenario, server=server, threads=threads, all_runs=all_runs
    )
    doc = write_bmf(out, runs)
    measures = sum(len(m) for m in doc.values())
    skipped = sum(1 for r in runs if not r.ok)
    click.echo(
        f"wrote {len(doc)} benchmark(s), {measures} measure(s) from {len(runs) - skipped} ok run(s) of "
        f"{described} to {out}" + (f" ({skipped} failed run(s) left out)" if skipped else "")
    )
    return 0


def register(group: click.Group) -> None:
    for command in (report_cmd, trend_cmd, changes_cmd, export_group):
        group.add_command(command)
