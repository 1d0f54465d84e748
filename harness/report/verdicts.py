"""Verdicts on a terminal, and the wording every report shares (terminal and Markdown).

One row per scenario x threads x metric: base and head medians, the change with its confidence
interval (in %, or per transaction for a count whose base is below its floor, at its real level: see
:mod:`harness.report.change_cells`), the noise of the comparison, the verdict and its short reason.
Colour comes only on a terminal (see :func:`harness.report.terminal.console`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from rich.table import Table
from rich.text import Text

from harness.model import MetricVerdict, Verdict, VerdictOutcome
from harness.model import metrics as catalogue
from harness.model.time_estimate import duration
from harness.model.verdict_document import VerdictDocument
from harness.model.work import WORK
from harness.report.capacity_cells import LEGEND as CAPACITY_LEGEND
from harness.report.capacity_cells import marked as capacity_marked
from harness.report.capacity_cells import side_cell
from harness.report.change_cells import ci_header, common_level, fmt_change, fmt_ci
from harness.report.forecast_sections import forecast_lines
from harness.report.plan_findings import print_plans
from harness.report.tables import (
    Justify,
    fmt_value,  # noqa: F401 (re-exported: the Markdown tests import it here)
    new_table,
    show,
)
from harness.report.terminal import console

#: Display order of outcomes (worst first), as used in headlines.
OUTCOME_ORDER: tuple[VerdictOutcome, ...] = (
    "regression",
    "failed",
    "inconclusive",
    "no_baseline",
    "improvement",
    "pass",
)

#: The word each outcome is shown with.
OUTCOME_WORDS: dict[str, str] = {
    "regression": "regression",
    "improvement": "improvement",
    "pass": "pass",
    "inconclusive": "inconclusive",
    "no_baseline": "no baseline",
    "failed": "failed",
}

#: Emoji beside the word in Markdown (GitHub renders them everywhere, colour-blind users get the word).
OUTCOME_EMOJI: dict[str, str] = {
    "regression": "🔴",
    "improvement": "🟢",
    "pass": "✅",
    "inconclusive": "🟡",
    "no_baseline": "⚪",
    "failed": "❌",
}

_STYLES: dict[str, str] = {
    "regression": "bold red",
    "improvement": "green",
    "pass": "",
    "inconclusive": "yellow",
    "no_baseline": "dim",
    "failed": "bold red",
}


def fmt_noise(value: float | None) -> str:
    """The noise of a comparison as ``±3.2 %`` (two significant digits below 1 %: ``±0.021 %``)."""
    if value is None or not math.isfinite(value):
        return "-"
    size = abs(value)
    return f"±{size:.1f} %" if size >= 1 or size == 0 else f"±{size:.2g} %"


def metric_label(name: str) -> str:
    return catalogue.label(name)


def outcome_word(mv: MetricVerdict) -> str:
    """The verdict's word; metrics that do not gate are marked ``(info)``."""
    word = OUTCOME_WORDS.get(mv.outcome, mv.outcome)
    return word if mv.gating or mv.outcome in _WHOLE_RUN else f"{word} (info)"


_WHOLE_RUN = ("failed", "no_baseline")


def comparison_outcome(verdict: Verdict) -> str:
    """The outcome of a comparison as reported: :attr:`Verdict.outcome`, except that a comparison
    whose only rows are a failure or a missing baseline (rows that do not gate) is reported as such,
    not as a pass."""
    outcome = verdict.outcome
    if outcome == "pass" and not any(m.gating for m in verdict.metrics):
        found = {m.outcome for m in verdict.metrics}
        for special in _WHOLE_RUN:
            if special in found:
                return special
    return outcome


def needs_attention(mv: MetricVerdict) -> bool:
    """A row a reader must see: anything but a pass on a gating metric, or a failure or missing baseline."""
    return mv.outcome in _WHOLE_RUN or (mv.gating and mv.outcome != "pass")


def needed_text(mv: MetricVerdict) -> str:
    """``about 24 pairs (~9 min)``: what would likely decide an inconclusive metric, with its wall time."""
    if not mv.repetitions_needed or mv.outcome != "inconclusive":
        return ""
    unit = "pairs" if mv.method == "signed-rank" else "candidate runs" if mv.method == "rank-sum" else "runs"
    when = f" ({duration(mv.seconds_needed)})" if mv.seconds_needed else ""
    return f"about {mv.repetitions_needed} {unit}{when} would likely decide"


