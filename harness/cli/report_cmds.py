"""Commands that show stored results: report, trend, changes, export bmf."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pyarrow as pa
import pyarrow.compute as pc

from harness import pipeline
from harness.cli.options import filters, json_option, pop_shared, shared
from harness.cli.selection import RunFilter, check_filter, no_runs, note, nothing_matches, pop_filter, select_runs
from harness.config.values import parse_metrics
from harness.errors import ConfigError
from harness.model import METRICS, RunResult
from harness.model import metrics as catalogue
from harness.report.operation_tables import operations_table
from harness.report.tables import fmt_value, new_table, show
from harness.report.terminal import RUNS_OPTIONAL, console, runs_table, scaling_table
from harness.store import ResultStore, open_store


def _chart_links(values: Sequence[str]) -> list[tuple[str, str]]:
    links = []
    for value in values:
        label, sep, url = value.partition("=")
        if not sep or not label or not url:
            raise click.BadParameter(f"{value!r}: use LABEL=URL", param_hint="--chart")
        links.append((label, url))
    return links


def group_options(func: Any) -> Any:
    """``--group ID`` / ``--all``: which stored runs (default: the newest group)."""
    func = click.option("--all", "all_runs", is_flag=True, help="every matching run instead of one group")(func)
    return click.option("--group", "group", metavar="ID", help="the runs of this group (default: the newest group)")(
        func
    )


def write_text(out: Path, text: str, *, append: bool = False) -> None:
    """The whole file or none (harness.report.atomic_files): never a 0-byte or cut one on a full disk."""
    from harness.report.atomic_files import append_atomic, write_atomic

    (append_atomic if append else write_atomic)(out, text)


@click.command("report")
@group_options
@filters("scenario", "server", "threads", "profile")
@click.option(
    "--format", "fmt", type=click.Choice(["terminal", "markdown"]), default="terminal", show_default=True,
    help="terminal tables, or GitHub Markdown for a job summary",
)  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="write to this file instead of stdout")
@click.option("--append", is_flag=True, help="append to --out (e.g. $GITHUB_STEP_SUMMARY) instead of replacing it")
@click.option("--title", help="heading of the Markdown report")
@click.option("--chart", "charts", multiple=True, metavar="LABEL=URL", help="link or embed a chart (repeatable)")
@json_option
@shared("store")
def report_cmd(
    group: str | None,
    all_runs: bool,
    fmt: str,
    out: Path | None,
    append: bool,
    title: str | None,
    charts: tuple[str, ...],
    as_json: bool,
    **kwargs: Any,
) -> int:
    """Show stored runs: medians per scenario x server x threads, failures, testbed and versions.

    Without --group the newest group of runs is shown (one `dbperf run` or CI job).
    Markdown is what a GitHub job summary shows; images given with --chart ending in .png/.svg are
    embedded, other URLs linked. (Verdicts of stored runs: `dbperf judge`.)

    \b
    Examples:
      dbperf report                                       # newest group, terminal tables
      dbperf report --group 20261123T152526-6528e6 --format markdown --out report.md
      dbperf report --all --server mariadb-11.8 --format markdown \\
          --out "$GITHUB_STEP_SUMMARY" --append --chart "trend=png/oltp_read_only-trend.png"
    """
    from harness.report.runs_markdown import render_runs_markdown

    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    if append and out is None:
        raise ConfigError("--append needs --out FILE")
    if fmt != "markdown" and (title or charts):
        raise ConfigError("--title and --chart shape the Markdown report: add --format markdown")
    if as_json and fmt != "terminal":
        raise ConfigError("--json prints the runs as JSON: leave out --format")
    store = open_store(settings.store)
    check_filter(run_filter, store, settings)
    runs, described = select_runs(store, run_filter, group=group, all_runs=all_runs)
    if not runs:
        return no_runs(f"{described}; nothing reported", as_json=as_json)
    if as_json:
        text = json.dumps([r.summary_dict() for r in runs], indent=2) + "\n"
    elif fmt == "markdown":
        text = render_runs_markdown(runs, title=title or f"dbperf: {described}", chart_links=_chart_links(charts))
    else:
        if out is not None:
            with out.open("a" if append else "w", encoding="utf-8") as handle:
                _print_runs(runs, described, handle)
            note(f"dbperf: wrote the report of {len(runs)} run(s) to {out}")
        else:
            _print_runs(runs, described, None)
        return 0
    if out is None:
        click.echo(text, nl=False)
    else:
        write_text(out, text, append=append)
        note(f"dbperf: wrote the report of {len(runs)} run(s) to {out}")
    return 0


def _print_runs(runs: list[RunResult], described: str, stream: Any) -> None:
    out = console(stream)
    show(out, runs_table(runs, title=f"{len(runs)} run(s): {described}"), RUNS_OPTIONAL)
    scaling = scaling_table(runs)
    if scaling is not None:
        show(out, scaling)
    per_type = operations_table(runs)
    if per_type is not None:
        show(out, per_type)
    failed = sum(1 for r in runs if not r.ok)
    out.print(f"{len(runs)} run(s), {failed} failed.")


def metrics_table(store: ResultStore, run_filter: RunFilter, status: str | None = None) -> pa.Table:
    """The stored runs matching the filter, as a metrics table."""
    return run_filter.table(store.metrics_table(**run_filter.store_args(), status=status))


def _profiles_apart(table: pa.Table) -> pa.Table:
    """Runs of several profiles are different workloads: chart them as different series.

    The charts draw one series per server; with more than one profile among the runs, the server is
    shown as ``server [profile]`` so the ci runs of pushes never join the full runs of the nightly.
    """
    if table.num_rows == 0 or len(set(table.column("profile").to_pylist())) < 2:
        return table
    labels = pc.binary_join_element_wise(table.column("server"), pc.fill_null(table.column("profile"), "?"), " [")
    labels = pc.binary_join_element_wise(labels, pa.scalar("]"), "")
    return table.set_column(table.schema.get_field_index("server"), "server", labels)


@click.command("trend")
@click.option(
    "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder to write the site to"
)
@filters("scenario", "server", "threads", "profile")
@click.option("--title", default="dbperf trends", show_default=True, help="page title")
@click.option("--no-images", is_flag=True, help="skip the PNG export (faster)")
@click.option("--scale", type=float, help="PNG scale factor (2 for retina) [default: 1]")
@json_option
@shared("store")
def trend_cmd(out: Path, title: str, no_images: bool, scale: float | None, as_json: bool, **kwargs: Any) -> int:
    """Build a static chart site of the stored history (opens from disk, no network needed).

    Per scenario: QPS and p95 across commits (median, min-max band, change points marked), by
    server version (box plots) and against thread count (one line per server and config), with
    dropdown filters for scenario, server and threads and run details on hover; instructions per
    transaction and the work vector from cost runs (axes zoomed to the data); a release view (server
    versions side by side, timing and cost); what every mark and config hash means. Points with runs
    measured under load are ringed. The page fits a phone and a wide screen. The same charts go to
    OUT/png/ as PNG images (at most 2,000 px wide) for pull requests and READMEs. Runs of different
    profiles are different workloads: with several among the runs, each server is charted per profile
    ("server [profile]"). Runs of a one-off configuration (compare --head-var), of a working tree with
    uncommitted changes, or a pull request's base side (S@base) are drawn apart, faint and dashed with
    their own legend entry, and never join a series.

    \b
    Examples:
      dbperf trend --out site                       # then open site/index.html
      dbperf trend --out site --scenario oltp_read_only --server mariadb-11.8 --profile ci --no-images
    """
    from harness.report.site import build_site

    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    if no_images and scale is not None:
        raise ConfigError("--scale sets the size of the PNG images: leave it out with --no-images")
    store = open_store(settings.store)
    check_filter(run_filter, store, settings)
    table = _profiles_apart(metrics_table(store, run_filter))
    if "ok" not in table.column("status").to_pylist():
        return no_runs(f"{nothing_matches(store, run_filter, ok=True)}; nothing charted, {out} not written")
    result = build_site(pipeline.history(table), out, title=title, images=not no_images, scale=scale or 1.0)
    if as_json:
        doc = {
            "index": str(result.index),
            "seconds": round(result.seconds, 3),
            "runs": result.runs,
            "points": result.points,
            "change_points": len(result.changes),
            "images": [str(p) for p in result.images],
        }
        click.echo(json.dumps(doc, indent=2))
        return 0
    click.echo(
        f"wrote {result.index} in {result.seconds:.1f} s: {result.runs:,} ok runs, {result.points:,} commit "
        f"points, {len(result.changes)} change point(s), {len(result.images)} image(s) in {out / 'png'}"
    )
    return 0


@click.command("changes")
@filters("scenario", "server", "threads", "profile")
@click.option(
    "--metric",
    "metric_values",
    multiple=True,
    metavar="METRIC",
    help=f"metrics to analyse, comma-separated, repeatable; of {', '.join(METRICS)} [default: qps]",
)
@click.option("--alpha", type=float, default=0.01, show_default=True, help="significance of each accepted change")
@click.option("--permutations", type=int, default=199, show_default=True, help="shuffles per permutation test")
@click.option("--min-size", type=int, default=3, show_default=True, help="fewest commits on each side of a change")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the permutations (reproducible)")
@json_option
@shared("store")
def changes_cmd(
    metric_values: tuple[str, ...],
    alpha: float,
    permutations: int,
    min_size: int,
    seed: int,
    as_json: bool,
    **kwargs: Any,
) -> int:
    """Find change points in the stored history: every series, or those the filters select.

    A series is one server x scenario x profile x kind x thread count: the median of the repetitions
    per commit (runs without a git sha are grouped by day), in time order. Profiles never mix (the ci
    runs of pushes and the full runs of the nightly are different workloads), and runs of a one-off
    configuration (--head-var) or an uncommitted working tree are left out. Changes are found by
    E-divisive means with a permutation test (as in MongoDB's and Apache Otava's performance CI);
    each is printed with the levels before and after, its size in % and its confidence (1 - p).

    \b
    Examples:
      dbperf changes                                           # every series, QPS
      dbperf changes --profile full --metric qps,cpu_per_txn   # what the nightly reports
      dbperf changes -s oltp_point_select --server mysql-9.7 --metric p95_ms --threads 8 --json
    """
    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    metrics = parse_metrics(metric_values or ("qps",), "--metric")
    if min_size < 2:
        raise click.BadParameter("must be at least 2", param_hint="--min-size")
    if not 0.0 < alpha < 1.0:
        raise click.BadParameter("must be between 0 and 1", param_hint="--alpha")
    store = open_store(settings.store)
    check_filter(run_filter, store, settings)
    table = metrics_table(store, run_filter, status="ok")
    if table.num_rows == 0:
        empty = json.dumps({"metrics": list(metrics), "series": []})
        return no_runs(nothing_matches(store, run_filter, ok=True), as_json=as_json, empty=empty)
    found = pipeline.changes(table, metrics, alpha=alpha, permutations=permutations, min_size=min_size, seed=seed)
    series = [s.as_dict() for s in found]
    marks = [(s, m) for s in found for m in s.changes]
    if as_json:
        doc = {
            "metrics": list(metrics),
            "filters": run_filter.describe(),
            "method": {"name": "e-divisive means", "alpha": alpha, "permutations": permutations,
                       "min_size": min_size, "seed": seed},
            "series": series,
        }  # fmt: skip
        click.echo(json.dumps(doc, indent=2))
        return 0
    out = console()
    if marks:
        table_out = new_table(
            f"change points (alpha {alpha:g})",
            [
                (name, "right" if name in ("threads", "at", "before", "after", "change", "p", "confidence") else "left")
                for name in (
                    "server", "scenario", "profile", "threads", "metric", "at", "commit / day", "first run",
                    "before", "after", "change", "p", "confidence",
                )
            ],
        )  # fmt: skip
        for s, m in marks:
            worse = (m.change_pct < 0) == (not catalogue.higher_is_worse(m.metric))
            style = "red" if worse else "green"
            table_out.add_row(
                s.server, s.scenario, s.profile + ("/cost" if s.kind == "cost" else ""),
                str(m.threads), catalogue.label(m.metric), f"{m.index + 1}/{m.series_length}",
                m.point[:12], m.at, fmt_value(m.before), fmt_value(m.after),
                f"[{style}]{m.change_pct:+.1f} %[/{style}]", f"{m.p_value:.3f}", f"{m.confidence * 100:.1f} %",
            )  # fmt: skip
        show(out, table_out, ("first run", "p", "profile", "commit / day", "before", "after"))
    from harness.judge.gate import KIND_METRICS

    def labels(names: Sequence[str]) -> str:
        return ", ".join(catalogue.label(m) for m in names)

    unmeasured: set[str] = set()
    for s in found:  # each series names the metrics its kind of run measures (cost runs have no QPS)
        short = f" (too short: at least {2 * min_size} commits are needed)" if s.points < 2 * min_size else ""
        kind = "/cost" if s.kind == "cost" else ""
        own = [m for m in metrics if m in KIND_METRICS.get(s.kind, metrics)]  # type: ignore[call-overload]
        what = f"{len(s.changes)} change point(s) in {labels(own)}" if own else f"no {labels(metrics)} in {s.kind} runs"
        unmeasured.update(m for m in metrics if m not in own)
        out.print(
            f"{s.server} {s.scenario} {s.profile}{kind} {s.threads}t: {s.points} commit(s), {what}{short}", markup=False
        )
    note = f" ({labels(sorted(unmeasured))}: not measured by cost runs; --metric instr_per_txn)" if unmeasured else ""
    out.print(f"{len(series)} series, {len(marks)} change point(s) in {labels(metrics)}{note}", markup=False)
    return 0


@click.group("export")
def export_group() -> None:
    """Write stored results in other tools' formats."""


