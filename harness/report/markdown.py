"""GitHub-flavoured Markdown of verdicts, for job summaries and the release report.

:func:`render_markdown` renders verdicts (A/B or against a baseline): a headline with the count of
comparisons per outcome, one table row per scenario x threads x metric (base, head, change and its
interval at its real level, verdict with an emoji *and* a word, short reason), the functions whose
instructions changed, then the closing sections of :mod:`harness.report.mdsections` (warnings,
failed runs, testbed and server versions, charts). Plain runs without verdicts are rendered by
:mod:`harness.report.runs_markdown`.

Long tables stay readable: above :data:`~harness.report.mdtable.COLLAPSE_ABOVE` rows the rows that
need attention stay in view and everything else goes into a collapsible ``<details>`` block. The
output is deterministic (no clock, no host names beyond the testbed), so golden-file tests can pin it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.model import MetricVerdict, Testbed, Verdict
from harness.model.verdict_document import Check
from harness.report.capacity_cells import side_cell
from harness.report.change_cells import ci_header, common_level, fmt_change, fmt_ci
from harness.report.forecast_sections import forecast_markdown
from harness.report.mdsections import ChartLinks, closing, run_notes
from harness.report.mdtable import COLLAPSE_ABOVE, details, short, table
from harness.report.operation_tables import operations_markdown
from harness.report.plan_findings import plans_markdown
from harness.report.pr_sections import change_section, server_pairs
from harness.report.verdicts import (
    OUTCOME_EMOJI,
    OUTCOME_ORDER,
    OUTCOME_WORDS,
    comparison_label,
    explained,
    explanation_rows,
    explanation_title,
    judged_section,
    legend,
    metric_label,
    needs_attention,
    outcome_counts,
    outcome_word,
    several_comparisons,
    short_reason,
    status,
    verdict_rows,
)


def _verdict_cell(mv: MetricVerdict) -> str:
    return f"{OUTCOME_EMOJI.get(mv.outcome, '')} {outcome_word(mv)}".strip()


def _headline(verdicts: Sequence[Verdict]) -> list[str]:
    counts = outcome_counts(verdicts)
    parts = []
    for outcome in OUTCOME_ORDER:
        n = counts[outcome]
        word = OUTCOME_WORDS[outcome]
        if outcome in ("regression", "improvement") and n != 1:
            word += "s"
        text = f"{OUTCOME_EMOJI[outcome]} {n} {word}"
        parts.append(f"**{text}**" if n and outcome in ("regression", "failed") else text)
    total = len(verdicts)
    noun = "comparison" if total == 1 else "comparisons"
    return [f"{status(verdicts)}: {total} {noun} (scenario × threads).", "", " · ".join(parts)]


def _comparison_line(verdicts: Sequence[Verdict]) -> list[str]:
    lines = []
    for mode, b, h in server_pairs(verdicts):
        if mode == "ab":
            lines.append(f"- base {b} vs head {h}: A/B, interleaved runs")
        else:
            lines.append(f"- {h} against this testbed's stored baseline")
    return lines


_COMMAND = re.compile(r"(?<=: )(dbperf [^;`|]+?)(?=[.;]?$|; )")


def _reason_cell(mv: MetricVerdict) -> str:
    """Short clause for metric rows; failures and missing baselines in full, commands as code."""
    if mv.outcome not in ("failed", "no_baseline"):
        return short(short_reason(mv))
    return _COMMAND.sub(lambda m: f"`{m.group(1)}`", short(short_reason(mv), 400))


_VERDICT_HEADER = ("scenario", "threads", "metric", "base", "head", "change", "CI", "verdict", "reason")
_VERDICT_ALIGN = ("l", "r", "l", "r", "r", "r", "r", "l", "l")


def _verdict_row(verdict: Verdict, mv: MetricVerdict, *, several: bool = False, level: float = 0.95) -> list[str]:
    row = [comparison_label(verdict)] if several else []
    return [
        *row,
        verdict.scenario,
        verdict.threads_label,
        metric_label(mv.metric),
        side_cell(verdict, mv, "base"),
        side_cell(verdict, mv, "head"),
        fmt_change(mv),
        fmt_ci(mv, level),
        _verdict_cell(mv),
        _reason_cell(mv),
    ]


def _verdict_table(rows: Sequence[tuple[Verdict, MetricVerdict]], several: bool) -> list[str]:
    level = common_level(mv for _, mv in rows)
    header = (("comparison",) if several else ()) + _VERDICT_HEADER
    header = tuple(ci_header(mv for _, mv in rows) if h == "CI" else h for h in header)
    align = (("l",) if several else ()) + _VERDICT_ALIGN
    return table(header, align, (_verdict_row(v, mv, several=several, level=level) for v, mv in rows))


def _verdict_tables(verdicts: Sequence[Verdict]) -> list[str]:
    rows = verdict_rows(verdicts)
    several = several_comparisons(verdicts)
    if len(rows) <= COLLAPSE_ABOVE:
        return _verdict_table(rows, several)
    notable = [(v, mv) for v, mv in rows if needs_attention(mv)]
    quiet = [(v, mv) for v, mv in rows if not needs_attention(mv)]
    lines: list[str] = []
    if notable:
        lines += ["**Needs attention**", ""]
        lines += _verdict_table(notable, several)
        lines.append("")
    else:
        lines += ["Every gating metric is unchanged.", ""]
    summary = f"{len(quiet)} more row(s) that pass or do not gate"
    return lines + details(summary, _verdict_table(quiet, several))


def render_markdown(check: Check, *, testbed: Testbed | None = None, chart_links: ChartLinks = ()) -> str:
    """The Markdown of a performance check: headline, the change under test (a pull request's), verdict
    table, plans, warnings, failures, testbed, charts.

    The check's runs are the runs the verdicts were computed from (for failures, versions, testbed and
    commits); ``testbed`` overrides the testbed taken from the runs.
    """
    verdicts, plans, changes = check.document.verdicts, check.document.plans, check.document.changes
    runs, title, warnings = check.runs, check.title, check.warnings
    lines = [f"## {title}", "", *_headline(verdicts), ""]
    if changes:
        lines += change_section(changes, (), len(changes))
    comparison = _comparison_line(verdicts)
    if comparison:
        lines += [*comparison, ""]
    if verdicts:
        lines += [*_verdict_tables(verdicts), ""]
    if any(mv.estimate_pct is not None for v in verdicts for mv in v.metrics):
        lines += [f"<sub>{legend(verdicts)} A positive change is worse for latency and cost metrics.</sub>", ""]
    lines += judged_section(verdicts)
    lines += forecast_markdown(verdicts)
    for verdict in explained(verdicts):
        lines += [f"**{explanation_title(verdict)}**", ""]
        rows = explanation_rows(verdict)
        lines += table(("function", "base", "head", "change", "share"), ("l", "r", "r", "r", "r"), rows)
        lines.append("")
    lines += operations_markdown(runs)
    lines += plans_markdown(plans)
    lines += closing(verdicts, runs, [*warnings, *run_notes(runs)], testbed, chart_links)
    return "\n".join(lines).rstrip() + "\n"
