"""A pull request's GitHub check run, built in the trusted job from an untrusted run's verdicts.json.

Beside the job status and the sticky comment, ``pr-comment.yml`` reports the check as a *check run*
(``POST repos/{owner}/{repo}/check-runs``) on the commit the run measured: its conclusion (``failure``
on a regression or a failed run, ``neutral`` when something could not be decided or nothing was compared,
``success`` otherwise), a title and summary, and **one annotation per regressed metric** on the line of
the change that caused it (``servers/conf/mariadb.cnf`` line 7: the setting that changed), naming the
scenario, the metric, the change and its interval. A regression of a comparison whose change has no line
(a removed setting) is listed in the summary instead.

Everything comes from the checked verdicts of :mod:`harness.report.trusted_comment` (names, numbers,
paths, lines), never from the run's own text. The summary is Markdown: every name in it is inert (a code
span, or :func:`harness.report.mdtable.inert`), so it mentions nobody and links nowhere but the run page;
titles and annotation messages are plain text, which GitHub does not render as Markdown.
GitHub takes at most :data:`PER_REQUEST` annotations per
request: the first request creates the check run with the first batch, each further batch is a
``PATCH repos/{owner}/{repo}/check-runs/{id}`` (GitHub appends annotations).

``python -m harness.report.check_run VERDICTS --sha SHA [--run-url URL] --out DIR`` writes
``DIR/create.json`` and ``DIR/update-N.json``; it needs only the comment builder's dependencies.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.crash import EXIT_CRASH, crash_line
from harness.errors import ReportError
from harness.model import DefinitionChange, MetricVerdict, Verdict
from harness.report.atomic_files import write_atomic
from harness.report.change_cells import fmt_change, fmt_ci, fmt_level
from harness.report.mdtable import cell, inert
from harness.report.pr_sections import change_line
from harness.report.trusted_comment import RUN_URL, SHA, load_document
from harness.report.verdicts import (
    comparison_label,
    headline,
    metric_label,
    outcome_counts,
    status,
)

NAME = "dbperf performance check"
#: GitHub's limit of annotations per create or update request.
PER_REQUEST = 50
#: GitHub's limits on an annotation's message and the output's summary, in characters.
MESSAGE_LIMIT = 64_000
SUMMARY_LIMIT = 65_535


def conclusion(verdicts: Sequence[Verdict]) -> str:
    counts = outcome_counts(verdicts)
    if counts["regression"] or counts["failed"]:
        return "failure"
    if not verdicts or counts["inconclusive"] or counts["no_baseline"]:
        return "neutral"
    return "success"


def _message(verdict: Verdict, mv: MetricVerdict, change: DefinitionChange | None) -> str:
    what = f"{verdict.scenario} {verdict.threads_label}t ({verdict.kind}), {comparison_label(verdict)}"
    level = mv.interval_level() or 0.95
    text = f"{what}: {metric_label(mv.metric)} {fmt_change(mv)}, {fmt_level(level)} CI {fmt_ci(mv, level)}: regression"
    if mv.bound_pct is not None:
        text += f" beyond the {abs(mv.bound_pct):g} % minimum effect"
    if change is not None:
        old, new = change.old or "(unset)", change.new or "(unset)"
        text += f". Changed here: {change.name} {old} → {new}"
    return text[:MESSAGE_LIMIT]


def regressions(verdicts: Sequence[Verdict]) -> list[tuple[Verdict, MetricVerdict]]:
    """Every gating metric judged a regression, in report order."""
    ordered = sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.base, v.head, v.kind))
    return [(v, mv) for v in ordered for mv in v.metrics if mv.gating and mv.outcome == "regression"]


def placed_annotations(
    verdicts: Sequence[Verdict], changes: Sequence[DefinitionChange]
) -> tuple[list[dict[str, object]], list[tuple[Verdict, MetricVerdict]]]:
    """One annotation per regressed metric and changed line of its comparison; the regressions with no line."""
    found: list[dict[str, object]] = []
    unplaced: list[tuple[Verdict, MetricVerdict]] = []
    for verdict, mv in regressions(verdicts):
        placed = [c for c in changes if c.line and c.concerns(verdict.base, verdict.head, verdict.scenario)]
        if not placed:
            unplaced.append((verdict, mv))
        for change in placed:
            found.append(
                {
                    "path": change.file,
                    "start_line": change.line,
                    "end_line": change.line,
                    "annotation_level": "failure",
                    "title": f"Performance regression: {verdict.scenario} {metric_label(mv.metric)}",
                    "message": _message(verdict, mv, change),
                }
            )
    return found, unplaced


def _summary(
    verdicts: Sequence[Verdict],
    changes: Sequence[DefinitionChange],
    unplaced: Sequence[tuple[Verdict, MetricVerdict]],
    run_url: str,
) -> str:
    lines = [f"{status(verdicts)}: {headline(verdicts)}", ""]
    shown = list(dict.fromkeys(changes))[:30]
    if shown:
        lines += ["**Change under test**", "", *(f"- {change_line(c)}" for c in shown), ""]
    if unplaced:
        lines += ["**Regressions not tied to a changed line**", ""]
        lines += [f"- {cell(inert(_message(v, mv, None)))}" for v, mv in unplaced]
        lines.append("")
    if run_url:
        lines.append(f"[Full report, verdicts and charts]({run_url}) (artifact `perf-results`)")
    return "\n".join(lines).rstrip()[:SUMMARY_LIMIT] + "\n"


def _title(verdicts: Sequence[Verdict]) -> str:
    plain = status(verdicts).replace("**", "").split(" ", 1)[-1]
    return f"{plain}: {headline(verdicts)}"[:255]


def build_check_run(text: str, *, sha: str, run_url: str = "") -> list[dict[str, object]]:
    """The requests of the check run: the create payload, then one update per further batch of annotations."""
    if not SHA.fullmatch(sha) or len(sha) != 40:
        raise ReportError(f"not a full commit id: {sha[:40]!r}; give the run's head sha (40 hex digits)")
    if run_url and not RUN_URL.fullmatch(run_url):
        raise ReportError("--run-url is not a GitHub Actions run page; nothing is posted")
    doc, _ = load_document(text)
    verdicts, changes = doc.verdicts, doc.changes
    found, unplaced = placed_annotations(verdicts, changes)
    output = {"title": _title(verdicts), "summary": _summary(verdicts, changes, unplaced, run_url)}
    batches = [found[i : i + PER_REQUEST] for i in range(0, len(found), PER_REQUEST)] or [[]]
    create: dict[str, object] = {
        "name": NAME,
        "head_sha": sha,
        "status": "completed",
        "conclusion": conclusion(verdicts),
        "output": {**output, "annotations": batches[0]},
    }
    if run_url:
        create["details_url"] = run_url
    updates: list[dict[str, object]] = [{"output": {**output, "annotations": batch}} for batch in batches[1:]]
    return [create, *updates]


def write_check_run(verdicts: Path, out: Path, *, sha: str, run_url: str = "") -> list[Path]:
    """Read a verdicts file and write ``create.json`` and ``update-N.json`` into ``out``."""
    try:
        text = verdicts.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read {verdicts}: {exc}; give the verdicts.json of the run") from None
    requests = build_check_run(text, sha=sha, run_url=run_url)
    written = []
    for i, request in enumerate(requests):  # each whole or not at all (harness.report.atomic_files)
        path = out / ("create.json" if i == 0 else f"update-{i}.json")
        written.append(write_atomic(path, json.dumps(request, ensure_ascii=False, indent=1) + "\n"))
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.report.check_run VERDICTS --sha SHA [--run-url URL] --out DIR``: the check run's
    requests, for the posting job."""
    parser = argparse.ArgumentParser(prog="python -m harness.report.check_run", description=main.__doc__)
    parser.add_argument("verdicts", type=Path)
    parser.add_argument("--sha", required=True)
    parser.add_argument("--run-url", default="")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        written = write_check_run(args.verdicts, args.out, sha=args.sha, run_url=args.run_url)
    except ReportError as exc:
        print(f"dbperf: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug, in one line (harness.crash)
        print(crash_line(exc, parser.prog), file=sys.stderr)
        return EXIT_CRASH
    print(f"{len(written)} request(s) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
