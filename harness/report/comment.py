"""The pull-request comment: one sticky comment per pull request, rendered here, posted by pr-comment.yml.

The first line is the hidden marker :data:`MARKER`, by which the posting job finds the comment again
and updates it on every push instead of adding another. Below it: what was decided (the headline),
then one row per comparison x scenario x threads x metric (estimate, interval, verdict and the reason
in words), the warnings, and links to the full report and charts (the perf run's ``perf-results``
artifact). Rows that need no attention (a pass, metrics that do not gate) fold into a
``<details>`` block when the table is long.

GitHub refuses comments longer than :data:`LIMIT` characters. When the comment would be longer, the
warnings are dropped first, then rows from the end of the quiet ones, then of the rows that need
attention, and a note says how many were left out; the link to the full report always stays. The
output is deterministic (no clock), so golden files pin it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.model import MetricVerdict, RunResult, Verdict
from harness.model.plan import PlanCheck
from harness.report.mdtable import cell
from harness.report.plans import plans_comment
from harness.report.verdicts import (
    OUTCOME_EMOJI,
    comparison_label,
    fmt_ci,
    fmt_pct,
    headline,
    judged_section,
    metric_label,
    needs_attention,
    outcome_counts,
    outcome_word,
    several_comparisons,
    short_reason,
    verdict_rows,
)

MARKER = "<!-- dbperf-pr-check -->"
#: GitHub's limit on the body of an issue or pull-request comment, in characters.
LIMIT = 65_536
#: Above this many rows, the quiet ones go into a collapsed block.
FOLD_ABOVE = 12


@dataclass(frozen=True)
class Links:
    """Where the reader finds more: the run page (artifacts) and, when published, the trend site."""

    run_url: str = ""
    site_url: str = ""
    artifact: str = "perf-results"


def _status(verdicts: Sequence[Verdict], failed_runs: int) -> str:
    counts = outcome_counts(verdicts)
    if counts["regression"]:
        return "🔴 **Performance regression**"
    if counts["failed"] or failed_runs:
        return "❌ **Performance check failed to run**"
    if not verdicts:
        return "⚪ **Nothing to compare**"
    if counts["inconclusive"] or counts["no_baseline"]:
        return "🟡 **No regression found, but not everything could be decided**"
    if counts["improvement"]:
        return "🟢 **Faster, no regression**"
    return "✅ **No regression**"


def _header(several: bool) -> list[str]:
    columns = ["scenario", "threads", "metric", "change", "95 % CI", "verdict", "why"]
    if several:
        columns.insert(0, "comparison")
    align = ["---:" if c in ("threads", "change", "95 % CI") else ":---" for c in columns]
    return ["| " + " | ".join(columns) + " |", "| " + " | ".join(align) + " |"]


def _row(verdict: Verdict, mv: MetricVerdict, several: bool) -> str:
    cells = [comparison_label(verdict)] if several else []
    cells += [
        verdict.scenario,
        verdict.threads_label,
        metric_label(mv.metric),
        fmt_pct(mv.estimate_pct),
        fmt_ci(mv),
        f"{OUTCOME_EMOJI.get(mv.outcome, '')} {outcome_word(mv)}".strip(),
        short_reason(mv),
    ]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _comparisons(verdicts: Sequence[Verdict]) -> list[str]:
    seen = sorted({(v.mode, v.base, v.base_version, v.head, v.head_version) for v in verdicts})
    lines = []
    for mode, base, base_version, head, head_version in seen:
        b = f"`{base}`" + (f" ({base_version})" if base_version else "")
        h = f"`{head}`" + (f" ({head_version})" if head_version else "")
        lines.append(f"- {b} → {h}" if mode == "ab" else f"- {h} against the stored baseline")
    return lines


def _links(links: Links) -> list[str]:
    out = []
    if links.run_url:
        out.append(
            f"📄 [Full report, verdicts and charts]({links.run_url}) "
            f"(artifact `{links.artifact}`: `report.md`, `verdicts.json`, `site/`)"
        )
    if links.site_url:
        out.append(f"📈 [Trend site]({links.site_url})")
    return out


def render_comment(
    verdicts: Sequence[Verdict],
    runs: Sequence[RunResult] = (),
    *,
    title: str = "dbperf performance check",
    warnings: Sequence[str] = (),
    links: Links = Links(),
    footer: str = "",
    limit: int = LIMIT,
    plans: Sequence[PlanCheck] = (),
) -> str:
    """The Markdown of the sticky comment, at most ``limit`` characters (see the module docstring)."""
    failed = sum(1 for r in runs if not r.ok)
    several = several_comparisons(verdicts)
    rows = verdict_rows(verdicts)
    loud = [_row(v, mv, several) for v, mv in rows if needs_attention(mv)]
    quiet = [_row(v, mv, several) for v, mv in rows if not needs_attention(mv)]
    notes = [" ".join(w.split()) for w in dict.fromkeys(warnings) if w.strip()]
    for verdict in verdicts:
        where = (f"{comparison_label(verdict)} " if several else "") + f"{verdict.scenario} {verdict.threads_label}t"
        notes += [f"{where}: {w}" for w in verdict.warnings]
    notes = list(dict.fromkeys(notes))
    if failed:
        notes.append(f"{failed} run(s) failed: see the full report")

    def build(n_loud: int, n_quiet: int, n_notes: int, n_plans: int) -> str:
        lines = [MARKER, f"### {title}", "", f"{_status(verdicts, failed)}: {headline(verdicts)}", ""]
        lines += _comparisons(verdicts)
        if lines[-1] != "":
            lines.append("")
        lines += judged_section(verdicts)
        shown_loud, shown_quiet = loud[:n_loud], quiet[:n_quiet]
        if len(rows) <= FOLD_ABOVE and n_loud == len(loud) and n_quiet == len(quiet):
            ordered = [_row(v, mv, several) for v, mv in rows]
            lines += [*_header(several), *ordered, ""]
        else:
            if shown_loud:
                lines += [*_header(several), *shown_loud, ""]
            elif not loud:
                lines += ["Every gating metric is unchanged.", ""]
            if shown_quiet:
                summary = f"{len(shown_quiet)} row(s) that pass or do not gate"
                lines += ["<details>", f"<summary>{summary}</summary>", "", *_header(several), *shown_quiet]
                lines += ["", "</details>", ""]
        left_out = (len(loud) - n_loud) + (len(quiet) - n_quiet)
        if left_out:
            lines += [f"⚠️ {left_out} row(s) left out to fit GitHub's comment limit: see the full report.", ""]
        lines += plans_comment(plans, n_plans)
        if notes[:n_notes]:
            lines += ["<details>", f"<summary>⚠️ {len(notes[:n_notes])} warning(s)</summary>", ""]
            lines += [f"- {cell(n)}" for n in notes[:n_notes]]
            lines += ["", "</details>", ""]
        if n_notes < len(notes):
            lines += [f"{len(notes) - n_notes} more warning(s) in the full report.", ""]
        lines += _links(links)
        if footer:
            lines += ["", f"<sub>{footer}</sub>"]
        return "\n".join(lines).rstrip() + "\n"

    n_loud, n_quiet, n_notes = len(loud), len(quiet), len(notes)
    n_plans = sum(len(p.changed) for p in plans)
    text = build(n_loud, n_quiet, n_notes, n_plans)
    while len(text) > limit:
        if n_plans:
            n_plans = max(0, n_plans - max(1, n_plans // 2))
        elif n_notes:
            n_notes = max(0, n_notes - max(1, n_notes // 4))
        elif n_quiet:
            n_quiet = max(0, n_quiet - max(1, n_quiet // 4))
        elif n_loud:
            n_loud = max(0, n_loud - max(1, n_loud // 4))
        else:
            marker_only = f"{MARKER}\n### {title}\n\nThe report is too long for a comment: see the full report.\n"
            return marker_only[:limit]
        text = build(n_loud, n_quiet, n_notes, n_plans)
    return text
