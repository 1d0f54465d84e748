"""Terminal tables never cut text: the reason column wraps, or the table turns vertical, at any width."""

from __future__ import annotations

import dataclasses
import io
import re

import pytest
from rich.console import Console
from support.reports import CASES, mv, verdict

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


def _runs_at(width: int, render) -> list[str]:
    from support.reports import runs_for

    buffer = io.StringIO()
    out = Console(file=buffer, width=width, highlight=False)
    runs = runs_for("mariadb-10.11", "mariadb-11.8", scenario="threadpool_read_write")
    runs = [dataclasses.replace(r, run_id=f"{i:016x}") for i, r in enumerate(runs)]  # ids as dbperf makes them
    render(out, runs)
    return buffer.getvalue().splitlines()


@pytest.mark.parametrize("which", ["listing", "runs"])
def test_at_80_columns_runs_stay_a_table_of_one_line_each(which: str) -> None:
    """``dbperf runs`` and ``dbperf report`` at 80 columns (issue 34): a table a person scans, one line per run
    (not a 13-17-line block each), columns left out named under it."""
    from harness.report.terminal import LISTING_OPTIONAL, RUNS_OPTIONAL, run_listing, runs_table

    def render(out: Console, runs: list) -> None:
        if which == "listing":
            show(out, run_listing(runs, "runs"), LISTING_OPTIONAL)
        else:
            show(out, runs_table(runs), RUNS_OPTIONAL)

    lines = _runs_at(80, render)
    assert max(len(line) for line in lines) <= 80
    rows = [line for line in lines if "threadpool_read_write" in line]
    assert len(rows) == 10 and not any(line.startswith("─") for line in lines)  # no vertical blocks
    assert all("mariadb-1" in row for row in rows)  # the server stays beside its scenario
    assert any(line.startswith("left out at 80 columns: ") for line in lines)
    wide = _runs_at(400, render)  # a wide terminal keeps every column and says nothing
    assert not any(line.startswith("left out") for line in wide)
