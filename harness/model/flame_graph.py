"""Records of a differential flame graph: a cost run's call graph, and the frames of base against head.

``CallGraph`` is what a callgrind dump says about calls: every function's self instructions and, per
caller → callee edge, the inclusive instructions of those calls. ``FlameFrame`` is one frame of the
merged stacks of a cost comparison (both sides, instructions per transaction); ``FlameGraph`` is one
comparison's whole picture (scenario x thread count), as ``judge/flame_diff.py`` builds it and
``report/flame_svg.py`` draws it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallGraph:
    """A cost run's call graph: self instructions per function, inclusive instructions per call edge."""

    total: int  # the dump's ``totals:`` (every instruction collected)
    self_ir: Mapping[str, int] = field(default_factory=dict)
    #: caller → callee → inclusive instructions of the calls from that caller's body
    edges: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def inclusive(self, name: str) -> int:
        """A function's own instructions and those of every call it made (recursive calls included)."""
        return self.self_ir.get(name, 0) + sum(self.edges.get(name, {}).values())


@dataclass(frozen=True)
class FlameFrame:
    """One frame: a function on one call stack, its inclusive instructions per transaction on each side."""

    name: str
    base: float
    head: float
    children: tuple[FlameFrame, ...] = ()

    @property
    def self_base(self) -> float:
        """Instructions per transaction in this frame and not in a child frame shown (base)."""
        return max(0.0, self.base - sum(c.base for c in self.children))

    @property
    def self_head(self) -> float:
        return max(0.0, self.head - sum(c.head for c in self.children))

    @property
    def self_delta(self) -> float:
        """The change of this frame's own part: what colours it (head minus base)."""
        return self.self_head - self.self_base

    @property
    def change_pct(self) -> float | None:
        """The change of the frame's inclusive instructions, % of base (None when base has none)."""
        return (self.head - self.base) / self.base * 100 if self.base > 0 else None

    def walk(self, depth: int = 0) -> list[tuple[int, FlameFrame]]:
        """Every frame with its depth (0 for this one), parents before children."""
        out = [(depth, self)]
        for child in self.children:
            out += child.walk(depth + 1)
        return out


@dataclass(frozen=True)
class FlameGraph:
    """A cost comparison's differential flame graph: frames sized by head, coloured by change from base."""

    scenario: str
    threads: int
    base: str
    head: str
    root: FlameFrame
    base_run: str  # the run each side's stacks come from (the median run by instructions per transaction)
    head_run: str
    min_share: float  # frames below this share of the root were pruned
    #: tells apart the flame graphs of one scenario and thread count in an invocation with several
    #: comparisons (the head server's name, made file-name safe); "" when there is one
    tag: str = ""
    #: the share of each side's instructions in unnamed functions (``0x...`` addresses: no symbol for them)
    base_unnamed: float = 0.0
    head_unnamed: float = 0.0


def top_changes(graph: FlameGraph, count: int = 8) -> list[tuple[tuple[str, ...], FlameFrame]]:
    """The frames whose own instructions changed most (either way), with their stacks, largest first."""
    found: list[tuple[tuple[str, ...], FlameFrame]] = []

    def visit(frame: FlameFrame, path: tuple[str, ...]) -> None:
        here = (*path, frame.name)
        if len(here) > 1:
            found.append((here, frame))
        for child in frame.children:
            visit(child, here)

    visit(graph.root, ())
    found.sort(key=lambda item: (-abs(item[1].self_delta), item[0]))
    return [item for item in found[:count] if item[1].self_delta != 0]