@export_group.command("bmf")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="JSON file to write")
@group_options
@filters("scenario", "server", "threads", "profile")
@json_option
@shared("store")
def export_bmf(out: Path, group: str | None, all_runs: bool, as_json: bool, **kwargs: Any) -> int:
    """Write Bencher Metric Format (BMF) JSON for `bencher run --adapter json`.

    One benchmark per <server>/<scenario>/<profile>/<threads>t with the measures throughput (median
    QPS), p95-latency and p99-latency (ms), cpu-per-txn (µs) and instructions-per-txn when measured
    (cost runs: <...>/cost with instructions-per-txn); lower_value/upper_value are the min and max over
    the repetitions. Only ok runs are exported, and the document is validated against the BMF schema
    before it is written. Without --group or --all, the newest group: one `dbperf run` of one server;
    a CI job that ran several should export its own store with --all.

    \b
    Examples:
      dbperf export bmf --out bmf.json                      # the newest group
      dbperf export bmf --out bmf.json --all                # every run of the store (a CI job's own store)
      bencher run --adapter json --file bmf.json --project dbperf --branch main --testbed bench-01 \\
          --threshold-measure throughput --threshold-test t_test --threshold-lower-boundary 0.99 --err
    """
    from harness.report.bmf import write_bmf

    settings = pop_shared(kwargs)
    run_filter = pop_filter(kwargs)
    store = open_store(settings.store)
    check_filter(run_filter, store, settings)
    runs, described = select_runs(store, run_filter, group=group, all_runs=all_runs, quiet=as_json)
    if not runs:
        empty = json.dumps({"out": None, "benchmarks": [], "measures": 0, "skipped": 0})
        return no_runs(f"{described}; {out} not written", as_json=as_json, empty=empty)
    doc = write_bmf(out, runs)
    measures = sum(len(m) for m in doc.values())
    skipped = sum(1 for r in runs if not r.ok)
    if as_json:
        click.echo(json.dumps({"out": str(out), "benchmarks": sorted(doc), "measures": measures, "skipped": skipped}))
        return 0
    click.echo(
        f"wrote {len(doc)} benchmark(s), {measures} measure(s) from {len(runs) - skipped} ok run(s) of "
        f"{described} to {out}" + (f" ({skipped} failed run(s) left out)" if skipped else "")
    )
    return 0


def register(group: click.Group) -> None:
    for command in (report_cmd, trend_cmd, changes_cmd, export_group):
        group.add_command(command)