def short_reason(mv: MetricVerdict) -> str:
    """One short clause for a table cell: the classifier's own summary (the full sentence is in JSON)."""
    if mv.outcome in _WHOLE_RUN or not mv.summary:
        return " ".join(mv.reason.split())
    advice = needed_text(mv)
    return mv.summary + (f"; {advice}" if advice else "")


#: Under every verdict table: what the columns hold.
LEGEND = (
    "change: the test's estimate (Hodges-Lehmann for timing metrics, ratio of geometric means for cost), "
    "which can differ from the ratio of the medians shown when runs are spread; CI: the interval at the level "
    "its heading names, a row at another level with it in brackets (less when the repetitions allow no more; "
    "1 - alpha / family size, such as 99.9 %, where the test was not significant across the family and the "
    "interval was widened to decide); noise: SD of the per-pair log ratios (A/B) or of one run (baseline)."
)

#: Added to the legend where a work-vector count has a row.
WORK_LEGEND = (
    "A count per transaction (system calls, server work) is tested on the count plus an offset (its floor over "
    "its minimum effect), so that a count starting at 0 has a finite change; its change and interval are shown "
    "for the count itself, in % of the base, or per transaction (/txn) where the base is below the count's floor "
    "(0, or near it: a percent of it would say nothing), and the verdict's "
    "reason (verdicts.json) gives the offset and the test's numbers on the sum."
)


def legend(verdicts: Sequence[Verdict]) -> str:
    """What the columns hold, with the work-vector sentence when a count per transaction has a row and the
    capacity marks' when a capacity figure is marked (:mod:`harness.report.capacity_cells`)."""
    has_work = any(mv.metric in WORK and mv.estimate_pct is not None for v in verdicts for mv in v.metrics)
    text = f"{LEGEND} {WORK_LEGEND}" if has_work else LEGEND
    return f"{text} {CAPACITY_LEGEND}" if capacity_marked(verdicts) else text


def verdict_rows(verdicts: Sequence[Verdict]) -> list[tuple[Verdict, MetricVerdict]]:
    """Every (comparison, metric) pair, ordered by scenario, threads and the order of the metrics."""
    ordered = sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.base, v.head))
    return [(v, mv) for v in ordered for mv in v.metrics]


def outcome_counts(verdicts: Sequence[Verdict]) -> Counter[str]:
    """How many comparisons (scenario x threads) ended with each outcome."""
    return Counter(comparison_outcome(v) for v in verdicts)


def status(verdicts: Sequence[Verdict], failed_runs: int = 0) -> str:
    """The verdict of the whole check in a few bold words, never contradicting a row: a regression when any
    comparison regressed, and a "no regression" that names a metric that does not gate but rose."""
    counts = outcome_counts(verdicts)
    if counts["regression"]:
        return "🔴 **Performance regression**"
    if counts["failed"] or failed_runs:
        return "❌ **Performance check failed to run**"
    if not verdicts:
        return "⚪ **Nothing to compare**"
    if counts["inconclusive"] or counts["no_baseline"]:
        text = "🟡 **No regression found, but not everything could be decided**"
    elif counts["improvement"]:
        text = "🟢 **Faster, no regression**"
    else:
        text = "✅ **No regression**"
    info = any(not m.gating and m.outcome == "regression" for v in verdicts for m in v.metrics)
    return text + (" in the gating metrics (a metric that does not gate regressed: info)" if info else "")


def headline(verdicts: Sequence[Verdict]) -> str:
    """``1 regression, 2 pass (3 comparisons)``: counts of comparisons per outcome, worst first."""
    counts = outcome_counts(verdicts)
    parts = [
        f"{counts[o]} {OUTCOME_WORDS[o]}{'s' if counts[o] != 1 and o in ('regression', 'improvement') else ''}"
        for o in OUTCOME_ORDER
        if counts[o]
    ]
    total = len(verdicts)
    noun = "comparison" if total == 1 else "comparisons"
    return f"{', '.join(parts) or 'nothing compared'} ({total} {noun}, scenario x threads)"


def comparison_label(verdict: Verdict) -> str:
    """``base → head`` (A/B) or the server judged against its baseline."""
    head = verdict.side_label("head")
    return f"{verdict.side_label('base')} → {head}" if verdict.mode == "ab" else f"{head} vs baseline"


def several_comparisons(verdicts: Sequence[Verdict]) -> bool:
    """Whether the verdicts compare more than one pair of servers (then every row names its pair)."""
    return len({(v.mode, v.base, v.head) for v in verdicts}) > 1


