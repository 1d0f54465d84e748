"""GitHub-flavoured Markdown for job summaries and pull-request comments.

:func:`render_markdown` renders verdicts (A/B or against a baseline): a headline with the count of
comparisons per outcome, one table row per scenario x threads x metric (base, head, change and its
95 % interval in percent, verdict with an emoji *and* a word, short reason), the noise and measurement
warnings, failed runs, the testbed and server versions, and the charts (images are embedded, other
links listed). :func:`render_runs_markdown` renders plain runs (no verdicts) for ``dbperf report``.

Long tables stay readable: above :data:`COLLAPSE_ABOVE` rows the rows that need attention stay in
view and everything else goes into a collapsible ``<details>`` block. The output is deterministic
(no clock, no host names beyond the testbed), so golden-file tests can pin it.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.model import METRICS, MetricVerdict, RunResult, Testbed, Verdict
from harness.report.verdicts import (
    LEGEND,
    OUTCOME_EMOJI,
    OUTCOME_ORDER,
    OUTCOME_WORDS,
    comparison_label,
    explained,
    explanation_rows,
    explanation_title,
    fmt_ci,
    fmt_noise,
    fmt_pct,
    fmt_value,
    metric_label,
    needed_text,
    needs_attention,
    outcome_counts,
    outcome_word,
    several_comparisons,
    short_reason,
    verdict_rows,
)

COLLAPSE_ABOVE = 20
"""Tables with more rows than this put the rows that need no attention in a ``<details>`` block."""
REASON_MAX = 140
"""Longest reason shown in a table cell (the full text is in the terminal and JSON outputs)."""

_IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")

ChartLinks = Sequence[tuple[str, str]]
"""``(label, url)`` pairs; URLs ending in an image suffix are embedded, the others linked."""


def cell(text: object) -> str:
    """Text made safe for one Markdown table cell (pipes escaped, no line breaks)."""
    value = " ".join(str(text).split())
    return value.replace("\\", "\\\\").replace("|", "\\|") or " "


def _short(text: str, limit: int = REASON_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _table(header: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(cell(h) for h in header) + " |",
        "| " + " | ".join(marks[a] for a in align) + " |",
    ]
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
    return lines


def _details(summary: str, body: list[str]) -> list[str]:
    """A collapsible block; GitHub needs blank lines around Markdown inside HTML."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


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
    if counts["regression"] or counts["failed"]:
        status = "❌ **Performance check failed**"
    elif counts["inconclusive"] or counts["no_baseline"]:
        status = "🟡 **No regression found, but not everything could be judged**"
    else:
        status = "✅ **No regression**"
    noun = "comparison" if total == 1 else "comparisons"
    return [f"{status}: {total} {noun} (scenario × threads).", "", " · ".join(parts)]


def _comparison_line(verdicts: Sequence[Verdict]) -> list[str]:
    pairs = sorted({(v.mode, v.base, v.base_version, v.head, v.head_version) for v in verdicts})
    lines = []
    for mode, base, base_version, head, head_version in pairs:
        b = f"`{base}`" + (f" ({base_version})" if base_version else "")
        h = f"`{head}`" + (f" ({head_version})" if head_version else "")
        if mode == "ab":
            lines.append(f"- base {b} vs head {h}: A/B, interleaved runs")
        else:
            lines.append(f"- {h} against this testbed's stored baseline")
    return lines


_COMMAND = re.compile(r"(?<=: )(dbperf [^;`|]+?)(?=[.;]?$|; )")


def _reason_cell(mv: MetricVerdict) -> str:
    """Short clause for metric rows; failures and missing baselines in full, commands as code."""
    if mv.outcome not in ("failed", "no_baseline"):
        return _short(short_reason(mv))
    return _COMMAND.sub(lambda m: f"`{m.group(1)}`", _short(short_reason(mv), 400))


_VERDICT_HEADER = (
    "scenario",
    "threads",
    "metric",
    "base",
    "head",
    "change",
    "95 % CI",
    "verdict",
    "reason",
)
_VERDICT_ALIGN = ("l", "r", "l", "r", "r", "r", "r", "l", "l")


