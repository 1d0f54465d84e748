"""Every report of a ``dbperf ci run`` in one folder: report.md, verdicts.json, bmf.json and the charts."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness import pipeline
from harness.ci.records import CiPlan
from harness.errors import HarnessError


def write_outputs(out: Path, the_plan: CiPlan, outcome: pipeline.Outcome, *, seconds: float) -> Path:
    """Write the Markdown report (also appended to ``$GITHUB_STEP_SUMMARY``), verdicts, BMF and charts."""
    from harness.report.markdown import render_markdown

    notes = [*the_plan.notes, *outcome.warnings]
    if the_plan.empty:
        notes.append("nothing to run: no server, scenario or harness change between base and head")
    title = f"dbperf performance check: {the_plan.head_ref} vs {the_plan.base_ref}"
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
        head_runs = [r for r in ok_runs if r.label != "base"]
        if head_runs:
            from harness.report.bmf import write_bmf

            try:
                write_bmf(out / "bmf.json", head_runs)
            except HarnessError as exc:
                notes.append(f"BMF file not written: {exc}")
    markdown = render_markdown(outcome.verdicts, outcome.runs, title=title, warnings=notes, chart_links=chart_links)
    markdown += f"\n_{len(outcome.runs)} runs in {seconds / 60:.1f} min; plan: `plan.json`._\n"
    report = out / "report.md"
    report.write_text(markdown)
    document = outcome.document()
    (out / "verdicts.json").write_text(json.dumps({"verdicts": document["verdicts"]}, indent=2, default=str) + "\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with Path(summary).open("a") as handle:
            handle.write(markdown + "\n")
    return report
