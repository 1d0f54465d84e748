"""Markdown tables for both reports: safe cells, aligned tables, collapsible blocks, shortened text.

Long tables stay readable: above :data:`COLLAPSE_ABOVE` rows a report keeps the rows that need
attention in view and puts everything else in a collapsible ``<details>`` block (:func:`details`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

COLLAPSE_ABOVE = 20
"""Tables with more rows than this put the rows that need no attention in a ``<details>`` block."""


REASON_MAX = 140
"""Longest reason shown in a table cell (the full text is in the terminal and JSON outputs)."""


def cell(text: object) -> str:
    """Text made safe for one Markdown table cell (pipes escaped, no line breaks)."""
    value = " ".join(str(text).split())
    return value.replace("\\", "\\\\").replace("|", "\\|") or " "


#: GitHub turns these into mentions (``@user``, ``@org/team``), emails (``user@host.tld``), issue references
#: (``#12``) and links (``https://``, ``www.``) in text outside code spans. An ``@`` between a word and a
#: part without a dot (``mariadb-local@base``, the harness's own labels) is neither mention nor email.
_LIVE = re.compile(r"(?<![A-Za-z0-9_])@|@(?=[A-Za-z0-9_.+-]*\.)|#|:(?=//)|(?i:www)(?=\.)")


def inert(text: object) -> str:
    """Text GitHub shows as written, outside a code span: a zero-width space after each ``@`` that could
    start a mention or an email, each ``#``, the ``:`` of ``://`` and ``www``, so no mention, issue
    reference or autolink is made (the trick bots use in release notes). Other names are unchanged."""
    return _LIVE.sub(lambda m: m.group(0) + "\u200b", str(text))


def code(text: object, limit: int = 200) -> str:
    """``text`` as one Markdown code span (inert: GitHub makes no mention, reference or link inside one),
    on one line and at most ``limit`` characters; a backtick inside is kept, fenced by a longer run of
    backticks (CommonMark 6.1). In a table cell, escape its pipes (``\\|``) as GitHub's tables need."""
    flat = " ".join(str(text).split())
    flat = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    if not flat:
        return "`?`"
    fence = "`" * (max((len(r) for r in re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


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
