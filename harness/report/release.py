"""The report of an A/B comparison written to a folder (``dbperf compare --out DIR``)."""

from __future__ import annotations

import json
from pathlib import Path

from harness import pipeline
from harness.report.markdown import render_markdown


def write_release(out: Path, outcome: pipeline.Outcome, *, seconds: float) -> Path:
    """report.md and verdicts.json in ``out``; returns the report's path."""
    out.mkdir(parents=True, exist_ok=True)
    testbed = outcome.runs[0].testbed if outcome.runs else None
    markdown = render_markdown(outcome.verdicts, outcome.runs, testbed=testbed, warnings=outcome.warnings)
    markdown += f"\n_{len(outcome.runs)} runs in {seconds / 60:.1f} min._\n"
    report = out / "report.md"
    report.write_text(markdown)
    document = outcome.document()
    (out / "verdicts.json").write_text(json.dumps(document, indent=2, default=str) + "\n")
    return report
