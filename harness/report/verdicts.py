"""Verdicts on a terminal, and the number formats every report shares (terminal and Markdown).

One row per scenario x threads x metric: base and head medians, the change with its confidence
interval (in %), the noise of the comparison, the verdict and its short reason. Colour comes only on
a terminal (see :func:`harness.report.terminal.console`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from rich.table import Table
from rich.text import Text

from harness.model import METRIC_LABELS, MetricVerdict, Outcome, Verdict
from harness.report.terminal import console

#: Display order of outcomes (worst first), as used in headlines.
OUTCOME_ORDER: tuple[Outcome, ...] = (
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
    "pass": "no change",
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


def fmt_value(value: float | None) -> str:
    """A metric value with about three significant digits, never in scientific notation."""
    if value is None or not math.isfinite(value):
        return "-"
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1 or size == 0:
        return f"{value:.2f}"
    return f"{value:.3f}"


def fmt_pct(value: float | None, digits: int = 1) -> str:
    """A signed percentage such as ``+4.2 %`` (``-`` when unknown; never ``-0.0``)."""
    if value is None or not math.isfinite(value):
        return "-"
    rounded = round(value, digits) + 0.0
    return f"{rounded:+.{digits}f} %"


def fmt_interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """A confidence interval of a change in percent, such as ``[+1.0, +9.3] %``."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    lo, hi = round(low, digits) + 0.0, round(high, digits) + 0.0
    return f"[{lo:+.{digits}f}, {hi:+.{digits}f}] %"


def fmt_noise(value: float | None) -> str:
    """The noise of a comparison as ``±3.2 %``."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"±{abs(value):.1f} %"


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name)


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


def short_reason(mv: MetricVerdict) -> str:
    """One short clause for a table cell (the numbers are in the other columns; JSON has the full text)."""
    if mv.outcome in _WHOLE_RUN or mv.bound_pct is None:
        return " ".join(mv.reason.split())
    worse, better = ("rise", "fall") if mv.higher_is_worse else ("drop", "rise")
    effect = f"{mv.bound_pct:g} %"
    p = f" (adjusted p = {mv.p_adjusted:.2g})" if mv.p_adjusted is not None else ""
    if mv.outcome == "regression":
        return f"{worse} beyond the {effect} minimum effect{p}"
    if mv.outcome == "improvement":
        return f"{better} beyond the {effect} minimum effect{p}"
    if mv.outcome == "pass":
        return f"rules out a {worse} of {effect} or more"
    text = f"cannot rule out a {worse} of {effect}"
    if mv.confidence is not None and mv.confidence < 0.95 - 1e-9:
        n = min(mv.n_base, mv.n_head)
        text = f"only {n} repetitions: the interval shown is {mv.confidence * 100:.0f} %, short of 95 %"
    if mv.pairs_needed:
        text += f"; about {mv.pairs_needed} pairs would decide"
    return text


def verdict_rows(verdicts: Sequence[Verdict]) -> list[tuple[Verdict, MetricVerdict]]:
    """Every (comparison, metric) pair, ordered by scenario, threads and the order of the metrics."""
    ordered = sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.base, v.head))
    return [(v, mv) for v in ordered for mv in v.metrics]


def outcome_counts(verdicts: Sequence[Verdict]) -> Counter[str]:
    """How many comparisons (scenario x threads) ended with each outcome."""
    return Counter(comparison_outcome(v) for v in verdicts)


def headline(verdicts: Sequence[Verdict]) -> str:
    """``1 regression, 2 no change (3 comparisons)``: counts of comparisons per outcome, worst first."""
    counts = outcome_counts(verdicts)
    parts = [
        f"{counts[o]} {OUTCOME_WORDS[o]}{'s' if counts[o] != 1 and o in ('regression', 'improvement') else ''}"
        for o in OUTCOME_ORDER
        if counts[o]
    ]
    total = len(verdicts)
    noun = "comparison" if total == 1 else "comparisons"
    return f"{', '.join(parts) or 'nothing compared'} ({total} {noun}, scenario x threads)"


def verdicts_table(verdicts: Sequence[Verdict], title: str = "dbperf verdicts") -> Table:
    """A rich table of verdicts, one row per scenario x threads x metric."""
    table = Table(title=title, title_justify="left")
    for name, justify in (
        ("scenario", "left"),
        ("threads", "right"),
        ("metric", "left"),
        ("base", "right"),
        ("head", "right"),
        ("change", "right"),
        ("95% interval", "right"),
        ("noise", "right"),
        ("n", "right"),
        ("verdict", "left"),
        ("reason", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for verdict, mv in verdict_rows(verdicts):
        style = _STYLES.get(mv.outcome, "") if mv.gating or mv.outcome in _WHOLE_RUN else "dim"
        table.add_row(
            verdict.scenario,
            str(verdict.threads),
            metric_label(mv.metric),
            fmt_value(mv.base_median),
            fmt_value(mv.head_median),
            Text(fmt_pct(mv.estimate_pct), style=style),
            fmt_interval(mv.ci_low_pct, mv.ci_high_pct),
            fmt_noise(mv.noise_pct),
            f"{mv.n_base}/{mv.n_head}",
            Text(outcome_word(mv), style=style),
            short_reason(mv),
        )
    return table


def print_verdicts(verdicts: Sequence[Verdict], stream: TextIO | None = None) -> None:
    """The verdict table, its warnings and a one-line headline (colour only on a terminal)."""
    out = console(stream)
    out.print(verdicts_table(verdicts))
    seen: set[str] = set()
    for verdict in sorted(verdicts, key=lambda v: (v.scenario, v.threads)):
        for warning in verdict.warnings:
            line = f"{verdict.scenario} {verdict.threads}t: {warning}"
            if line not in seen:
                seen.add(line)
                out.print(Text(f"warning: {line}", style="yellow"))
    worst = next((o for o in OUTCOME_ORDER if outcome_counts(verdicts)[o]), "pass")
    out.print(Text(headline(verdicts), style=_STYLES.get(worst, "")))
