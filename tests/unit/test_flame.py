"""Differential flame graphs: call stacks rebuilt from captured callgrind dumps, merged, drawn.

``flame-base.callgrind`` is a hand-made dump (main calls parse and execute, both call alloc, execute
calls an unnamed function); ``flame-head.callgrind`` is the same with 90 more instructions in
execute's own body. The real dumps are the captured MariaDB and MySQL point-select windows.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from support.flames import graph, handmade, run
from support.reports import check_golden

from harness.judge.explain import explain
from harness.judge.flame_diff import ROOT, frame_name, merge, representative, roots, stacks
from harness.model import CostProfile, RunResult
from harness.model.flame_graph import FlameFrame, FlameGraph, top_changes
from harness.report.flame_svg import colour, file_name, markdown_lines, render_svg
from harness.report.mermaid import bar_chart, flame_chart, metric_charts, summary_charts

REAL = (
    "mariadb-10.11.19-local-point_select-t1.callgrind.gz",
    "mariadb-10.11.19-local-update_index-t1-rv.callgrind.gz",
    "mysql-9.7.4-container-point_select-t1.callgrind.gz",
)


def test_call_graph_reads_the_edges_of_a_handmade_dump() -> None:
    g = graph("flame-base.callgrind")
    assert g.total == 1000
    assert g.edges["main"] == {"parse(char const*)": 300, "execute(Plan*)": 600}
    assert g.edges["execute(Plan*)"] == {"alloc(unsigned long)": 200, "0x0000000000401000": 100}
    assert g.self_ir["alloc(unsigned long)"] == 300
    assert g.inclusive("main") == 1000 == g.total


def test_handmade_stacks_are_exact_one_level_down() -> None:
    tree = stacks(graph("flame-base.callgrind"), per=10)
    assert tree == {
        (ROOT,): 100.0,
        (ROOT, "main"): 100.0,
        (ROOT, "main", "parse"): 30.0,
        (ROOT, "main", "parse", "alloc"): 10.0,
        (ROOT, "main", "execute"): 60.0,
        (ROOT, "main", "execute", "alloc"): 20.0,
        (ROOT, "main", "execute", "0x401000"): 10.0,
    }


@pytest.mark.parametrize("name", REAL)
def test_real_dumps_roots_hold_the_total(name: str) -> None:
    g = graph(name)
    found = roots(g)
    # every instruction has a bottom frame: the roots' own costs add up to the dump's total (MySQL's
    # callgrind edges round a few hundred instructions apart, 2e-5 of it)
    assert sum(found.values()) == pytest.approx(g.total, rel=1e-4)
    assert max(found, key=lambda n: found[n]) == "clone"  # the thread start holds nearly all of it
    tree = stacks(g, per=1)
    assert tree[(ROOT,)] == g.total
    root = merge(tree, tree)
    assert root.head == g.total
    assert sum(c.head for c in root.children) <= g.total * (1 + 1e-4)
    for _, frame in root.walk():  # a frame holds its children (each side, up to rounding)
        assert sum(c.head for c in frame.children) <= frame.head * (1 + 1e-9) + 1e-6
    names = {path[-1] for path in tree}
    assert "dispatch_command" in names or any("dispatch_command" in n for n in names)


def test_a_change_shows_red_in_the_frame_that_grew_and_nowhere_else() -> None:
    fg = handmade()
    frames = {name: frame for _, frame in fg.root.walk() for name in (frame.name,) if name != "alloc"}
    assert fg.root.base == 100.0
    assert fg.root.head == 109.0
    execute = frames["execute"]
    assert (execute.base, execute.head, execute.self_delta) == (60.0, 69.0, pytest.approx(9.0))
    largest = max(abs(f.self_delta) for _, f in fg.root.walk()[1:])
    assert colour(execute.self_delta, largest) == "rgb(255,0,0)"  # the deepest red
    for _, frame in fg.root.walk()[1:]:
        if frame is not execute:
            assert frame.self_delta == pytest.approx(0.0)
            assert colour(frame.self_delta, largest) == "rgb(221,221,221)", frame.name
    assert colour(-4.5, 9.0) == "rgb(66,66,255)"  # shrank: blue; half the largest change, sqrt(1/2) as deep
    # the frame the flame graph colours deepest is the function explain.py names first
    moved = top_changes(fg)
    named = explain({"execute": 30.0, "main": 10.0}, {"execute": 39.0, "main": 10.0})
    assert moved[0][1].name == named[0].name == "execute"
    assert moved[0][0] == (ROOT, "main", "execute")


def test_frames_only_in_base_have_no_width_and_are_listed() -> None:
    base = {(ROOT,): 100.0, (ROOT, "main"): 100.0, (ROOT, "main", "gone"): 40.0}
    head = {(ROOT,): 60.0, (ROOT, "main"): 60.0}
    fg = FlameGraph("s", 1, "b", "h", merge(base, head), "r1", "r2", 0.002)
    gone = fg.root.children[0].children[0]
    assert (gone.name, gone.base, gone.head) == ("gone", 40.0, 0.0)
    svg = render_svg(fg)
    assert "Only in base (no width in head): 1 frame(s)" in svg
    assert 'data-name="gone"' not in svg


def test_pruning_cuts_only_where_both_sides_are_small() -> None:
    base = {(ROOT,): 1000.0, (ROOT, "a"): 1000.0, (ROOT, "a", "tiny"): 1.0, (ROOT, "a", "grew"): 1.0}
    head = {(ROOT,): 1000.0, (ROOT, "a"): 1000.0, (ROOT, "a", "tiny"): 1.0, (ROOT, "a", "grew"): 30.0}
    root = merge(base, head, min_share=0.01)
    assert [c.name for c in root.children[0].children] == ["grew"]


def test_frame_names_drop_parameters_and_zeros() -> None:
    assert frame_name("JOIN::optimize_inner(bool)") == "JOIN::optimize_inner"
    assert frame_name("0x0000000000d91da0") == "0xd91da0"
    assert frame_name("pthread_mutex_lock@@GLIBC_2.2.5") == "pthread_mutex_lock@@GLIBC_2.2.5"


def test_the_median_run_represents_a_side() -> None:
    runs = [run(name, "flame-base.callgrind", events) for name, events in (("r1", 10), ("r2", 5), ("r3", 20))]
    # instructions per transaction: r1 100, r2 200, r3 50: the median is r1
    assert representative(runs) is runs[0]
    assert representative(runs[1:]) is runs[2]  # lower median of two
    no_dump = replace(runs[0], cost_profile=CostProfile(total_ir=1000))
    assert representative([no_dump]) is None


def structure(svg: str) -> list[str]:
    """The frames of an SVG as ``name x width fill`` lines (what the golden file checks)."""
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    out = []
    for group in root.iterfind("s:g", ns):
        rect = group.find("s:rect", ns)
        title = group.find("s:title", ns)
        assert rect is not None and title is not None and title.text
        where = f"x={rect.get('x')} y={rect.get('y')} w={rect.get('width')}"
        out.append(f"{group.get('data-name')} {where} {rect.get('fill')}")
    return out


def test_svg_golden_and_self_contained() -> None:
    fg = handmade()
    svg = render_svg(fg)
    assert file_name(fg) == "flamegraph-oltp_point_select-1t.svg"
    check_golden("flamegraph_handmade.svg", svg)
    assert "<script" not in svg and "href" not in svg  # nothing external, no script
    lines = structure(svg)
    assert lines[0].startswith("all x=10.00 ") and "w=1180.00" in lines[0]
    execute = next(line for line in lines if line.startswith("execute "))
    assert execute.endswith("rgb(255,0,0)")
    assert "w=746.97" in execute  # 69 of 109 instructions per transaction, of 1180 px
    tooltip = re.search(r"<title>execute\n([^<]*)</title>", svg)
    assert tooltip is not None
    assert "base 60, head 69 (+15.00 %)" in tooltip.group(1)
    assert "own (not in a child frame shown): base 30, head 39 (+9.0)" in tooltip.group(1)
    assert "approximation" in svg


def test_real_svg_parses_and_labels_fit() -> None:
    tree = stacks(graph(REAL[0]), per=1000)
    fg = FlameGraph("oltp_point_select", 1, "b", "h", merge(tree, tree), "r1", "r2", 0.002)
    svg = render_svg(fg)
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    for group in root.iterfind("s:g", ns):
        rect, text = group.find("s:rect", ns), group.find("s:text", ns)
        assert rect is not None
        assert rect.get("fill") == "rgb(221,221,221)" or group.get("data-name") == ROOT  # nothing moved
        if text is not None and text.text:
            assert len(text.text) * 6.6 <= float(rect.get("width", "0"))  # the label fits its frame


def test_markdown_and_mermaid_name_the_frame_that_moved() -> None:
    fg = handmade()
    lines = markdown_lines([fg])
    assert "[`flamegraph-oltp_point_select-1t.svg`](flamegraph-oltp_point_select-1t.svg)" in lines[2]
    assert any(line.startswith("| execute | main ← all | 30 | 39 | +9.0 |") for line in lines)
    chart = flame_chart(fg)
    assert chart[0] == "```mermaid" and chart[1] == "xychart-beta"
    assert chart[3] == '    x-axis ["execute: +9.00"]'
    assert chart[5] == "    bar [9]"


def test_a_flame_graph_where_nothing_moved_says_so_and_draws_no_chart() -> None:
    tree = stacks(graph("flame-base.callgrind"), per=10)
    fg = FlameGraph("oltp_point_select", 1, "b", "h", merge(tree, tree), "r1", "r2", 0.0)
    lines = markdown_lines([fg], link=False)
    assert "No frame's own instructions per transaction moved." in lines
    assert not any(line.startswith("| frame ") for line in lines)
    assert flame_chart(fg) == []
    assert "```mermaid" not in "\n".join(summary_charts([], [fg]))


def test_bar_charts_are_never_empty_and_mark_zero() -> None:
    assert bar_chart("t", "y", []) == []
    lines = bar_chart("t", "change, %", [("a", 1.5), ("b", -0.5)], " %")
    assert '    x-axis ["a: +1.50 %", "b: -0.50 %"]' in lines
    assert '    y-axis "change, %" -0.7 --> 1.7' in lines
    assert "    line [0, 0]" in lines  # a negative bar starts at the axis: the zero line is drawn


def test_summary_charts_cover_every_judged_metric() -> None:
    from support.reports import CASES

    verdicts, _ = CASES["regression"]
    lines = summary_charts(verdicts, [handmade()], trend_charts=2)
    text = "\n".join(lines)
    estimates = [m for v in verdicts for m in v.metrics if m.estimate_pct is not None]
    moved = {m.metric for m in estimates if abs(m.estimate_pct or 0.0) >= 0.005}
    assert moved
    assert text.count("```mermaid") == len(moved) + 1  # one per metric that moved, one per flame graph
    for block in text.split("```mermaid")[1:]:
        bars = re.search(r"bar \[([^\]]*)\]", block)
        assert bars is not None and bars.group(1).strip()  # never an empty chart
    assert "`flamegraph-oltp_point_select-1t.svg` in the `perf-results` artifact" in text
    assert "](flamegraph" not in text  # no relative link: it would not resolve in a job summary


def test_frame_change() -> None:
    assert FlameFrame("x", 0.0, 5.0).change_pct is None
    assert FlameFrame("y", 10.0, 12.0).change_pct == pytest.approx(20.0)


def test_metrics_that_did_not_move_are_named_not_charted() -> None:
    from support.reports import mv, verdict

    from harness.report.verdicts import metric_label

    moved, still = mv("instr_per_txn", "regression", 1.2, 1.0, 1.4), mv("cpu_per_txn", "pass", 0.001, -0.2, 0.2)
    lines = metric_charts([verdict("oltp_point_select", 1, moved, still)])
    assert "\n".join(lines).count("```mermaid") == 1
    assert lines[-2] == f"Unchanged (0.00 %) in every comparison: {metric_label('cpu_per_txn')}."


def test_an_outcome_gets_one_flame_graph_per_cost_comparison() -> None:
    from harness.model import Outcome, Verdict
    from harness.pipeline.outcome_flames import flame_graphs

    def side(server: str, dump: str, n: int) -> list[RunResult]:
        return [replace(run(f"{server}-{i}", dump), server=server) for i in range(n)]

    runs = (*side("base", "flame-base.callgrind", 3), *side("head", "flame-head.callgrind", 3))
    one = Verdict("ab", "oltp_point_select", 1, "base", "head", (), kind="cost")
    timing = replace(one, kind="time")
    graphs, notes = flame_graphs(Outcome(runs, (one, timing)))
    assert [file_name(g) for g in graphs] == ["flamegraph-oltp_point_select-1t.svg"]
    assert [n.split(":")[0] for n in notes] == ["flame graph of oltp_point_select 1t"]  # its unnamed share
    assert graphs[0].root.head == pytest.approx(109.0)  # the handmade head: 1,090 instructions, 10 transactions
    # two comparisons of one scenario: the head server names each file; a side without dumps gets a note
    other = replace(one, head="mariadb-local+performance_schema=ON")
    stripped = tuple(replace(r, server=other.head, cost_profile=CostProfile(total_ir=1090)) for r in runs[3:])
    graphs, notes = flame_graphs(Outcome((*runs, *stripped), (one, other)))
    assert [file_name(g) for g in graphs] == ["flamegraph-oltp_point_select-1t.svg"]
    assert notes[-1] == "no flame graph for oltp_point_select 1t: its cost runs kept no callgrind dump"
    twice = replace(other, head="head2")
    again = tuple(replace(r, server="head2") for r in runs[3:])
    graphs, _ = flame_graphs(Outcome((*runs, *again), (one, twice)))
    assert [file_name(g) for g in graphs] == [
        "flamegraph-oltp_point_select-head-1t.svg",
        "flamegraph-oltp_point_select-head2-1t.svg",
    ]


def test_a_changed_scenarios_flame_graph_compares_its_base_definition_with_its_head() -> None:
    """A changed scenario runs on one server with itself: its base side is stored as ``S@base``, and the
    flame graph must take that side's runs (head against head showed nothing, under a table that moved)."""
    from harness.model import Outcome, Verdict
    from harness.pipeline.outcome_flames import flame_graphs

    def side(scenario: str, dump: str) -> list[RunResult]:
        return [replace(run(f"{scenario}-{i}", dump), scenario=scenario) for i in range(3)]

    runs = (*side("oltp_point_select@base", "flame-base.callgrind"), *side("oltp_point_select", "flame-head.callgrind"))
    one = Verdict("ab", "oltp_point_select", 1, "mariadb-local", "mariadb-local", (), kind="cost")
    (flame,), notes = flame_graphs(Outcome(runs, (one,)))
    assert flame.base_run.startswith("oltp_point_select@base-") and flame.head_run.startswith("oltp_point_select-")
    assert (flame.root.base, flame.root.head) == (pytest.approx(100.0), pytest.approx(109.0))
    assert top_changes(flame)[0][1].self_delta == pytest.approx(9.0)  # execute's 90 more instructions
    # the handmade dumps' one unnamed function (100 of 1,000 and of 1,090 instructions) is stated
    assert (flame.base_unnamed, flame.head_unnamed) == (pytest.approx(0.1), pytest.approx(100 / 1090))
    assert notes == (
        "flame graph of oltp_point_select 1t: 10.0 % of base's and 9.2 % of head's instructions are in unnamed "
        "functions (addresses of a binary without symbols for them); their frames line up between runs of one "
        "build only",
    )
