"""Differential flame graphs built from the callgrind dumps in tests/data/callgrind."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.judge.flame_diff import differential
from harness.measure.cost_dump import call_graph, read_dump
from harness.model import RunResult, Totals
from harness.model.flame_graph import CallGraph, FlameGraph
from support.reports import make_run

DATA = Path(__file__).resolve().parents[1] / "data" / "callgrind"


def graph(name: str) -> CallGraph:
    return call_graph((DATA / name).read_bytes())


def run(run_id: str, dump_file: str, events: int = 10) -> RunResult:
    base = make_run(1, server="mariadb-local", scenario="oltp_point_select", threads=1)
    return replace(
        base,
        run_id=run_id,
        kind="cost",
        cost_profile=read_dump(DATA / dump_file),
        totals=Totals(time_s=1.0, events=events, reads=events, writes=0, other=0, errors=0, reconnects=0),
    )


def handmade() -> FlameGraph:
    return differential(
        "oltp_point_select",
        1,
        (
            ("base", run("b1", "flame-base.callgrind"), graph("flame-base.callgrind")),
            ("head", run("h1", "flame-head.callgrind"), graph("flame-head.callgrind")),
        ),
    )