def _verdict_row(verdict: Verdict, mv: MetricVerdict, *, several: bool = False) -> list[str]:
    row = [comparison_label(verdict)] if several else []
    return [
        *row,
        verdict.scenario,
        str(verdict.threads),
        metric_label(mv.metric),
        fmt_value(mv.base_median),
        fmt_value(mv.head_median),
        fmt_pct(mv.estimate_pct),
        fmt_ci(mv),
        _verdict_cell(mv),
        _reason_cell(mv),
    ]


def _verdict_table(rows: Sequence[tuple[Verdict, MetricVerdict]], several: bool) -> list[str]:
    header = (("comparison",) if several else ()) + _VERDICT_HEADER
    align = (("l",) if several else ()) + _VERDICT_ALIGN
    return _table(header, align, (_verdict_row(v, mv, several=several) for v, mv in rows))


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
    summary = f"{len(quiet)} more row(s): no change, or not gating"
    return lines + _details(summary, _verdict_table(quiet, several))


def _noise_notes(verdicts: Sequence[Verdict], warnings: Sequence[str]) -> list[str]:
    """Given warnings first, then each comparison's own, then noise that hides the minimum effect."""
    notes: list[str] = list(warnings)
    several = several_comparisons(verdicts)
    for verdict in sorted(verdicts, key=lambda v: (v.scenario, v.threads)):
        where = (f"{comparison_label(verdict)} " if several else "") + f"{verdict.scenario} {verdict.threads}t"
        notes.extend(f"{where}: {w}" for w in verdict.warnings)
        for mv in verdict.metrics:
            noisy = mv.noise_pct is not None and mv.bound_pct is not None and abs(mv.noise_pct) > mv.bound_pct
            if noisy and mv.noise_pct is not None and mv.bound_pct is not None:
                text = (
                    f"{where} {metric_label(mv.metric)}: noise {fmt_noise(mv.noise_pct)} is larger than the "
                    f"smallest change that matters ({mv.bound_pct:g} %)"
                )
                if needed_text(mv):
                    text += f"; {needed_text(mv)}"
                notes.append(text)
            elif needed_text(mv):
                notes.append(f"{where} {metric_label(mv.metric)}: inconclusive; {needed_text(mv)}")
    unique = list(dict.fromkeys(" ".join(n.split()) for n in notes if n.strip()))
    return [f"- {n}" for n in unique]


def _run_notes(runs: Sequence[RunResult]) -> list[str]:
    """What the measurements noticed (a busy machine, a window still warming up), once each."""
    return list(dict.fromkeys(note for run in runs for note in run.notes))


def _failed_runs(runs: Sequence[RunResult]) -> list[str]:
    failed = [r for r in runs if not r.ok]
    if not failed:
        return []
    rows = (
        [r.scenario, r.server, str(r.threads), str(r.repetition), f"`{r.run_id}`", _short(r.failure)]
        for r in sorted(failed, key=lambda r: (r.scenario, r.server, r.threads, r.repetition, r.run_id))
    )
    header = ("scenario", "server", "threads", "rep", "run", "failure")
    body = _table(header, ("l", "l", "r", "r", "l", "l"), rows)
    if len(failed) > COLLAPSE_ABOVE:
        body = _details(f"{len(failed)} failed runs", body)
    return [f"### ❌ Failed runs ({len(failed)})", "", *body, ""]


def _testbeds(runs: Sequence[RunResult], testbed: Testbed | None) -> list[Testbed]:
    if testbed is not None:
        return [testbed]
    unique: dict[str, Testbed] = {}
    for run in runs:
        unique.setdefault(run.testbed.fingerprint, run.testbed)
    return list(unique.values())


def _environment(verdicts: Sequence[Verdict], runs: Sequence[RunResult], testbed: Testbed | None) -> list[str]:
    lines = ["### Testbed and servers", ""]
    beds = _testbeds(runs, testbed)
    for bed in beds:
        engine = bed.container_engine or "none (local processes)"
        lines.append(
            f"- **Testbed** `{bed.fingerprint}`: {bed.cpu_model}, {bed.cores} cores, {bed.memory_gb:g} GiB, "
            f"kernel {bed.kernel}, disk {bed.disk}, sysbench {bed.sysbench_version}, containers: {engine}"
        )
    if not beds:
        lines.append("- **Testbed**: unknown (no runs given)")
    versions: dict[str, set[str]] = defaultdict(set)
    configs: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        if run.server_version:
            versions[run.server].add(run.server_version)
        if run.config_hash:
            configs[run.server].add(run.config_hash)
    for v in verdicts:
        if v.base_version:
            versions[v.base].add(v.base_version)
        if v.head_version:
            versions[v.head].add(v.head_version)
    if versions or configs:
        lines.append("")
        rows = (
            [
                f"`{t}`",
                ", ".join(sorted(versions.get(t, ()))) or "-",
                ", ".join(sorted(configs.get(t, ()))) or "-",
            ]
            for t in sorted(set(versions) | set(configs))
        )
        lines += _table(("server", "version", "config hash"), ("l", "l", "l"), rows)
    shas = sorted({r.git_sha for r in runs if r.git_sha})
    if shas:
        lines += ["", "Commits: " + ", ".join(f"`{s[:12]}`" for s in shas)]
    return [*lines, ""]


