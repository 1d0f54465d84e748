"""Every imported log goes through one interface (harness/imports/logformat.py): sysbench text logs,
go-tpc and go-ycsb are each a ``LogFormat``, refused the same way by its one skeleton, against the real
captures under tests/data."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.errors import LogParseError
from harness.imports.gotpc import GoTpcFormat, parse_go_tpc_log
from harness.imports.goycsb import GoYcsbFormat, parse_go_ycsb_log
from harness.imports.logformat import LogFormat, read_logs
from harness.imports.sysbench_log import SysbenchTextLog, parse_sysbench_log

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
#: each format, a real capture of its tool, and the module function that parses it
FORMATS = {
    "sysbench": (SysbenchTextLog(), DATA / "sysbench" / "oltp_read_write.log", parse_sysbench_log),
    "go-tpc": (GoTpcFormat(), DATA / "go-tpc" / "tpcc_clean.log", parse_go_tpc_log),
    "go-ycsb": (GoYcsbFormat(), DATA / "go-ycsb" / "ycsb_a_run.log", parse_go_ycsb_log),
}


def test_every_format_of_harness_imports_is_listed_here() -> None:
    assert {type(fmt) for fmt, _, _ in FORMATS.values()} == set(LogFormat.__subclasses__())
    assert {fmt.tool for fmt, _, _ in FORMATS.values()} == set(FORMATS)


@pytest.mark.parametrize("tool", sorted(FORMATS))
def test_the_parse_function_is_the_formats_parse(tool: str) -> None:
    fmt, capture, parse = FORMATS[tool]
    text = capture.read_text()
    assert parse(text, str(capture)) == fmt.parse(text, str(capture))
    (read,) = read_logs(fmt, [capture])
    assert (read.path, read.text, read.log) == (str(capture), text, fmt.parse(text, str(capture)))


@pytest.mark.parametrize("tool", sorted(FORMATS))
def test_one_skeleton_refuses_for_every_format(tool: str, tmp_path: Path) -> None:
    fmt, capture, _ = FORMATS[tool]

    def refusal(text: str) -> LogParseError:
        with pytest.raises(LogParseError) as caught:
            fmt.parse(text, "x.log")
        return caught.value

    assert str(refusal(" \n\n")) == f"x.log:1: empty log: expected {fmt.expects}"
    assert str(refusal("\x00" + capture.read_text())) == (
        f"x.log:1: binary content: a NUL byte at offset 0; give the text file {tool}'s output was written to"
    )
    assert str(refusal("\nhello world\n")) == f"x.log:2: {fmt.foreign}, found 'hello world'"
    missing = tmp_path / "missing.log"
    with pytest.raises(LogParseError, match=r"missing\.log:0: cannot read the file"):
        read_logs(fmt, [missing])


def test_the_skeletons_messages_are_written_once() -> None:
    """What every format refuses is said in logformat.py only: no parser repeats the skeleton."""
    said = (
        "empty log: expected",
        "binary content: a NUL byte",
        "ends in the middle of this line",
        "cannot read the file (",
    )
    found = sorted(
        f"{path.relative_to(ROOT)}: {node.value!r}"
        for path in (ROOT / "harness").rglob("*.py")
        if path.name != "logformat.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(s in node.value for s in said)
    )
    assert not found, "the log skeleton's messages outside harness/imports/logformat.py:\n" + "\n".join(found)
