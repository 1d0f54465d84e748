"""Executing a pull-request plan (``dbperf ci run``): A/B comparisons, then every report in one folder.

The base side of each comparison is loaded from the base ref's ``servers/`` and ``scenarios/``
(materialised with ``git archive`` into a temporary folder), the head side from the working tree.
Everything lands in the output folder:

    out/dbperf.duckdb (+ .runs/)   every run, base and head, failed ones included
    out/report.md                  the Markdown report (also appended to $GITHUB_STEP_SUMMARY)
    out/verdicts.json              each metric's estimate, interval, p-values, bound and verdict
    out/plan.json                  what was run, and why
    out/bmf.json                   Bencher Metric Format of the head side's runs
    out/site/                      the trend and scaling charts of these runs
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.ci.plan import CiPlan, load_side, materialise
from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.judge.gate import DEFAULT_ALPHA, exit_code
from harness.model import RunResult, Scenario, Verdict
from harness.pipeline.ab import ComparisonSpec, run_comparisons
from harness.pipeline.core import open_session
from harness.run.measure import Reporter, measure, new_group_id, plan_runs


@dataclass(frozen=True)
class CiOutcome:
    verdicts: tuple[Verdict, ...]
    runs: tuple[RunResult, ...]
    exit_code: int
    seconds: float
    report: Path


def _override(scenario: Scenario, settings: Settings) -> Scenario:
    return scenario.with_overrides(
        threads=settings.threads, time_s=settings.time, warmup_s=settings.warmup, repetitions=settings.repetitions
    )


def run_plan(
    settings: Settings,
    the_plan: CiPlan,
    out: Path,
    reporter: Reporter,
    *,
    alpha: float = DEFAULT_ALPHA,
    strict: bool = False,
    seed: int | None = None,
    max_pairs: int | None = None,
) -> CiOutcome:
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    (out / "plan.json").write_text(the_plan.to_json() + "\n")
    settings = dataclasses.replace(settings, store=out / "dbperf.duckdb")
    work = Path(tempfile.mkdtemp(prefix="dbperf-ci-"))
    try:
        trees = {"base": materialise(settings.root, the_plan.base_sha, work / "base"), "head": settings.root}
        specs = []
        for comparison in the_plan.comparisons:
            base_target, base_scenario = load_side(comparison.base, trees, the_plan.profile)  # type: ignore[arg-type]
            head_target, head_scenario = load_side(comparison.head, trees, the_plan.profile)  # type: ignore[arg-type]
            specs.append(
                ComparisonSpec(
                    base_target,
                    head_target,
                    _override(head_scenario, settings),
                    base_scenario=_override(base_scenario, settings)
                    if comparison.base.scenario_tree == "base"
                    else None,
                )
            )
        recordings = [load_side(r.side, trees, the_plan.profile) for r in the_plan.recordings]  # type: ignore[arg-type]
        containers = any(t.provider == "container" for s in specs for t in (s.base, s.head)) or any(
            t.provider == "container" for t, _ in recordings
        )
        runs: list[RunResult] = []
        verdicts: tuple[Verdict, ...] = ()
        if specs or recordings:
            session = open_session(settings, reporter, containers=containers)
            group = new_group_id()
            for target, recorded in recordings:
                scenario = _override(recorded, settings)
                runs += measure(
                    session,
                    plan_runs(
                        target,
                        scenario,
                        testbed=session.testbed,
                        git_sha=session.git_sha,
                        group_id=group,
                        label="record",
                    ),
                )
            if specs:
                pairs = max(2, settings.repetitions or max(s.scenario.repetitions for s in specs))
                result = run_comparisons(session, specs, pairs=pairs, max_pairs=max_pairs, seed=seed, alpha=alpha)
                verdicts = result.verdicts
                runs += result.runs
        code = exit_code(verdicts, strict=strict)
        if any(not r.ok for r in runs) and code == 0:
            code = 2
        report = write_outputs(out, the_plan, verdicts, runs, seconds=time.monotonic() - started)
        return CiOutcome(verdicts, tuple(runs), code, time.monotonic() - started, report)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_outputs(
    out: Path, the_plan: CiPlan, verdicts: tuple[Verdict, ...], runs: list[RunResult], *, seconds: float
) -> Path:
    from harness.report.markdown import render_markdown

    notes = list(the_plan.notes)
    if the_plan.empty:
        notes.append("nothing to run: no server target, scenario or harness change between base and head")
    title = f"dbperf performance check: {the_plan.head_ref} vs {the_plan.base_ref}"
    chart_links: list[tuple[str, str]] = []
    ok_runs = [r for r in runs if r.ok]
    if ok_runs:
        try:
            from harness.report.site import build_site
            from harness.store.local import Store

            site = build_site(Store(out / "dbperf.duckdb").metrics_table(), out / "site", images=True)
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
    markdown = render_markdown(verdicts, runs, title=title, warnings=notes, chart_links=chart_links)
    markdown += f"\n_{len(runs)} runs in {seconds / 60:.1f} min; plan: `plan.json`._\n"
    report = out / "report.md"
    report.write_text(markdown)
    docs = []
    for verdict in verdicts:
        doc = dataclasses.asdict(verdict)
        doc["outcome"] = verdict.outcome
        docs.append(doc)
    (out / "verdicts.json").write_text(json.dumps({"verdicts": docs}, indent=2, default=str) + "\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with Path(summary).open("a") as handle:
            handle.write(markdown + "\n")
    return report
