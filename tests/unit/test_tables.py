"""Terminal tables never cut text: the reason column wraps, or the table turns vertical, at any width."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from test_report_markdown import CASES, mv, verdict

from harness.report.tables import fits, show
from harness.report.terminal import PIPE_WIDTH, console
from harness.report.verdicts import print_verdicts, verdicts_table

LONG = (
    "cannot rule out a drop of 5 %: the interval reaches -9.7 % because the head's QPS varied 14 % between "
    "repetitions; about 24 pairs (~13 min) would likely decide"
)


def _verdicts() -> list:
    return [verdict("oltp_read_only", 8, mv("qps", "inconclusive", -3.1, -9.7, 2.9, summary=LONG))]


def _last_column(text: str) -> str:
    """The text of the table's last column, its wrapped or folded lines joined."""
    cells = [line.split("│")[-2] for line in text.splitlines() if line.count("│") >= 2]
    return "".join(cell.strip() for cell in cells)


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_reason_is_whole_at_any_width(width: int) -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=width, highlight=False)
    show(out, verdicts_table(_verdicts()))
    text = buffer.getvalue()
    assert "…" not in text
    squash = re.compile(r"\s+")
    if "│" in text:  # a table: the last column, line by line, is the whole reason
        assert squash.sub("", _last_column(text)) == squash.sub("", LONG), text
    else:  # vertical: the reason is the row's last field
        assert squash.sub("", LONG) in squash.sub("", text), text
    assert max(len(line) for line in text.splitlines()) <= width


def test_narrow_terminals_get_the_vertical_layout() -> None:
    buffer = io.StringIO()
    out = Console(file=buffer, width=50, highlight=False)
    table = verdicts_table(_verdicts())
    assert not fits(out, table)
    show(out, table)
    text = buffer.getvalue()
    assert re.search(r"^\s*reason: cannot rule out", text, re.M), text
    assert re.search(r"^\s*verdict: inconclusive", text, re.M), text


def test_piped_output_is_never_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    buffer = io.StringIO()
    assert console(buffer).width == PIPE_WIDTH
    print_verdicts(_verdicts(), buffer)
    assert LONG in buffer.getvalue()
    monkeypatch.setenv("COLUMNS", "90")
    assert console(io.StringIO()).width == 90


def test_every_case_prints_its_reasons_whole_when_piped() -> None:
    buffer = io.StringIO()
    verdicts = [v for case in CASES.values() for v in case[0]]
    print_verdicts(verdicts, buffer)
    text = buffer.getvalue()
    for v in verdicts:
        for m in v.metrics:
            assert (m.summary or " ".join(m.reason.split()))[:60] in text
