"""Issue 35: tracebacks that exited 1, the regression code, each now its own one-line refusal (exit 2),
and one last-resort handler in every entry point (the CLI, the trusted builders) for whatever is left.

The pytest plugin's handler is tested in test_plugin_outcomes.py, the bounds in test_bounded_json.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.ci_repos import commit, make_plan

from harness import cli
from harness.errors import ConfigError, GitError

REPO = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"


def test_the_cli_says_an_unexpected_exception_is_a_bug_in_one_line(monkeypatch, tmp_path, capsys) -> None:
    def broken(**kwargs: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(cli.cli, "main", broken)
    with pytest.raises(SystemExit) as leaving:
        cli.main(["runs"])
    assert leaving.value.code == 2  # never 1: that is a regression
    (line,) = capsys.readouterr().err.splitlines()
    (crash,) = tmp_path.glob("dbperf-crash-*.txt")
    assert line == (
        f"dbperf: internal error (RuntimeError: boom): a bug in dbperf; the traceback is in {crash}; "
        "please report it with that traceback"
    )
    assert 'raise RuntimeError("boom\\nsecond line")' in crash.read_text()


def test_the_crash_line_keeps_the_traceback_when_its_file_cannot_be_written(monkeypatch, tmp_path, capsys) -> None:
    from harness.crash import crash_line

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "missing"))
    try:
        int("x")
    except ValueError as exc:
        line = crash_line(exc)
    assert "could not be written" in line and "the traceback is above" in line
    assert 'int("x")' in capsys.readouterr().err


@pytest.mark.parametrize("module", ["trusted_comment", "check_run"])
def test_a_5000_digit_number_in_verdicts_json_is_refused_in_one_line(tmp_path: Path, module: str) -> None:
    # before: ValueError (Python's 4,300-digit conversion limit) with a traceback, in the posting job
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text('{"format": 1, "verdicts": [], "x": ' + "7" * 5000 + "}")
    run = subprocess.run(
        [sys.executable, "-m", f"harness.report.{module}", str(verdicts), "--sha", SHA, "--out", str(tmp_path / "o")],
        cwd=REPO, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        "dbperf: error: verdicts file refused (verdicts.json: beyond what dbperf writes (a number of 5,000 digits "
        "(at most 40): line 1 column 36 (char 35)); give the verdicts.json of a run); nothing is posted"
    ]


@pytest.mark.parametrize("module", ["trusted_comment", "check_run"])
def test_the_trusted_builders_say_an_unexpected_exception_is_a_bug(monkeypatch, tmp_path, capsys, module) -> None:
    import importlib

    builder = importlib.import_module(f"harness.report.{module}")

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(builder, "write_comment" if module == "trusted_comment" else "write_check_run", broken)
    assert builder.main([str(tmp_path / "v.json"), "--sha", SHA, "--out", str(tmp_path / "o")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("dbperf: internal error (KeyError: 'surprise'): a bug in dbperf; the traceback is in ")
    assert len(list(tmp_path.glob("dbperf-crash-*.txt"))) == 1


@pytest.mark.parametrize("where", ["scenarios/point.toml", "servers/local-a.toml"])
def test_a_binary_catalogue_file_in_ci_plan_is_refused_naming_it(repo: Path, where: str) -> None:
    (repo / where).write_bytes(b"\x00\xa1\xff binary\n")
    commit(repo, "binary")
    with pytest.raises(ConfigError, match=rf"{where}: not a text file \(no UTF-8 at byte 1\)"):
        make_plan(repo)


def test_an_absolute_symlink_as_my_cnf_in_ci_plan_is_refused_naming_it(repo: Path) -> None:
    cnf = repo / "servers" / "conf" / "a.cnf"
    cnf.unlink()
    cnf.symlink_to("/etc/passwd")
    commit(repo, "link")
    with pytest.raises(GitError, match=r"'servers/conf/a\.cnf' is a link to an absolute path: refused"):
        make_plan(repo)


def test_a_baseline_nested_100000_deep_is_refused(tmp_path: Path) -> None:
    from harness.errors import BaselineError
    from harness.judge.baselines import load_baseline

    path = tmp_path / "1t.json"
    path.write_text('{"format": "dbperf-baseline", "samples": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(BaselineError, match=r"not valid JSON \(line 1: nested deeper than 64 levels"):
        load_baseline(path)


def test_a_verdicts_document_nested_deep_is_refused(tmp_path: Path) -> None:
    from harness.model.outcome import read_outcome_json

    with pytest.raises(ConfigError, match="nested deeper than 64 levels"):
        read_outcome_json(json.dumps({"verdicts": []})[:-1] + ', "x": ' + "{" * 5000 + "}" * 5000 + "}", "v.json")


def test_a_reader_that_leaves_is_no_bug(tmp_path: Path) -> None:
    """``dbperf scenarios | head -1``: the pipe closes under dbperf; it leaves as SIGPIPE would, no crash file."""
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    reader, writer = os.pipe()
    os.close(reader)  # the reader is gone before dbperf writes a line
    done = subprocess.run(
        [sys.executable, "-m", "harness", "scenarios", "--scenarios-dir", str(REPO / "scenarios")],
        stdout=writer,
        stderr=writer,
        env=env,
        timeout=120,
        check=False,
    )
    os.close(writer)
    assert done.returncode == 141
    assert not list(tmp_path.glob("dbperf-crash-*.txt"))
