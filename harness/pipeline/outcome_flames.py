"""The differential flame graphs of an outcome's cost comparisons: each side's run chosen, its dump read.

For every A/B cost verdict, :func:`harness.judge.flame_diff.representative` picks each side's run, the
run's stored callgrind dump becomes a call graph (:func:`harness.measure.cost_dump.call_graph`), and
:func:`harness.judge.flame_diff.differential` merges the two sides' stacks. A comparison whose runs kept
no dump (imported, or read from an older store) gets no flame graph and a note saying so.

A changed scenario is compared on one server with itself: its base side is stored under a label of the
scenario's name (``S@base``, as ``dbperf ci`` names what it loads from the base tree), so the base
side's runs are that label's when the outcome holds any, and the scenario's own otherwise. Each graph
with instructions in unnamed functions (raw addresses of a binary without symbols for them) gets a note
with their share on each side: such frames line up between runs of one build only
(docs/pull-request-checks.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from harness.errors import HarnessError
from harness.judge.flame_diff import differential, representative, unnamed_share
from harness.measure.cost_dump import call_graph
from harness.model import Outcome, RunResult, Verdict
from harness.model.flame_graph import FlameGraph
from harness.servers.callgrind import TOGGLE

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def _side(runs: Sequence[RunResult], verdict: Verdict, server: str, scenario: str) -> list[RunResult]:
    return [
        r
        for r in runs
        if r.kind == "cost" and r.server == server and r.threads == verdict.threads and r.scenario == scenario
    ]


def _base_side(runs: Sequence[RunResult], verdict: Verdict) -> list[RunResult]:
    """The base side's cost runs: those of a label of the scenario (``S@base``: a changed scenario's base
    definition), else the scenario's own."""
    labels = sorted({r.scenario for r in runs if r.scenario.startswith(verdict.scenario + "@")})
    changed = [r for label in labels for r in _side(runs, verdict, verdict.base, label)]
    return changed or _side(runs, verdict, verdict.base, verdict.scenario)


def unnamed_note(graph: FlameGraph) -> str:
    """One line on the share of instructions in unnamed functions, "" when neither side has any."""
    if graph.base_unnamed <= 0 and graph.head_unnamed <= 0:
        return ""
    return (
        f"flame graph of {graph.scenario} {graph.threads}t: {graph.base_unnamed * 100:.1f} % of base's and "
        f"{graph.head_unnamed * 100:.1f} % of head's instructions are in unnamed functions (addresses of a "
        "binary without symbols for them); their frames line up between runs of one build only"
    )


def flame_graphs(outcome: Outcome) -> tuple[tuple[FlameGraph, ...], tuple[str, ...]]:
    """One flame graph per A/B cost comparison of ``outcome``, and notes on the ones that could not be drawn."""
    graphs: list[FlameGraph] = []
    notes: list[str] = []
    for verdict in outcome.verdicts:
        if verdict.kind != "cost" or verdict.mode != "ab":
            continue
        base_run = representative(_base_side(outcome.runs, verdict))
        head_run = representative(_side(outcome.runs, verdict, verdict.head, verdict.scenario))
        label = f"{verdict.scenario} {verdict.threads}t"
        if base_run is None or head_run is None or base_run.cost_profile is None or head_run.cost_profile is None:
            notes.append(f"no flame graph for {label}: its cost runs kept no callgrind dump")
            continue
        try:
            base_graph = call_graph(base_run.cost_profile.dump)
            head_graph = call_graph(head_run.cost_profile.dump)
        except HarnessError as exc:
            notes.append(f"no flame graph for {label}: {exc}")
            continue
        graph = differential(
            verdict.scenario,
            verdict.threads,
            ((verdict.base, base_run, base_graph), (verdict.head, head_run, head_graph)),
            anchor=TOGGLE,  # stacks start where collection does: statement dispatch
        )
        graph = replace(graph, base_unnamed=unnamed_share(base_graph), head_unnamed=unnamed_share(head_graph))
        graphs.append(graph)
        if note := unnamed_note(graph):
            notes.append(note)
    if len({(g.base, g.head) for g in graphs}) > 1:  # several comparisons: the head names the file too
        graphs = [replace(g, tag=_UNSAFE.sub("_", g.head).strip("_")[:60]) for g in graphs]
    return tuple(graphs), tuple(notes)
