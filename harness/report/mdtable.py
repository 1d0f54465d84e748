"""Markdown tables for both reports: safe cells, aligned tables, collapsible blocks, shortened text.

Long tables stay readable: above :data:`COLLAPSE_ABOVE` rows a report keeps the rows that need
attention in view and puts everything else in a collapsible ``<details>`` block (:func:`details`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

COLLAPSE_ABOVE = 20
"""Tables with more rows than this put the rows that need no attention in a ``<details>`` block."""


REASON_MAX = 140
"""Longest reason shown in a table cell (the full text is in the terminal and JSON outputs)."""


def cell(text: object) -> str:
    """Text made safe for one Markdown table cell (pipes escaped, no line breaks)."""
    value = " ".join(str(text).split())
    return value.replace("\\", "\\\\").replace("|", "\\|") or " "


def short(text: str, limit: int = REASON_MAX) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def table(header: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = [
        "| " + " | ".join(cell(h) for h in header) + " |",
        "| " + " | ".join(marks[a] for a in align) + " |",
    ]
    lines.extend("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)
    return lines


def details(summary: str, body: list[str]) -> list[str]:
    """A collapsible block; GitHub needs blank lines around Markdown inside HTML."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]
