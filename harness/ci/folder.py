"""Every report of a ``dbperf ci run`` in one folder: report.md, comment.md, verdicts.json, bmf.json, charts,
and a differential flame graph per cost comparison (``flamegraph-<scenario>-<threads>t.svg``).

This is where `ci run` gathers what the renderers of :mod:`harness.report` need (the store's history,
the `GITHUB_*` environment) and writes their output; the renderers themselves take records only.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path

from harness import pipeline
from harness.ci.records import CiPlan
from harness.errors import HarnessError
from harness.model import Outcome
from harness.pipeline.flames import flame_graphs
from harness.report.flamegraph import file_name, markdown_lines, render_svg
from harness.report.mermaid import summary_charts


def run_url(environ: Mapping[str, str]) -> str:
    """The page of this GitHub Actions run (its artifacts hold the full report), or "" outside Actions."""
    parts = [environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}" if all(parts) else ""


def write_outputs(out: Path, the_plan: CiPlan, outcome: Outcome, *, seconds: float) -> Path:
    """Write the Markdown report (also appended to ``$GITHUB_STEP_SUMMARY``, with Mermaid charts), verdicts,
    BMF, charts and flame graphs."""
    from harness.report.capacity_chart import capacity_png
    from harness.report.comment import Links, render_comment
    from harness.report.markdown import render_markdown

    notes = [*the_plan.notes, *outcome.warnings]
    if the_plan.empty:
        notes.append("nothing to run: no server, scenario or harness change between base and head")
    # in a pull request, GitHub names the branches (the refs given are HEAD and a commit id)
    head = os.environ.get("GITHUB_HEAD_REF") or the_plan.head_ref
    base = os.environ.get("GITHUB_BASE_REF") or the_plan.base_ref
    title = f"dbperf performance check: {head} vs {base}"
    chart_links: list[tuple[str, str]] = []
    ok_runs = [r for r in outcome.runs if r.ok]
    if ok_runs:
        try:
            from harness.report.site import build_site
            from harness.store import open_store

            history = pipeline.history(open_store(out / "dbperf.duckdb").metrics_table())
            site = build_site(history, out / "site", images=True)
            chart_links = [(p.stem, str(p.relative_to(out))) for p in site.images[:4]]
        except HarnessError as exc:
            notes.append(f"charts not built: {exc}")
        for verdict in outcome.verdicts:  # capacity at the SLO: p95 against throughput, per side
            png = capacity_png(verdict)
            if png is not None:
                name = f"capacity-{verdict.scenario}.png"
                (out / name).write_bytes(png)
                chart_links.append((name.removesuffix(".png"), name))
        head_runs = [r for r in ok_runs if r.label != "base"]
        if head_runs:
            from harness.report.bmf import write_bmf

            try:
                write_bmf(out / "bmf.json", head_runs)
            except HarnessError as exc:
                notes.append(f"BMF file not written: {exc}")
    flames, flame_notes = flame_graphs(outcome)
    notes += flame_notes
    for graph in flames:
        (out / file_name(graph)).write_text(render_svg(graph))
    flame_names = tuple(file_name(g) for g in flames)
    footer = f"\n_{len(outcome.runs)} runs in {seconds / 60:.1f} min; plan: `plan.json`._\n"
    changes = the_plan.edits
    markdown = render_markdown(
        outcome.verdicts,
        outcome.runs,
        title=title,
        warnings=notes,
        chart_links=chart_links,
        plans=outcome.plans,
        changes=changes,
    )
    report = out / "report.md"
    report.write_text(markdown + _section(markdown_lines(flames)) + footer)
    document = outcome.document()
    verdicts = {"format": document["format"], "verdicts": document["verdicts"]}
    # the change under test: the trusted jobs name it in the comment and annotate its line in the check run
    verdicts["changes"] = [dataclasses.asdict(c) for c in changes]
    if "plans" in document:  # the trusted comment job shows them too (harness.report.trusted_comment)
        verdicts["plans"] = document["plans"]
    if flame_names:  # file names only: the trusted comment job links them (harness.report.trusted_comment)
        verdicts["flame_graphs"] = list(flame_names)
    (out / "verdicts.json").write_text(json.dumps(verdicts, indent=2, default=str) + "\n")
    links = Links(run_url=run_url(os.environ), flame_graphs=flame_names)
    comment = render_comment(
        outcome.verdicts,
        outcome.runs,
        title=title,
        warnings=notes,
        links=links,
        plans=outcome.plans,
        changes=changes,
        footer=f"head {the_plan.head_sha[:12]} vs base {the_plan.base_sha[:12]}; {len(outcome.runs)} runs in "
        f"{seconds / 60:.1f} min",
    )
    (out / "comment.md").write_text(comment)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        text = render_markdown(
            outcome.verdicts, outcome.runs, title=title, warnings=notes, plans=outcome.plans, changes=changes
        )
        with Path(summary).open("a") as handle:
            handle.write(text + _section(summary_charts(outcome.verdicts, flames, len(chart_links))) + footer + "\n")
    return report


def _section(lines: list[str]) -> str:
    return ("\n" + "\n".join(lines).rstrip() + "\n") if lines else ""
