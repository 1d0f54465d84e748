"""Issue 35 item 3: outputs are written whole or not at all, and `ci run` keeps its verdicts on a full disk.

A real full disk: a 1 MiB tmpfs filled to its last byte (as the fault matrix fills one, tests/faults),
so the writes fail with the kernel's own ENOSPC. Before, `ci run` lost verdicts.json and left 0-byte
report.md and bmf.json, and `report --out` and `trend` left 0-byte files too.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.ci.execute import closing_line
from harness.ci.folder import Written, write_outputs
from harness.ci.records import CiPlan
from harness.cli.report_cmds import write_text
from harness.errors import ReportError
from harness.model import MetricVerdict, Outcome, Verdict
from harness.report.atomic_files import append_atomic, write_atomic

PLAN = CiPlan("main", "change", "a" * 40, "b" * 40, "ci", "mariadb-local", ("oltp_point_select",))
VERDICT = Verdict(
    mode="ab", scenario="oltp_point_select", threads=1, base="mariadb-local", head="mariadb-local",
    metrics=(MetricVerdict("qps", False, "pass", "Pass: QPS +0.4 % rules out a drop of 5 %."),),
)  # fmt: skip
UNSAVED = (
    "the store out/dbperf.duckdb could not take 2 measured run(s) (No space left on device); kept in u/1.json "
    "u/2.json: fix the store, then run `dbperf import unsaved u/1.json u/2.json`"
)


@contextlib.contextmanager
def full_disk(folder: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs at ``folder``, filled to its last byte (unbuffered, as tests/faults fills one)."""
    folder.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], check=False)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        (folder / "out").mkdir()
        (folder / "out" / "report.md").write_text("the previous report\n")
        (folder / "summary.md").write_text("x" * 4096)  # a whole page: an append needs a new one
        fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        for block in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * block) > 0:
                    pass
        os.close(fd)
        yield folder / "out"
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def empty_files(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.is_file() and p.stat().st_size == 0]


def test_write_atomic_leaves_the_old_file_or_none_on_a_full_disk(tmp_path: Path) -> None:
    with full_disk(tmp_path / "disk") as out:
        with pytest.raises(ReportError, match=r"cannot write .*report\.md: No space left on device"):
            write_atomic(out / "report.md", "x" * 100_000)
        with pytest.raises(ReportError, match="No space left on device"):
            write_atomic(out / "new.json", "{}" * 100_000)
        assert (out / "report.md").read_text() == "the previous report\n"
        assert sorted(p.name for p in out.iterdir()) == ["report.md"]  # no temporary file, no new.json


def test_report_and_trend_writes_leave_no_0_byte_file(tmp_path: Path) -> None:
    with full_disk(tmp_path / "disk") as out:
        for append in (False, True):
            with pytest.raises(ReportError, match="No space left on device"):
                write_text(out / "runs.md", "| a | b |\n" * 10_000, append=append)
        assert not (out / "runs.md").exists()
        assert empty_files(out) == []


def test_append_atomic_keeps_what_was_there(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    append_atomic(path, "one\n")
    append_atomic(path, "two\n")
    assert path.read_text() == "one\n\ntwo\n"


def test_ci_outputs_on_a_full_disk_keep_the_verdicts_elsewhere(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    with full_disk(tmp_path / "disk") as out:
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(out.parent / "summary.md"))  # GitHub's file: appended to
        outcome = Outcome(runs=(), verdicts=(VERDICT,), exit_code=2, error=UNSAVED)
        written = write_outputs(out, PLAN, outcome, seconds=60)
        assert empty_files(out) == []
        assert (out / "report.md").read_text() == "the previous report\n"
        assert not (out / "verdicts.json").exists()
    assert written.verdicts is not None and written.verdicts.parent == tmp_path / "data" / "dbperf" / "unsaved"
    assert '"oltp_point_select"' in written.verdicts.read_text()
    enospc = "(No space left on device)"
    failed = (
        f"verdicts.json {enospc}",
        f"report.md {enospc}",
        f"comment.md {enospc}",
        f"$GITHUB_STEP_SUMMARY {enospc}",
    )
    assert written.failed == failed
    line = closing_line(outcome, written)
    assert line == f"dbperf: error: {UNSAVED}; verdicts kept in {written.verdicts}; not written: {', '.join(failed)}"


def test_ci_outputs_all_written_close_with_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    written = write_outputs(tmp_path, PLAN, Outcome(runs=(), verdicts=(VERDICT,)), seconds=60)
    assert written == Written(tmp_path / "report.md", tmp_path / "verdicts.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["comment.md", "report.md", "verdicts.json"]
    assert closing_line(Outcome(runs=()), written) == ""
    # runs the store refused, every file written: the ledger's line, and where the verdicts are
    line = closing_line(Outcome(runs=(), error=UNSAVED), written)
    assert line == f"dbperf: error: {UNSAVED}; verdicts kept in {tmp_path / 'verdicts.json'}"


def test_verdicts_written_nowhere_are_said_so() -> None:
    written = Written(Path("out/report.md"), None, ("verdicts.json (Read-only file system)",))
    assert closing_line(Outcome(runs=()), written) == (
        "dbperf: error: the verdicts were written nowhere: they are in the table above; "
        "not written: verdicts.json (Read-only file system)"
    )


def test_the_trusted_builders_leave_no_0_byte_file(tmp_path: Path) -> None:
    from harness.report.check_run import write_check_run
    from harness.report.trusted_comment import write_comment

    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text('{"format": 1, "verdicts": []}\n')
    with full_disk(tmp_path / "disk") as out:
        with pytest.raises(ReportError, match=r"comment\.md: No space left on device"):
            write_comment(verdicts, out=out / "comment.md")
        with pytest.raises(ReportError, match=r"create\.json: No space left on device"):
            write_check_run(verdicts, out / "check", sha="0" * 40)
        assert empty_files(out) == [] and not (out / "comment.md").exists()
