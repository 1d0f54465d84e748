"""A cost comparison's differential flame graph: call stacks rebuilt from each side's call graph, merged.

A callgrind dump keeps, per caller → callee edge, the inclusive instructions of those calls, not whole
call stacks. Each side's stacks are rebuilt from it: from every root (a function whose inclusive cost
exceeds what its callers' edges hand it: ``clone``, the thread start, and crumbs of calls that were
under way when collection started), depth first, each callee's frame gets the edge's instructions
scaled by how much of its caller's inclusive cost this stack holds. One level down that is exact (the
edge is the cost of those calls); deeper, it assumes a function spends its instructions alike
whichever caller called it, an approximation: a function called from two places with different
arguments shares its callees between them in proportion, not as they really were. Recursion is cut
(a function already on the stack is not expanded again) and frames below ``min_share`` of the total
are pruned, which also bounds the work (at most depth / min_share frames).

Which run per side: the median run by instructions per transaction (the lower median of an even
count), a real run, so its call graph is one run's and not a blend; cost runs repeat,
so any run shows the same shape, and the median keeps a lone run that counted more (which the judge
sets aside) out of the picture.

Frames are keyed by function name without its parameter list (as :mod:`harness.judge.explain` keys
them), so both sides line up, and named alike in the picture; addresses (``0x...``, unnamed
functions) are kept, without their leading zeros: they line up between two runs of one build only.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Sequence

from harness.judge.explain import UNNAMED, key
from harness.model import RunResult
from harness.model.flame_graph import CallGraph, FlameFrame, FlameGraph

MIN_SHARE = 0.0005
"""Frames holding less than this share of the total instructions are left out (0.05 %: about half a pixel
across a 1,200-pixel graph; a function called from many places, pthread_getspecific say, keeps its frames)."""
MAX_DEPTH = 96
"""Stacks deeper than this are cut (far deeper than a server's call stacks under statement dispatch)."""
ROOT = "all"
EXPAND_MARGIN = 4
"""Each side is expanded down to ``min_share / EXPAND_MARGIN`` before the merged frames are pruned."""

_Tree = dict[tuple[str, ...], float]


def frame_name(name: str) -> str:
    """The name a frame shows: without its parameter list, addresses kept (not lumped as explain does)."""
    shown = key(name)
    if shown != UNNAMED:
        return shown
    return "0x" + (name[2:].lstrip("0") or "0") if name.startswith("0x") else name


def unnamed_share(graph: CallGraph) -> float:
    """The share of the dump's instructions spent in unnamed functions (callgrind's ``0x...`` names)."""
    unnamed = sum(ir for name, ir in graph.self_ir.items() if name.startswith("0x"))
    return unnamed / graph.total if graph.total > 0 else 0.0


def roots(graph: CallGraph) -> dict[str, int]:
    """Functions with instructions no caller's edge accounts for, and how many (the stacks' bottoms)."""
    incoming: dict[str, int] = defaultdict(int)
    for caller, callees in graph.edges.items():
        for callee, cost in callees.items():
            if callee != caller:
                incoming[callee] += cost
    found = {}
    for name in set(graph.self_ir) | set(graph.edges):
        own = graph.inclusive(name) - incoming.get(name, 0)
        if own > 0:
            found[name] = own
    return found


def stacks(graph: CallGraph, *, per: float = 1.0, min_share: float = MIN_SHARE, anchor: str = "") -> _Tree:
    """Inclusive instructions (divided by ``per``: transactions) of every call stack, root ``all`` first.

    The ``all`` frame is the dump's total; each stack's value is its frame's inclusive cost along
    that stack (see the module's note on the approximation). With an ``anchor`` (a glob such as the
    collection toggle, ``dispatch_command*``), a stack starts at its first frame matching it: what was
    below it (the connection's loop, unnamed on some runs) is left out, so every run's stacks line up.
    """
    tree: _Tree = defaultdict(float)
    floor = min_share * graph.total
    tree[(ROOT,)] = graph.total / per

    def expand(name: str, width: float, path: tuple[str, ...], on_stack: frozenset[str], anchored: bool) -> float:
        """Adds the stacks from this frame up; returns the width moved onto an anchored stack."""
        rerooted = not anchored and bool(anchor) and fnmatch.fnmatchcase(name, anchor)
        if rerooted:
            path, anchored = (ROOT, frame_name(name)), True
        tree[path] += width / per
        moved = 0.0
        inclusive = graph.inclusive(name)
        if len(path) < MAX_DEPTH and inclusive > 0:
            scale = width / inclusive
            for callee, cost in graph.edges.get(name, {}).items():
                share = cost * scale
                if callee not in on_stack and share >= floor:  # recursion: its cost stays in this frame
                    moved += expand(callee, share, (*path, frame_name(callee)), on_stack | {callee}, anchored)
        if rerooted:
            return width
        tree[path] -= moved / per
        return moved

    for name, cost in sorted(roots(graph).items(), key=lambda item: -item[1]):
        if cost >= floor:
            expand(name, float(cost), (ROOT, frame_name(name)), frozenset((name,)), False)
    return dict(tree)


_Children = dict[tuple[str, ...], list[tuple[str, ...]]]


def _frame(path: tuple[str, ...], base: _Tree, head: _Tree, children: _Children) -> FlameFrame:
    kids = sorted(children.get(path, []), key=lambda p: (-head.get(p, 0.0), -base.get(p, 0.0), p[-1]))
    return FlameFrame(
        path[-1],
        base.get(path, 0.0),
        head.get(path, 0.0),
        tuple(_frame(k, base, head, children) for k in kids),
    )


def merge(base: _Tree, head: _Tree, *, min_share: float = 0.0) -> FlameFrame:
    """Both sides' stacks as one tree of frames (a stack one side lacks has 0 there), widest first.

    Stacks under ``min_share`` of the larger root on both sides are left out.
    """
    floor = min_share * max(base.get((ROOT,), 0.0), head.get((ROOT,), 0.0))
    children: _Children = defaultdict(list)
    for path in set(base) | set(head):
        if len(path) > 1 and max(base.get(path, 0.0), head.get(path, 0.0)) >= floor:
            children[path[:-1]].append(path)
    return _frame((ROOT,), base, head, children)


def representative(runs: Sequence[RunResult]) -> RunResult | None:
    """The run whose instructions per transaction are the median of the side's (lower median), with a dump."""
    usable = [
        r
        for r in runs
        if r.ok and r.cost_profile is not None and r.cost_profile.dump and r.totals is not None and r.totals.events > 0
    ]
    if not usable:
        return None

    def per_txn(run: RunResult) -> float:
        assert run.cost_profile is not None
        assert run.totals is not None
        return run.cost_profile.total_ir / run.totals.events

    ordered = sorted(usable, key=lambda r: (per_txn(r), r.run_id))
    return ordered[(len(ordered) - 1) // 2]


def differential(
    scenario: str,
    threads: int,
    sides: tuple[tuple[str, RunResult, CallGraph], tuple[str, RunResult, CallGraph]],
    *,
    min_share: float = MIN_SHARE,
    anchor: str = "",
) -> FlameGraph:
    """The flame graph of base against head: each side's call graph, per transaction of its run.

    ``anchor``: where stacks start (:func:`stacks`): the function collection was toggled on.
    """
    (base_name, base_run, base_graph), (head_name, head_run, head_graph) = sides
    # each side is expanded deeper than shown, so a frame just over the line on one side and just under it
    # on the other is not drawn as new (or gone): it is cut only where both sides are under it
    deeper = min_share / EXPAND_MARGIN
    base_tree = stacks(base_graph, per=_events(base_run), min_share=deeper, anchor=anchor)
    head_tree = stacks(head_graph, per=_events(head_run), min_share=deeper, anchor=anchor)
    return FlameGraph(
        scenario=scenario,
        threads=threads,
        base=base_name,
        head=head_name,
        root=merge(base_tree, head_tree, min_share=min_share),
        base_run=base_run.run_id,
        head_run=head_run.run_id,
        min_share=min_share,
    )


def _events(run: RunResult) -> float:
    return float(run.totals.events) if run.totals is not None and run.totals.events > 0 else 1.0
