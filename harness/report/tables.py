"""Terminal tables that never cut text.

Every column folds instead of truncating (``overflow="fold"``): a value too long for its column wraps
onto more lines, and nothing ends in an ellipsis. When even that cannot fit (the narrowest the table
can be, every column at its longest word, is wider than the terminal), the columns a caller names as
optional are left out first, in its order (a line under the table names them), so that a listing stays a
table a person can scan at 80 columns; only when even the essential columns cannot fit is the table
printed vertically: one block per row, one ``column: value`` line per cell, wrapped at the width.
Piped output is never wrapped at all (see :func:`harness.report.terminal.console`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Literal

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

Justify = Literal["left", "right", "center"]


def new_table(title: str, columns: Sequence[tuple[str, Justify]]) -> Table:
    """A table whose columns fold long values instead of cutting them."""
    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")
    return table


def fits(out: Console, table: Table) -> bool:
    """Whether the table can be drawn at the console's width with every word whole."""
    for column in table.columns:
        column.overflow = "fold"
    if _widest(table) <= out.width:  # the cheap bound: no need to measure every cell (it costs a render)
        return True
    # measured without the console's width (a measurement is clamped to the width it is given)
    measurement = Measurement.get(out, out.options.update(max_width=1_000_000), table)
    return measurement.minimum <= out.width


def _natural_width(out: Console, table: Table) -> int:
    """The width the table takes with no cell wrapped."""
    return Measurement.get(out, out.options.update(max_width=1_000_000), table).maximum


def _widest(table: Table) -> int:
    """An upper bound of the table's width with every cell on one line, found without rendering.

    Each cell counts its source text (markup included, so never less than what is drawn) plus the
    column's padding, and each column one border; a cell that is not plain text or holds a line break
    gives no bound (``sys.maxsize``), and the table is then measured.
    """
    _, right, _, left = table.padding
    total = len(table.columns) + 1
    for column in table.columns:
        values = [column.header, *column.cells]
        if not all(isinstance(v, str) and "\n" not in v for v in values):
            return sys.maxsize
        total += max(cell_len(str(v)) for v in values) + left + right
    return total


#: Shorter headings a compact table uses (see :func:`show`).
SHORT_HEADINGS = {
    "threads": "thr",
    "started (UTC)": "started",
    "instr/txn": "instr",
    "duration s": "dur s",
    "CPU µs/txn": "CPU µs",
    "confidence": "conf",
    "commit / day": "commit",
    "reconn/s": "recon/s",
}


def compact(table: Table, drop: Sequence[str] = ()) -> Table:
    """A copy of ``table`` without the columns headed ``drop``, drawn without borders, one space between
    columns and shorter headings (:data:`SHORT_HEADINGS`): what a narrow terminal can still scan."""
    kept = [c for c in table.columns if str(c.header) not in drop]
    narrow = Table(title=table.title, title_justify=table.title_justify, box=None, padding=(0, 1, 0, 0))
    narrow.pad_edge = False
    for column in kept:
        heading = SHORT_HEADINGS.get(str(column.header), column.header)
        narrow.add_column(heading, justify=column.justify, overflow="fold", header_style="bold")
    for index in range(table.row_count):
        narrow.add_row(*(list(c.cells)[index] for c in kept))
    return narrow


def show(out: Console, table: Table, optional: Sequence[str] = ()) -> None:
    """Print the table; when it cannot fit the width, compact (:func:`compact`), then also without the
    ``optional`` columns it must leave out (in their order, named under it), and only then vertically."""
    if fits(out, table):
        out.print(table)
        return
    present = [str(c.header) for c in table.columns]
    names = [n for n in optional if n in present]
    for count in range(len(names) + 1):  # first with every word on one line, then folding long ones
        narrow = compact(table, names[:count])
        if _natural_width(out, narrow) <= out.width or (count == len(names) and fits(out, narrow)):
            out.print(narrow)
            if count:
                note = f"left out at {out.width} columns: {', '.join(names[:count])} (a wider terminal shows them)"
                out.print(note, style="dim", markup=False, crop=False)
            return
    if table.title:
        out.print(Text(str(table.title), style="bold"))
    headers = [str(c.header) for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    rows = max((len(c) for c in cells), default=0)
    key_width = max((len(h) for h in headers), default=0)
    for index in range(rows):
        out.print(Text("─" * min(out.width, 40), style="dim"))
        for header, column in zip(headers, cells, strict=True):
            value = column[index] if index < len(column) else ""
            text = value.copy() if isinstance(value, Text) else Text.from_markup(str(value))
            line = Text(f"{header:>{key_width}}: ", style="bold")
            line.append_text(text)
            out.print(line, overflow="fold")


def fmt_value(value: float | None) -> str:
    """A metric value with about three significant digits, never in scientific notation."""
    if value is None or not math.isfinite(value):
        return "-"
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1 or size == 0:
        return f"{value:.2f}"
    return f"{value:.3f}"