def _charts(chart_links: ChartLinks) -> list[str]:
    if not chart_links:
        return []
    lines = ["### Charts", ""]
    images = [(label, url) for label, url in chart_links if url.lower().endswith(_IMAGE_SUFFIXES)]
    links = [(label, url) for label, url in chart_links if not url.lower().endswith(_IMAGE_SUFFIXES)]
    lines += [f"![{label}]({url})" for label, url in images]
    if images and links:
        lines.append("")
    lines += [f"- [{label}]({url})" for label, url in links]
    return [*lines, ""]


def render_markdown(
    verdicts: Sequence[Verdict],
    runs: Sequence[RunResult] = (),
    *,
    title: str = "dbperf performance check",
    testbed: Testbed | None = None,
    warnings: Sequence[str] = (),
    chart_links: ChartLinks = (),
) -> str:
    """The Markdown of a performance check: headline, verdict table, warnings, failures, testbed, charts.

    ``runs`` are the runs the verdicts were computed from (for failures, versions, testbed and
    commits); ``testbed`` overrides the testbed taken from the runs.
    """
    lines = [f"## {title}", "", *_headline(verdicts), ""]
    comparison = _comparison_line(verdicts)
    if comparison:
        lines += [*comparison, ""]
    if verdicts:
        lines += [*_verdict_tables(verdicts), ""]
    if any(mv.estimate_pct is not None for v in verdicts for mv in v.metrics):
        lines += [f"<sub>{LEGEND} A positive change is worse for latency and cost metrics.</sub>", ""]
    for verdict in explained(verdicts):
        lines += [f"**{explanation_title(verdict)}**", ""]
        rows = explanation_rows(verdict)
        lines += _table(("function", "base", "head", "change", "share"), ("l", "r", "r", "r", "r"), rows)
        lines.append("")
    notes = _noise_notes(verdicts, [*warnings, *_run_notes(runs)])
    if notes:
        lines += ["### ⚠️ Noise and measurement warnings", "", *notes, ""]
    lines += _failed_runs(runs)
    lines += _environment(verdicts, runs, testbed)
    lines += _charts(chart_links)
    return "\n".join(lines).rstrip() + "\n"


# -- plain runs (no verdicts) -------------------------------------------------------------------


@dataclass(frozen=True)
class RunGroup:
    """The repetitions of one scenario x server x threads, summarised."""

    scenario: str
    server: str
    threads: int
    versions: tuple[str, ...]
    ok: int
    failed: int
    medians: dict[str, float | None]
    qps_min: float | None
    qps_max: float | None
    qps_cv_pct: float | None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def summarise_runs(runs: Sequence[RunResult]) -> list[RunGroup]:
    """One :class:`RunGroup` per scenario x server x threads, sorted."""
    groups: dict[tuple[str, str, int], list[RunResult]] = defaultdict(list)
    for run in runs:
        groups[(run.scenario, run.server, run.threads)].append(run)
    result = []
    for (scenario, server, threads), members in sorted(groups.items()):
        ok = [r for r in members if r.ok]
        medians: dict[str, float | None] = {}
        for name in (*METRICS, "p50_ms"):
            values = [v for r in ok if (v := r.metrics.get(name)) is not None and math.isfinite(v)]
            medians[name] = _median(values)
        qps = [v for r in ok if (v := r.metrics.qps) is not None and math.isfinite(v)]
        cv = None
        if len(qps) >= 2 and statistics.fmean(qps) > 0:
            cv = statistics.stdev(qps) / statistics.fmean(qps) * 100.0
        result.append(
            RunGroup(
                scenario=scenario,
                server=server,
                threads=threads,
                versions=tuple(sorted({r.server_version for r in members if r.server_version})),
                ok=len(ok),
                failed=len(members) - len(ok),
                medians=medians,
                qps_min=min(qps) if qps else None,
                qps_max=max(qps) if qps else None,
                qps_cv_pct=cv,
            )
        )
    return result


