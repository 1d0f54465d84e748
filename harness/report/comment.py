"""The pull-request comment: one sticky comment per pull request, rendered here, posted by pr-comment.yml.

The first line is the hidden marker :data:`MARKER`, by which the posting job finds the comment again
and updates it on every push instead of adding another. Below it, in the order a reviewer needs them:

1. the status and headline (never contradicting a row: see :func:`harness.report.verdicts.status`), then
   the largest decided change in words, with its size and both values;
2. **the change under test**: each setting that changed (file and line, section, old → new) and the
   servers compared with their versions;
3. **the worst verdict of each scenario**, one row each (base, head, change and its interval at its real
   level, verdict, reason in words; a count's change is the count's own: :mod:`harness.report.change_cells`);
4. **why**: per regressed cost comparison the metrics that moved, largest first, then (only where
   instructions moved beyond their noise) three functions, with their share;
5. **links**: the full report (the run's artifacts) and anything else a run publishes (trend site);
6. folded: what was judged and every row; then changed query plans and warnings.

GitHub refuses comments longer than :data:`LIMIT` characters. When the comment would be longer, the
plans go first, then the warnings, the folded rows, the functions, the changes and last the worst rows,
and a note says how many were left out; the link to the full report always stays. The output is
deterministic (no clock), so golden files pin it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.model import MetricVerdict, Verdict
from harness.model.verdict_document import Check
from harness.report.capacity_cells import side_cell
from harness.report.change_cells import common_level, fmt_change, fmt_ci, fmt_level
from harness.report.forecast_sections import forecast_comment
from harness.report.mdtable import cell, inert
from harness.report.plan_findings import plans_comment
from harness.report.pr_sections import (
    change_section,
    culprit_section,
    largest_change,
    regressed_explained,
    worst_rows,
)
from harness.report.verdicts import (
    OUTCOME_EMOJI,
    comparison_label,
    headline,
    judged_section,
    metric_label,
    needs_attention,
    outcome_word,
    several_comparisons,
    short_reason,
    status,
    verdict_rows,
)

MARKER = "<!-- dbperf-pr-check -->"
#: GitHub's limit on the body of an issue or pull-request comment, in characters.
LIMIT = 65_536


@dataclass(frozen=True)
class Links:
    """Where the reader finds more: the run page (artifacts) and, when published, the trend site."""

    run_url: str = ""
    site_url: str = ""
    artifact: str = "perf-results"


def _header(several: bool, level: float) -> list[str]:
    ci = f"{fmt_level(level)} CI"
    columns = ["scenario", "threads", "metric", "base", "head", "change", ci, "verdict", "why"]
    if several:
        columns.insert(0, "comparison")
    align = ["---:" if c in ("threads", "base", "head", "change", ci) else ":---" for c in columns]
    return ["| " + " | ".join(columns) + " |", "| " + " | ".join(align) + " |"]


def _row(verdict: Verdict, mv: MetricVerdict, several: bool, level: float) -> str:
    cells = [comparison_label(verdict)] if several else []
    cells += [
        verdict.scenario,
        verdict.threads_label,
        metric_label(mv.metric),
        side_cell(verdict, mv, "base"),  # a capacity figure says when it is extrapolated or a lower bound
        side_cell(verdict, mv, "head"),
        fmt_change(mv),
        fmt_ci(mv, level),
        f"{OUTCOME_EMOJI.get(mv.outcome, '')} {outcome_word(mv)}".strip(),
        short_reason(mv),
    ]
    return "| " + " | ".join(cell(inert(c)) for c in cells) + " |"


def _links(links: Links, flame_graphs: Sequence[str]) -> list[str]:
    out = []
    if links.run_url:
        out.append(
            f"📄 [Full report, verdicts and charts]({links.run_url}) "
            f"(artifact `{links.artifact}`: `report.md`, `verdicts.json`, `site/`)"
        )
    if links.site_url:
        out.append(f"📈 [Trend site]({links.site_url})")
    if flame_graphs:
        where = f"[artifact `{links.artifact}`]({links.run_url})" if links.run_url else f"artifact `{links.artifact}`"
        names = ", ".join(f"`{n}`" for n in flame_graphs)
        out.append(f"🔥 Differential flame graph(s), base → head instructions: {names} ({where})")
    return out


def render_comment(check: Check, *, links: Links = Links(), footer: str = "", limit: int = LIMIT) -> str:
    """The Markdown of the sticky comment, at most ``limit`` characters (see the module docstring)."""
    verdicts, plans, changes = check.document.verdicts, check.document.plans, check.document.changes
    runs, title, warnings = check.runs, check.title, check.warnings
    failed = sum(1 for r in runs if not r.ok)
    several = several_comparisons(verdicts)
    rows = verdict_rows(verdicts)
    level = common_level(mv for _, mv in rows)
    worst = [_row(v, mv, several, level) for v, mv in worst_rows(verdicts)]
    # the fold: every row, those that need attention first (cut last)
    folded = [_row(v, mv, several, level) for v, mv in rows if needs_attention(mv)]
    folded += [_row(v, mv, several, level) for v, mv in rows if not needs_attention(mv)]
    notes = [" ".join(w.split()) for w in dict.fromkeys(warnings) if w.strip()]
    for verdict in verdicts:
        where = (f"{comparison_label(verdict)} " if several else "") + f"{verdict.scenario} {verdict.threads_label}t"
        notes += [f"{where}: {w}" for w in verdict.warnings]
    notes = list(dict.fromkeys(notes))
    if failed:
        notes.append(f"{failed} run(s) failed: see the full report")
    explained = len(regressed_explained(verdicts))
    largest = largest_change(verdicts)

    def build(n: dict[str, int]) -> str:
        lines = [MARKER, f"### {title}", "", f"{status(verdicts, failed)}: {headline(verdicts)}", ""]
        if largest:
            lines += [largest, ""]
        lines += change_section(changes, verdicts, n["changes"])
        if worst:
            heading = "**Worst verdict per scenario**" if len(rows) > len(worst) else "**Verdicts**"
            lines += [heading, "", *_header(several, level), *worst[: n["worst"]], ""]
        lines += culprit_section(verdicts, n["culprits"])
        lines += forecast_comment(verdicts)
        # links: the full report, then whatever else the run publishes (trend site, flame graphs)
        lines += [*_links(links, check.document.flame_graphs), ""]
        judged = [inert(line) for line in judged_section(verdicts)]
        shown = folded[: n["folded"]] if len(rows) > len(worst) else []
        if judged or shown:
            summary = f"What was judged, and all {len(rows)} rows" if shown else "What was judged"
            lines += ["<details>", f"<summary>{summary}</summary>", "", *judged]
            if shown:
                lines += [*_header(several, level), *shown, ""]
            lines += ["</details>", ""]
        left_out = (len(worst) - n["worst"]) + (len(folded) - n["folded"] if len(rows) > len(worst) else 0)
        if left_out:
            lines += [f"⚠️ {left_out} row(s) left out to fit GitHub's comment limit: see the full report.", ""]
        lines += plans_comment(plans, n["plans"])
        if notes[: n["notes"]]:
            lines += ["<details>", f"<summary>⚠️ {len(notes[: n['notes']])} warning(s)</summary>", ""]
            lines += [f"- {cell(inert(note))}" for note in notes[: n["notes"]]]
            lines += ["", "</details>", ""]
        if n["notes"] < len(notes):
            lines += [f"{len(notes) - n['notes']} more warning(s) in the full report.", ""]
        if footer:
            lines += [f"<sub>{footer}</sub>"]
        return "\n".join(lines).rstrip() + "\n"

    n = {
        "plans": sum(len(p.changed) for p in plans),
        "notes": len(notes),
        "folded": len(folded),
        "culprits": explained,
        "changes": len(changes),
        "worst": len(worst),
    }
    text = build(n)
    while len(text) > limit:
        part = next((k for k in n if n[k]), None)  # cut in this order: plans first, the worst rows last
        if part is None:
            marker_only = f"{MARKER}\n### {title}\n\nThe report is too long for a comment: see the full report.\n"
            return marker_only[:limit]
        step = {"plans": 2, "notes": 4, "folded": 4}.get(part, 4)
        n[part] = max(0, n[part] - max(1, n[part] // step))
        text = build(n)
    return text
