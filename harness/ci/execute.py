"""Executing a pull-request plan (``dbperf ci run``): the plan's A/B comparisons through the pipeline.

The base side of each comparison is loaded from the base ref's ``servers/`` and ``scenarios/``
(materialised with ``git archive`` into a temporary folder), the head side from the working tree.
Everything lands in one output folder (:mod:`harness.ci.folder`)::

    out/dbperf.duckdb (+ .runs/)   every run, base and head, failed ones included
    out/report.md                  the Markdown report (also appended to $GITHUB_STEP_SUMMARY)
    out/comment.md                 the pull-request comment (harness.report.comment)
    out/verdicts.json              each metric's estimate, interval, p-values, bound and verdict
    out/plan.json                  what was run, and why
    out/bmf.json                   Bencher Metric Format of the head side's runs
    out/site/                      the trend and scaling charts of these runs

Every run also goes to the store the ``store`` setting names (a store file, or a DuckLake shared by a
fleet) as it finishes, so the next plan's estimate is measured.

Runs the store refuses (a full or read-only disk) go to unsaved-run files, verdicts.json that the folder
refuses to the unsaved-run folder, and the command ends with one line (:attr:`CiOutcome.closing`) naming
what was kept where, what was not written, and ``dbperf import unsaved FILE...``, which stores the runs
later (exit 2).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from harness import pipeline, workspace
from harness.ci.folder import Written, write_outputs
from harness.ci.git import materialise
from harness.ci.records import CiPlan, Tree
from harness.ci.trees import load_side
from harness.config.settings import Settings, apply_overrides
from harness.model import EXIT_ERROR, Outcome, Scenario
from harness.report.atomic_files import write_atomic


@dataclass(frozen=True)
class CiOutcome:
    """The pipeline's outcome of the plan, where its report went, and the closing line ("" when all went well)."""

    outcome: Outcome
    seconds: float
    report: Path
    closing: str = ""


def closing_line(outcome: Outcome, written: Written) -> str:
    """One line when the store refused runs or a file was not written: what was kept where, and how to
    bring the runs back (the unsaved-run ledger's own line says ``dbperf import unsaved``)."""
    if not outcome.error and not written.failed and written.verdicts == written.report.with_name("verdicts.json"):
        return ""
    parts = [outcome.error] if outcome.error else []
    if written.verdicts is None:
        parts.append("the verdicts were written nowhere: they are in the table above")
    else:
        parts.append(f"verdicts kept in {written.verdicts}")
    if written.failed:
        parts.append(f"not written: {', '.join(written.failed)}")
    return "dbperf: error: " + "; ".join(parts)


def _override(scenario: Scenario, settings: Settings) -> Scenario:
    return apply_overrides(scenario, settings)


def run_plan(
    settings: Settings,
    the_plan: CiPlan,
    out: Path,
    reporter: pipeline.Reporter,
    options: pipeline.JudgeOptions | None = None,
) -> CiOutcome:
    """Run every comparison and recording of the plan, then write every report into ``out``."""
    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "plan.json", the_plan.to_json() + "\n")
    shared = settings.store
    settings = dataclasses.replace(settings, store=out / "dbperf.duckdb")
    work = workspace.current().make("ci")
    try:
        trees: dict[Tree, Path] = {
            "base": materialise(settings.root, the_plan.base_sha, work / "base"),
            "head": settings.root,
        }
        specs = []
        for comparison in the_plan.comparisons:
            base_server, base_scenario = load_side(comparison.base, trees, the_plan.profile)
            head_server, head_scenario = load_side(comparison.head, trees, the_plan.profile)
            specs.append(
                pipeline.ComparisonSpec(
                    base_server,
                    head_server,
                    _override(head_scenario, settings),
                    base_scenario=_override(base_scenario, settings)
                    if comparison.base.scenario_tree == "base"
                    else None,
                    kinds=comparison.kinds,
                )
            )
        recordings = [
            pipeline.Case(server, _override(scenario, settings))
            for server, scenario in (load_side(r.side, trees, the_plan.profile) for r in the_plan.recordings)
        ]
        servers = [*(t for s in specs for t in (s.base, s.head)), *(c.server for c in recordings)]
        # every run goes to the user's store too: the next ``ci plan`` prices the same comparisons from them
        session = pipeline.shared_session(settings, shared, reporter, servers) if servers else None  # none: no store
        outcome = pipeline.compare(
            settings, specs, reporter, options or pipeline.JudgeOptions(), recordings=recordings, session=session
        )
        written = write_outputs(out, the_plan, outcome, seconds=time.monotonic() - started)
        closing = closing_line(outcome, written)
        if closing and outcome.exit_code == 0:
            outcome = dataclasses.replace(outcome, exit_code=EXIT_ERROR, error=closing.removeprefix("dbperf: error: "))
        return CiOutcome(outcome, time.monotonic() - started, written.report, closing)
    finally:
        shutil.rmtree(work, ignore_errors=True)
