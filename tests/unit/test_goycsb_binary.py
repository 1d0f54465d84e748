"""A go-ycsb "log" with NUL bytes is binary: refused with the file, line and byte offset (issue 35: read silently)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import LogParseError
from harness.imports.runs import import_go_ycsb

LOG = (Path(__file__).resolve().parents[1] / "data" / "go-ycsb" / "ycsb_a_run.log").read_bytes()


@pytest.mark.parametrize(
    ("content", "line", "offset"),
    [
        (b"\x00" * 4096 + LOG, 1, 0),  # a log a crash padded with NULs before go-ycsb's output
        (LOG[:100] + b"\x00\x00" + LOG[100:], LOG[:100].count(b"\n") + 1, 100),
        (b"\x7fELF\x02\x01\x01\x00\x00", 1, 7),  # a binary given by mistake
    ],
    ids=["leading NULs", "NULs inside", "binary"],
)
def test_nul_bytes_are_refused_with_file_line_and_offset(
    tmp_path: Path, content: bytes, line: int, offset: int
) -> None:
    path = tmp_path / "ycsb.log"
    path.write_bytes(content)
    with pytest.raises(LogParseError) as caught:
        import_go_ycsb([path], scenario="s", server="x")
    assert str(caught.value) == (
        f"{path}:{line}: binary content: a NUL byte at offset {offset}; "
        "give the text file go-ycsb's output was written to"
    )


def test_the_same_log_without_nuls_imports(tmp_path: Path) -> None:
    path = tmp_path / "ycsb.log"
    path.write_bytes(LOG)
    assert import_go_ycsb([path], scenario="s", server="x")
