"""A cost comparison's differential flame graph as a self-contained SVG, and its lines for Markdown.

Brendan Gregg's differential flame graph: each frame is as wide as head's inclusive instructions per
transaction on that stack, and coloured by the change of its own instructions (the part not in a
child frame shown) from base: red grew, blue shrank, the deeper the colour the larger the change
against the largest one in the picture (on a square-root scale, so a tenth of it still shows); grey
did not move. Frames base has and head does not (no
width to draw) are listed under the graph. Every frame's ``<title>`` (the browser's tooltip) gives its
function, both sides and the change. No script, no external file: the SVG opens as it is in a browser
and in the ``perf-results`` artifact. The stacks come from :mod:`harness.judge.flame_diff` (rebuilt from
callgrind's caller → callee costs, an approximation below the first level, as the subtitle says).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from harness.model.flame_graph import FlameFrame, FlameGraph, top_changes
from harness.report.file_names import file_name as safe_file_name
from harness.report.mdtable import cell

WIDTH = 1200
FRAME_HEIGHT = 17
FONT_SIZE = 11
CHAR_WIDTH = FONT_SIZE * 0.6  # monospace advance
PAD = 10
HEADER = 100
MIN_DRAWN_PX = 0.3
GONE_LISTED = 8


def file_name(graph: FlameGraph) -> str:
    """The SVG's file name beside the report: ``flamegraph-<scenario>[-<tag>]-<threads>t.svg``, the names made
    safe (:mod:`harness.report.file_names`)."""
    tag = f"-{graph.tag}" if graph.tag else ""
    return safe_file_name(f"{graph.scenario}{tag}", prefix="flamegraph-", suffix=f"-{graph.threads}t.svg")


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.1f}"


def _pct(frame: FlameFrame) -> str:
    change = frame.change_pct
    if change is None:
        return "new in head" if frame.head > 0 else "-"
    return f"{change:+.2f} %"


def colour(delta: float, largest: float) -> str:
    """Red (grew) or blue (shrank), deeper as ``delta`` nears ``largest`` (square root); grey when unchanged."""
    if largest <= 0 or delta == 0:
        return "rgb(221,221,221)"
    ratio = math.sqrt(min(1.0, abs(delta) / largest))  # a square-root scale: a change a tenth of the largest shows
    fade = round(225 * (1 - ratio))
    return f"rgb(255,{fade},{fade})" if delta > 0 else f"rgb({fade},{fade},255)"


def _tooltip(frame: FlameFrame) -> str:
    return (
        f"{frame.name}\n"
        f"inclusive instructions per transaction: base {_fmt(frame.base)}, head {_fmt(frame.head)} "
        f"({_pct(frame)})\n"
        f"own (not in a child frame shown): base {_fmt(frame.self_base)}, head {_fmt(frame.self_head)} "
        f"({frame.self_delta:+,.1f})"
    )


def _label(name: str, width: float) -> str:
    fits = int((width - 6) / CHAR_WIDTH)
    if fits < 3:
        return ""
    return name if len(name) <= fits else name[: fits - 2] + ".."


def _gone(root: FlameFrame) -> list[tuple[tuple[str, ...], FlameFrame]]:
    """Frames with instructions in base and none in head (their parents' head is not 0), largest first."""
    found: list[tuple[tuple[str, ...], FlameFrame]] = []

    def visit(frame: FlameFrame, path: tuple[str, ...]) -> None:
        for child in frame.children:
            here = (*path, child.name)
            if child.head <= 0 < child.base:
                found.append((here, child))
            elif child.head > 0:
                visit(child, here)

    visit(root, (root.name,))
    return sorted(found, key=lambda item: -item[1].base)


def render_svg(graph: FlameGraph) -> str:
    """The differential flame graph of one cost comparison, as a standalone SVG document."""
    root = graph.root
    frames = root.walk()
    depth = max(d for d, _ in frames) + 1
    largest = max((abs(f.self_delta) for d, f in frames if d > 0), default=0.0)
    gone = _gone(root)
    listed = gone[:GONE_LISTED]
    graph_height = depth * FRAME_HEIGHT
    footer = (len(listed) + 1) * 15 + 10 if listed else 0
    height = HEADER + graph_height + PAD + footer + PAD
    scale = (WIDTH - 2 * PAD) / root.head if root.head > 0 else 0.0
    change = root.change_pct
    title = f"{graph.scenario}, {graph.threads} thread(s): {graph.head} against {graph.base}"
    subtitle = (
        f"instructions per transaction under statement dispatch: base {_fmt(root.base)}, head {_fmt(root.head)}"
        + (f" ({change:+.2f} %)" if change is not None else "")
        + f"; runs {graph.base_run[:12]} (base), {graph.head_run[:12]} (head)"
    )
    method = (
        "Width: head's inclusive instructions per transaction. Colour: change of each frame's own instructions "
        "(red grew, blue shrank, grey unchanged; deeper = larger, square-root scale).",
        "Stacks rebuilt from callgrind's caller-to-callee costs: exact one level down, shared in proportion "
        f"deeper (an approximation). Frames under {graph.min_share * 100:g} % of the total left out.",
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        f'font-size="{FONT_SIZE}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#fdfdfd"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">{escape(title)}</text>',
        f'<text x="{WIDTH / 2}" y="40" text-anchor="middle" fill="#333">{escape(subtitle)}</text>',
        f'<text x="{PAD}" y="58" fill="#555" font-size="10">{escape(method[0])}</text>',
        f'<text x="{PAD}" y="71" fill="#555" font-size="10">{escape(method[1])}</text>',
        *_legend(),
    ]
    bottom = HEADER + graph_height
    for frame_depth, frame, x in _placed(root):
        w = frame.head * scale
        if w < MIN_DRAWN_PX:
            continue
        left = PAD + x * scale
        y = bottom - (frame_depth + 1) * FRAME_HEIGHT
        fill = colour(frame.self_delta, largest) if frame_depth > 0 else "rgb(235,235,235)"
        label = _label(frame.name, w)
        out.append(
            f'<g class="frame" data-name={quoteattr(frame.name)} data-base="{frame.base:.1f}" '
            f'data-head="{frame.head:.1f}" data-self-delta="{frame.self_delta:.1f}">'
            f"<title>{escape(_tooltip(frame))}</title>"
            f'<rect x="{left:.2f}" y="{y}" width="{w:.2f}" height="{FRAME_HEIGHT - 1}" fill="{fill}" '
            f'stroke="#ffffff" stroke-width="0.5" rx="1"/>'
            + (f'<text x="{left + 3:.2f}" y="{y + FRAME_HEIGHT - 5}">{escape(label)}</text>' if label else "")
            + "</g>"
        )
    if listed:
        y = bottom + PAD + 14
        out.append(
            f'<text x="{PAD}" y="{y}" font-weight="bold">Only in base (no width in head): '
            f"{len(gone)} frame(s), largest first</text>"
        )
        for path, frame in listed:
            y += 15
            stack = " ; ".join(path[-3:])
            out.append(
                f'<text x="{PAD}" y="{y}" fill="rgb(40,40,200)">{escape(stack)}: base {_fmt(frame.base)} '
                f"instructions per transaction</text>"
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _legend() -> list[str]:
    x = PAD
    out = []
    for i, (fill, text) in enumerate(
        (("rgb(255,0,0)", "grew"), ("rgb(0,0,255)", "shrank"), ("rgb(221,221,221)", "unchanged"))
    ):
        left = x + i * 80
        out.append(f'<rect x="{left}" y="76" width="12" height="10" fill="{fill}"/>')
        out.append(f'<text x="{left + 16}" y="85" font-size="10">{text}</text>')
    return out


def _placed(root: FlameFrame) -> list[tuple[int, FlameFrame, float]]:
    """Every frame with its depth and its left edge in head's instructions (children side by side)."""
    out: list[tuple[int, FlameFrame, float]] = []

    def place(frame: FlameFrame, depth: int, x: float) -> None:
        out.append((depth, frame, x))
        offset = x
        for child in frame.children:
            place(child, depth + 1, offset)
            offset += child.head

    place(root, 0, 0.0)
    return out


def markdown_lines(graphs: Sequence[FlameGraph], *, link: bool = True, top: int = 5) -> list[str]:
    """Per flame graph: its SVG (linked, relative to the report, or named) and the frames that moved most."""
    if not graphs:
        return []
    lines = ["### Where the instructions moved (differential flame graphs)", ""]
    for graph in graphs:
        name = file_name(graph)
        shown = f"[`{name}`]({name})" if link else f"`{name}`"
        lines.append(
            f"**{graph.scenario}, {graph.threads} thread(s)**: {shown} "
            "(width: head's instructions per transaction; red grew, blue shrank)"
        )
        lines.append("")
        moved = top_changes(graph, top)
        if moved:
            lines += [
                "| frame (own instructions per transaction) | called from | base | head | change |",
                "| :--- | :--- | ---: | ---: | ---: |",
            ]
            for path, frame in moved:
                caller = " ← ".join(reversed(path[-4:-1]))
                lines.append(
                    f"| {cell(frame.name)} | {cell(caller)} | {_fmt(frame.self_base)} | {_fmt(frame.self_head)} "
                    f"| {frame.self_delta:+,.1f} |"
                )
            lines.append("")
        else:  # the same instructions in every frame: no table and no chart, and the reader is told why
            lines += ["No frame's own instructions per transaction moved.", ""]
    return lines