def verdicts_table(verdicts: Sequence[Verdict], title: str = "dbperf verdicts") -> Table:
    """A rich table of verdicts, one row per scenario x threads x metric (and comparison, when several)."""
    several = several_comparisons(verdicts)
    columns: list[tuple[str, Justify]] = [("comparison", "left")] if several else []
    columns += [
        ("scenario", "left"),
        ("threads", "right"),
        ("metric", "left"),
        ("base", "right"),
        ("head", "right"),
        ("change", "right"),
        (ci_header(mv for _, mv in verdict_rows(verdicts)), "right"),
        ("noise", "right"),
        ("n", "right"),
        ("verdict", "left"),
        ("reason", "left"),
    ]
    table = new_table(title, columns)
    level = common_level(mv for _, mv in verdict_rows(verdicts))
    for verdict, mv in verdict_rows(verdicts):
        style = _STYLES.get(mv.outcome, "") if mv.gating or mv.outcome in _WHOLE_RUN else "dim"
        cells: list[str | Text] = [comparison_label(verdict)] if several else []
        cells += [
            verdict.scenario,
            verdict.threads_label,
            metric_label(mv.metric),
            side_cell(verdict, mv, "base"),
            side_cell(verdict, mv, "head"),
            Text(fmt_change(mv), style=style),
            fmt_ci(mv, level),
            fmt_noise(mv.noise_pct),
            f"{mv.n_base}/{mv.n_head}",
            Text(outcome_word(mv), style=style),
            Text(short_reason(mv)),
        ]
        table.add_row(*cells)
    return table


#: The one line on what instructions exclude, under every verdict table that judged cost.
EXCLUDES = (
    "Instructions count user-space work inside statement dispatch only: they exclude kernel time, fsync "
    "latency, disk reads, lock waits and scaling across threads; the work vector counts the system calls and "
    "server events behind them, timing runs measure what they cost in time."
)
_TIMING_BLIND = "wall time (kernel time, fsync and disk latency, lock waits, scaling across threads)"


def _judged(metrics: Sequence[MetricVerdict]) -> list[str]:
    """The dimensions a cost comparison judged: instructions, system calls, server work (gating rows)."""
    judged = [m for m in metrics if m.gating and m.outcome not in _WHOLE_RUN]
    names = {m.metric for m in judged}
    calls = [m for m in judged if m.metric.startswith("sys_")]
    work = [m for m in judged if m.metric in WORK and not m.metric.startswith("sys_")]
    out = ["instructions"] if "instr_per_txn" in names else []
    if calls:
        out.append(f"system calls ({len(calls)} kinds)")
    if work:
        out.append(f"server work ({len(work)} counters)")
    return out


def judged_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """Per comparison, what was judged deterministically, what by timing, and what not at all (one line per
    distinct answer, naming the comparisons it holds for).

    A comparison whose cost side found no change while its timing side regressed says that the change
    lies in what instructions exclude, so a cost "no change" never stands for the comparison.
    """
    groups: dict[tuple[str, str, str, str, str], dict[str, Verdict]] = {}
    for v in sorted(verdicts, key=lambda v: (v.scenario, v.threads, bool(v.curves), v.base, v.head)):
        # a capacity verdict spans a sweep ("16-1024"): its own line, never merged with its top thread count
        groups.setdefault((v.mode, v.base, v.head, v.threads_label, v.scenario), {})[v.kind] = v
    several = several_comparisons(verdicts)
    texts: dict[str, list[str]] = {}
    for (_, _, _, threads, scenario), kinds in groups.items():
        cost, time = kinds.get("cost"), kinds.get("time")
        first = cost or time
        assert first is not None
        where = (f"{comparison_label(first)} " if several else "") + f"{scenario} {threads}t"
        texts.setdefault(_judged_text(cost, time), []).append(where)
    return [f"{', '.join(wheres)}: {text}" for text, wheres in texts.items()]