_RUNS_HEADER = (
    "scenario", "server", "threads", "runs", "QPS (median)", "QPS min–max", "QPS CV",
    "p95 ms", "p99 ms", "CPU µs/txn", "instr/txn",
)  # fmt: skip
_RUNS_ALIGN = ("l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r")


def _runs_row(group: RunGroup) -> list[str]:
    runs = f"{group.ok}" + (f" (+{group.failed} failed)" if group.failed else "")
    spread = "-" if group.qps_min is None else f"{fmt_value(group.qps_min)}–{fmt_value(group.qps_max)}"
    cv = "-" if group.qps_cv_pct is None else f"{group.qps_cv_pct:.1f} %"
    m = group.medians
    return [
        group.scenario,
        f"`{group.server}`",
        str(group.threads),
        runs,
        fmt_value(m["qps"]),
        spread,
        cv,
        fmt_value(m["p95_ms"]),
        fmt_value(m["p99_ms"]),
        fmt_value(m["cpu_per_txn"]),
        fmt_value(m["instr_per_txn"]),
    ]


def _qps_pivot(groups: Sequence[RunGroup]) -> list[str]:
    """Median QPS with one column per thread count (like the tables of scaling write-ups)."""
    threads = sorted({g.threads for g in groups})
    cells: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for g in groups:
        cells[(g.scenario, g.server)][g.threads] = fmt_value(g.medians["qps"])
    header = ["scenario", "server", *(f"{t} thr" for t in threads)]
    align = ["l", "l", *("r" for _ in threads)]
    rows = (
        [scenario, f"`{server}`", *(row.get(t, "-") for t in threads)]
        for (scenario, server), row in sorted(cells.items())
    )
    return ["Median QPS by thread count:", "", *_table(header, align, rows)]


def render_runs_markdown(
    runs: Sequence[RunResult],
    *,
    title: str = "dbperf runs",
    testbed: Testbed | None = None,
    warnings: Sequence[str] = (),
    chart_links: ChartLinks = (),
) -> str:
    """Markdown of plain runs: one row per scenario x server x threads (medians over repetitions)."""
    groups = summarise_runs(runs)
    failed = sum(1 for r in runs if not r.ok)
    scenarios = len({g.scenario for g in groups})
    servers = len({g.server for g in groups})
    status = "❌" if failed else "✅"
    lines = [
        f"## {title}",
        "",
        f"{status} **{len(runs)} run(s)**, {failed} failed: {scenarios} scenario(s) on {servers} server(s).",
        "",
    ]
    if groups:
        body = _table(_RUNS_HEADER, _RUNS_ALIGN, (_runs_row(g) for g in groups))
        if len(groups) > COLLAPSE_ABOVE:
            body = [
                *_qps_pivot(groups),
                "",
                *_details(f"All {len(groups)} rows (scenario × server × threads)", body),
            ]
        lines += [
            *body,
            "",
            "<sub>medians over the ok repetitions; CV: coefficient of variation of QPS.</sub>",
            "",
        ]
    all_warnings = [*warnings, *_run_notes(runs)]
    if len(_testbeds(runs, None)) > 1 and testbed is None:
        all_warnings.append("these runs come from more than one testbed: compare them with care")
    noisy = [g for g in groups if g.qps_cv_pct is not None and g.qps_cv_pct > 10.0]
    all_warnings += [
        f"{g.scenario} `{g.server}` {g.threads}t: QPS varies by {g.qps_cv_pct:.1f} % between repetitions"
        for g in noisy
        if g.qps_cv_pct is not None
    ]
    notes = _noise_notes((), all_warnings)
    if notes:
        lines += ["### ⚠️ Noise and measurement warnings", "", *notes, ""]
    lines += _failed_runs(runs)
    lines += _environment((), runs, testbed)
    lines += _charts(chart_links)
    return "\n".join(lines).rstrip() + "\n"
