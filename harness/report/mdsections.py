"""The sections both Markdown reports end with: noise and measurement warnings, failed runs, the
testbed and server versions, and the charts (images embedded, other links listed)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from harness.model import RunResult, Testbed, Verdict
from harness.report.mdtable import COLLAPSE_ABOVE, details, short, table
from harness.report.sweep_work import sweep_notes
from harness.report.verdicts import comparison_label, fmt_noise, metric_label, needed_text, several_comparisons

_IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")


ChartLinks = Sequence[tuple[str, str]]
"""``(label, url)`` pairs; URLs ending in an image suffix are embedded, the others linked."""


def noise_notes(verdicts: Sequence[Verdict], warnings: Sequence[str]) -> list[str]:
    """Given warnings first, then each comparison's own, then noise that hides the minimum effect."""
    notes: list[str] = list(warnings)
    several = several_comparisons(verdicts)
    for verdict in sorted(verdicts, key=lambda v: (v.scenario, v.threads)):
        where = (f"{comparison_label(verdict)} " if several else "") + f"{verdict.scenario} {verdict.threads_label}t"
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


def run_notes(runs: Sequence[RunResult]) -> list[str]:
    """What the measurements noticed (a busy machine, a window still warming up), once each, then the thread
    sweeps whose work per transaction changed with the thread count (:mod:`harness.report.sweep_work`)."""
    return list(dict.fromkeys([*(note for run in runs for note in run.notes), *sweep_notes(runs)]))


def failed_runs(runs: Sequence[RunResult]) -> list[str]:
    failed = [r for r in runs if not r.ok]
    if not failed:
        return []
    rows = (
        [r.scenario, r.server, str(r.threads), str(r.repetition), f"`{r.run_id}`", short(r.failure)]
        for r in sorted(failed, key=lambda r: (r.scenario, r.server, r.threads, r.repetition, r.run_id))
    )
    header = ("scenario", "server", "threads", "rep", "run", "failure")
    body = table(header, ("l", "l", "r", "r", "l", "l"), rows)
    if len(failed) > COLLAPSE_ABOVE:
        body = details(f"{len(failed)} failed runs", body)
    return [f"### ❌ Failed runs ({len(failed)})", "", *body, ""]


def testbeds(runs: Sequence[RunResult], testbed: Testbed | None) -> list[Testbed]:
    if testbed is not None:
        return [testbed]
    unique: dict[str, Testbed] = {}
    for run in runs:
        unique.setdefault(run.testbed.fingerprint, run.testbed)
    return list(unique.values())


def environment(verdicts: Sequence[Verdict], runs: Sequence[RunResult], testbed: Testbed | None) -> list[str]:
    lines = ["### Testbed and servers", ""]
    beds = testbeds(runs, testbed)
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
        lines += table(("server", "version", "config hash"), ("l", "l", "l"), rows)
    shas = sorted({r.git_sha for r in runs if r.git_sha})
    if shas:
        lines += ["", "Commits: " + ", ".join(f"`{s[:12]}`" for s in shas)]
    return [*lines, ""]


def charts(chart_links: ChartLinks) -> list[str]:
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


def closing(
    verdicts: Sequence[Verdict],
    runs: Sequence[RunResult],
    warnings: Sequence[str],
    testbed: Testbed | None,
    chart_links: ChartLinks,
) -> list[str]:
    """Every closing section, in order: warnings (the given ones first), failed runs, testbed, charts."""
    lines: list[str] = []
    notes = noise_notes(verdicts, warnings)
    if notes:
        lines += ["### ⚠️ Noise and measurement warnings", "", *notes, ""]
    lines += failed_runs(runs)
    lines += environment(verdicts, runs, testbed)
    lines += charts(chart_links)
    return lines