def _judged_text(cost: Verdict | None, time: Verdict | None) -> str:
    deterministic = _judged(cost.metrics) if cost else []
    timed = [metric_label(m.metric) for m in time.metrics if m.gating and m.outcome not in _WHOLE_RUN] if time else []
    missing = []
    if not timed:
        missing.append(_TIMING_BLIND + ("" if time else ": no timing runs"))
    if cost and deterministic and not any(n.startswith("system calls") for n in deterministic):
        why = ": the cost baseline holds no work vector (record it again)" if cost.mode == "baseline" else ""
        missing.append(f"system calls and server work{why}")
    if not deterministic:
        missing.append("instructions, system calls and server work" + ("" if cost else ": no cost runs (--cost)"))
    judged = [
        f"deterministically {', '.join(deterministic)}" if deterministic else "",
        f"by timing {', '.join(timed)}" if timed else "",
    ]
    if not any(judged):
        return f"nothing judged: {'; '.join(missing)}."
    text = "judged " + "; ".join(j for j in judged if j)
    text += f"; not judged: {'; '.join(missing)}." if missing else "."
    if cost and time and comparison_outcome(cost) == "pass" and comparison_outcome(time) == "regression":
        text += " No change in what the cost runs count, but timing regressed: the change lies in what they exclude."
    return text


def judged_section(verdicts: Sequence[Verdict]) -> list[str]:
    """Markdown lines: what each comparison judged, and what instructions exclude (when cost was judged)."""
    lines = judged_lines(verdicts)
    if not lines:
        return []
    out = ["**What was judged**", "", *(f"- {line}" for line in lines)]
    if any(v.kind == "cost" for v in verdicts):
        out += ["", f"<sub>{EXCLUDES}</sub>"]
    return [*out, ""]


def explained(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The cost comparisons whose change deserves its functions listed (a regression or an improvement)."""
    return [
        v
        for v in sorted(verdicts, key=lambda v: (v.scenario, v.threads))
        if v.explanation and any(m.outcome in ("regression", "improvement") for m in v.metrics)
    ]


def explanation_rows(verdict: Verdict) -> list[tuple[str, str, str, str, str]]:
    """(function, base, head, change, share of the change) per listed function, instructions per transaction."""
    return [
        (d.name, f"{d.base:,.0f}", f"{d.head:,.0f}", f"{d.delta:+,.0f}", f"{d.share * 100:+.0f} %")
        for d in verdict.explanation
    ]


def explanation_title(verdict: Verdict) -> str:
    unnamed = next((d for d in verdict.explanation if d.name.startswith("(unnamed")), None)
    note = f"; unnamed functions hold {abs(unnamed.share) * 100:.0f} % of it" if unnamed else ""
    return (
        f"Where the instructions went: {verdict.scenario} {verdict.threads}t, {verdict.base} → {verdict.head} "
        f"(self instructions per transaction; share: part of all the changes, up and down{note})"
    )


def print_verdicts(verdicts: Sequence[Verdict], stream: TextIO | None = None) -> None:
    """The verdict table, its warnings and a one-line headline (colour only on a terminal)."""
    out = console(stream)
    single = verdicts and not several_comparisons(verdicts)
    show(
        out,
        verdicts_table(verdicts, f"dbperf verdicts: {comparison_label(verdicts[0])}" if single else "dbperf verdicts"),
    )
    out.print(Text(legend(verdicts), style="dim"))
    for line in judged_lines(verdicts):
        out.print(Text(line))
    if any(v.kind == "cost" for v in verdicts):
        out.print(Text(EXCLUDES, style="dim"))
    for line in forecast_lines(verdicts):  # beside the cost verdicts, never as a measurement
        out.print(Text(line))
    for verdict in explained(verdicts):
        table = new_table(
            explanation_title(verdict),
            [("function", "left"), ("base", "right"), ("head", "right"), ("change", "right"), ("share", "right")],
        )
        for row in explanation_rows(verdict):
            table.add_row(*row)
        show(out, table)
    seen: set[str] = set()
    several = several_comparisons(verdicts)
    for verdict in sorted(verdicts, key=lambda v: (v.scenario, v.threads)):
        for warning in verdict.warnings:
            where = f"{comparison_label(verdict)} " if several else ""
            line = f"{where}{verdict.scenario} {verdict.threads_label}t: {warning}"
            if line not in seen:
                seen.add(line)
                out.print(Text(f"warning: {line}", style="yellow"))
    worst = next((o for o in OUTCOME_ORDER if outcome_counts(verdicts)[o]), "pass")
    out.print(Text(headline(verdicts), style=_STYLES.get(worst, "")))


def print_document(document: VerdictDocument, stream: TextIO | None = None, *, empty_table: bool = True) -> None:
    """The terminal's rendering of a verdict document: its verdicts (:func:`print_verdicts`; none and not
    ``empty_table``: nothing) and its query plans."""
    if document.verdicts or empty_table:
        print_verdicts(document.verdicts, stream)
    print_plans(document.plans, stream)
