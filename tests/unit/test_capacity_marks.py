"""Capacity figures outside the measured client range are marked wherever they are shown, and the sweep's
notes count sweeps instead of saying "every" (issue 34, item 3). Seeded synthetic sweeps shaped like the
thread-pool comparison of the issue: every base sweep missed the 100 ms SLO at 16 clients, and 5 of 11
head sweeps crossed it inside the sweep while 6 met it at every count."""

from __future__ import annotations

import io
import math
import random
from dataclasses import replace

from support.factories import run, scenario
from support.reports import check

from harness.judge.gate import PairedCase, judge_pairs
from harness.model.verdict import mark
from harness.report.capacity_cells import LEGEND, side_cell
from harness.report.capacity_chart import capacity_spec
from harness.report.markdown import render_markdown
from harness.report.verdicts import print_verdicts

SLO = 100.0


def _cases(pairs: int = 11, seed: int = 4) -> list[PairedCase]:
    rng = random.Random(seed)
    scen = scenario(
        "threadpool_select",
        threads=(16, 128),
        slo_p95_ms=SLO,
        gate_metrics=("qps", "capacity_clients", "capacity_qps"),
        min_effects={"qps": 0.05, "capacity_clients": 0.20, "capacity_qps": 0.10},
    )

    def noisy(x: float) -> float:
        return x * math.exp(rng.gauss(0, 0.05))

    by_threads: dict[int, list] = {16: [], 128: []}
    for i in range(pairs):
        head_top = 80.0 if i < 6 else 160.0  # 6 head sweeps meet 100 ms at 128 clients, 5 cross it
        by_threads[16].append((run(noisy(2000.0), p95=noisy(330.0), threads=16),
                               run(noisy(3000.0), p95=noisy(20.0), threads=16, server="pool")))  # fmt: skip
        by_threads[128].append((run(noisy(2100.0), p95=noisy(2500.0), threads=128),
                                run(noisy(4000.0), p95=noisy(head_top), threads=128, server="pool")))  # fmt: skip
    return [PairedCase(scen, t, "one-thread", "pool", by_threads[t]) for t in (16, 128)]


def _capacity():
    (verdict,) = [v for v in judge_pairs(_cases()) if v.curves]
    return verdict, {m.metric: m for m in verdict.metrics}


def test_the_marks_follow_how_each_side_reached_the_slo():
    verdict, metrics = _capacity()
    clients = metrics["capacity_clients"]
    assert clients.base_median is not None and clients.base_median < 16  # below the sweep: extrapolated
    assert side_cell(verdict, clients, "base").endswith(" extrapolated")
    assert side_cell(verdict, clients, "head").endswith("(at least in 6 of 11 sweeps)")
    assert mark([c for c in verdict.curves if c.side == "head"][:6]) == "at least"
    assert mark([c for c in verdict.curves if c.side == "head"][6:]) == ""


def test_the_notes_count_sweeps_and_never_say_every_unless_every_one_did():
    verdict, _ = _capacity()
    base = next(w for w in verdict.warnings if "(base)" in w)
    head = next(w for w in verdict.warnings if "(head)" in w)
    assert "missed p95 ≤ 100 ms already at 16 clients in 11 of 11 sweeps" in base and "(extrapolated)" in base
    assert "reached p95 100 ms within the sweep in 5 of 11 sweeps" in head
    assert "met p95 ≤ 100 ms at every client count in 6 of 11 sweeps" in head


def test_terminal_markdown_and_chart_show_the_marks():
    verdict, _ = _capacity()
    out = io.StringIO()
    print_verdicts([verdict], out)
    terminal = " ".join(out.getvalue().split())
    assert "extrapolated" in terminal and "Capacity at the SLO: 'extrapolated' marks" in terminal
    markdown = render_markdown(check([verdict]))
    row = next(line for line in markdown.splitlines() if "clients at" in line.lower() and line.startswith("|"))
    assert " extrapolated |" in row and "(at least in 6 of 11 sweeps)" in row
    assert LEGEND in markdown
    spec = capacity_spec(verdict)
    assert spec is not None
    subtitle = spec["title"]["subtitle"]
    assert any(line.startswith("base one-thread") and "extrapolated" in line for line in subtitle)


def test_a_sweep_measured_within_its_range_carries_no_mark():
    verdict, _ = _capacity()
    inside = tuple(replace(c, reached="within") for c in verdict.curves)
    plain = replace(verdict, curves=inside)
    clients = next(m for m in plain.metrics if m.metric == "capacity_clients")
    assert side_cell(plain, clients, "base") == side_cell(plain, replace(clients, metric="qps"), "base")


def test_a_window_too_short_for_the_top_count_is_named_with_whether_the_figure_rests_on_it():
    cases = _cases()
    top = cases[1]
    assert top.pairs[0][0].totals is not None
    short = [(replace(b, totals=replace(b.totals, time_s=3.0)), h) for b, h in top.pairs if b.totals]
    (verdict,) = [v for v in judge_pairs([cases[0], replace(top, pairs=short)]) if v.curves]
    note = next(w for w in verdict.warnings if w.startswith("base: the measured window"))
    assert "at 128 clients in 11 run(s)" in note and "do not rest on those runs" in note  # extrapolated from 16


def test_the_comment_marks_them_too():
    from harness.report.comment import render_comment

    verdict, _ = _capacity()
    comment = render_comment(check([verdict]))
    rows = [line for line in comment.splitlines() if line.startswith("| threadpool_select")]
    assert rows and all(" extrapolated |" in row for row in rows), rows

    # the comment the trusted job posts, rebuilt from verdicts.json, carries the same marks
    import json

    from harness.model.outcome import Outcome
    from harness.report.trusted_comment import build_comment

    posted = build_comment(json.dumps(Outcome((), (verdict,)).document(), default=str))
    rows = [line for line in posted.splitlines() if line.startswith("| threadpool_select")]
    assert rows and all(" extrapolated |" in row for row in rows), posted


def test_capacity_resting_on_an_unsteady_window_is_not_decided():
    cases = _cases()
    low = cases[0]  # the base's figures are extrapolated from 16 clients: a short window there is what they rest on
    short = [(replace(b, totals=replace(b.totals, time_s=1.0)), h) for b, h in low.pairs if b.totals]
    (verdict,) = [v for v in judge_pairs([replace(low, pairs=short), cases[1]]) if v.curves]
    clients = next(m for m in verdict.metrics if m.metric == "capacity_clients")
    assert clients.outcome == "inconclusive" and clients.cause == "unsteady"  # decided as an improvement before
    assert "rest on such a run in 11 of 11 sweeps" in clients.reason
    _, before = _capacity()
    assert before["capacity_clients"].outcome == "improvement"
