"""Every report of a ``dbperf ci run`` in one folder: report.md, comment.md, verdicts.json, bmf.json, charts,
and a differential flame graph per cost comparison (``flamegraph-<scenario>-<threads>t.svg``).

This is where `ci run` gathers what the renderers of :mod:`harness.report` need (the store's history,
the `GITHUB_*` environment) and writes their output; the renderers themselves take records only.

Every file is written whole or not at all (:func:`harness.report.atomic_files.write_atomic`), verdicts.json
first; a file that cannot be written (a full or read-only disk) is named in :attr:`Written.failed` and
the others are still tried. verdicts.json that cannot go to the folder goes to the unsaved-run folder
(:func:`harness.measure.fallback.unsaved_folders`), so a full disk never loses the verdicts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness import pipeline
from harness.ci.records import CiPlan
from harness.errors import HarnessError, ReportError
from harness.measure.fallback import unsaved_folders
from harness.model import Outcome
from harness.model.verdict_document import Check, VerdictDocument, document_of, dump_document
from harness.pipeline.outcome_flames import flame_graphs
from harness.report.atomic_files import write_atomic
from harness.report.file_names import file_name as safe_file_name
from harness.report.flame_svg import file_name, markdown_lines, render_svg
from harness.report.mermaid import summary_charts


@dataclass(frozen=True)
class Written:
    """What :func:`write_outputs` wrote: the report's path, where verdicts.json went (``None``: nowhere),
    and each file it could not write with the cause (``report.md (No space left on device)``)."""

    report: Path
    verdicts: Path | None
    failed: tuple[str, ...] = ()


class _Files:
    """Writes into ``out``, noting each file that could not be written instead of stopping."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.failed: list[str] = []

    def put(self, name: str, data: str | bytes) -> Path | None:
        try:
            return write_atomic(self.out / name, data)
        except HarnessError as exc:
            cause = exc.__cause__.strerror if isinstance(exc.__cause__, OSError) else None
            self.failed.append(f"{name} ({cause or exc})")
            return None


def run_url(environ: Mapping[str, str]) -> str:
    """The page of this GitHub Actions run (its artifacts hold the full report), or "" outside Actions."""
    parts = [environ.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    return f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}" if all(parts) else ""


def write_outputs(out: Path, the_plan: CiPlan, outcome: Outcome, *, seconds: float) -> Written:
    """Write verdicts.json, then the Markdown report (also appended to ``$GITHUB_STEP_SUMMARY``, with Mermaid
    charts), comment, BMF, charts and flame graphs; see the module docstring for a disk that refuses them."""
    from harness.report.capacity_chart import capacity_png
    from harness.report.comment import Links, render_comment
    from harness.report.markdown import render_markdown

    files = _Files(out)
    flames, flame_notes = flame_graphs(outcome)
    flame_names = tuple(file_name(g) for g in flames)
    # the change under test goes in too: the trusted jobs name it in the comment and annotate its line
    document = document_of(outcome, the_plan.edits, flame_names)
    kept = _write_verdicts(files, the_plan, document)
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
        except (ReportError, OSError) as exc:  # a full or read-only disk: said in the closing line too
            notes.append(f"charts not built: {exc}")
            files.failed.append(f"site/ ({exc})")
        except HarnessError as exc:
            notes.append(f"charts not built: {exc}")
        for verdict in document.verdicts:  # capacity at the SLO: p95 against throughput, per side
            png = capacity_png(verdict)
            if png is not None:
                name = safe_file_name(verdict.scenario, prefix="capacity-", suffix=".png")
                if files.put(name, png):
                    chart_links.append((name.removesuffix(".png"), name))
        head_runs = [r for r in ok_runs if r.label != "base"]
        if head_runs:
            from harness.report.bmf import write_bmf

            try:
                write_bmf(out / "bmf.json", head_runs)
            except HarnessError as exc:
                notes.append(f"BMF file not written: {exc}")
                files.failed.append(f"bmf.json ({exc})")
    notes += flame_notes
    for graph in flames:
        files.put(file_name(graph), render_svg(graph))
    footer = f"\n_{len(outcome.runs)} runs in {seconds / 60:.1f} min; plan: `plan.json`._\n"
    check = Check(document, outcome.runs, title, tuple(notes))
    markdown = render_markdown(check, chart_links=chart_links)
    report = out / "report.md"
    files.put(report.name, markdown + _section(markdown_lines(flames)) + footer)
    comment = render_comment(
        check,
        links=Links(run_url=run_url(os.environ)),
        footer=f"head {the_plan.head_sha[:12]} vs base {the_plan.base_sha[:12]}; {len(outcome.runs)} runs in "
        f"{seconds / 60:.1f} min",
    )
    files.put("comment.md", comment)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        text = render_markdown(check)
        try:  # GitHub's own file, appended to (the runner's disk may be full too)
            with Path(summary).open("a") as handle:
                handle.write(
                    text + _section(summary_charts(document.verdicts, flames, len(chart_links))) + footer + "\n"
                )
        except OSError as exc:
            files.failed.append(f"$GITHUB_STEP_SUMMARY ({exc.strerror})")
    return Written(report, kept, tuple(files.failed))


def _write_verdicts(files: _Files, the_plan: CiPlan, document: VerdictDocument) -> Path | None:
    """verdicts.json into the folder, else into the first unsaved-run folder that takes it."""
    text = dump_document(document)
    kept = files.put("verdicts.json", text)
    for folder in [] if kept else unsaved_folders(files.out / "dbperf.duckdb"):
        try:
            return write_atomic(folder / f"verdicts-{the_plan.head_sha[:12]}-{os.getpid()}.json", text)
        except HarnessError:
            continue
    return kept


def _section(lines: list[str]) -> str:
    return ("\n" + "\n".join(lines).rstrip() + "\n") if lines else ""
