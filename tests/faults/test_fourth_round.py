"""The fourth fault round (issue 35): inputs that ended in a traceback and exit 1, the regression code.

Each case runs the entry point a user or a workflow runs (``dbperf``, ``pytest scenarios/``, the trusted
builders ``python -m harness.report.trusted_comment`` / ``check_run``) on one bad input, and checks one
closing line with the file and the way out, exit 2, nothing leaked, and the earlier run still readable.
``ci run`` on a full disk is tested on a real filled tmpfs in tests/unit/test_outputs_on_a_full_disk.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO
from support.faults import Fault, closing_line, record, tmpfs

pytestmark = pytest.mark.integration

SHA = "0123456789abcdef0123456789abcdef01234567"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c",
         "commit.gpgsign=false", *args],
        check=True, capture_output=True, env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull},
    )  # fmt: skip


def _project(fault: Fault) -> Path:
    """A git project holding this repository's servers/ and scenarios/ on ``main``, with a branch ``bad``."""
    project = fault.root / "project"
    project.mkdir()
    for name in ("servers", "scenarios"):
        shutil.copytree(REPO / name, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / "pyproject.toml", project / "pyproject.toml")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "checkout", "-q", "-b", "bad")
    return project


def _dbperf_in(fault: Fault, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("dbperf")
    argv = [str(script)] if script.is_file() else [sys.executable, "-m", "harness"]
    return subprocess.run(
        [*argv, *args], cwd=cwd, env={**fault.dbperf.env, **fault.env}, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


def _refused(out: subprocess.CompletedProcess[str], *needles: str) -> str:
    line = closing_line(out.stderr)
    assert out.returncode == 2, out.stderr  # never 1, the regression code
    assert line.startswith("dbperf: error: ") and "internal error" not in line, line
    for needle in needles:
        assert needle in line, line
    return line


def test_a_baseline_nested_100000_deep(fault: Fault) -> None:
    path = fault.root / "baselines" / "tb" / "mariadb-local" / "oltp_point_select" / "quick" / "1t.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"format": "dbperf-baseline", "samples": ' + "[" * 100_000 + "]" * 100_000 + "}")
    out = fault.run("baseline", "show", "--baselines-dir", str(fault.root / "baselines"), timeout_s=120)
    line = _refused(out, str(path), "nested deeper than 64 levels", "delete it")
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record("baseline JSON nested 100,000 deep: dbperf baseline show", out.returncode, line, "nothing new", leaks)


@pytest.mark.parametrize("where", ["scenarios/oltp_point_select.toml", "servers/mariadb-local.toml"])
def test_a_binary_catalogue_file_in_ci_plan(fault: Fault, where: str) -> None:
    project = _project(fault)
    (project / where).write_bytes(bytes(range(256)) * 4)
    _git(project, "commit", "-q", "-am", "binary")
    out = _dbperf_in(fault, project, "ci", "plan", "--base", "main", "--head", "bad")
    line = _refused(out, where, "not a text file")
    leaks = fault.leaks()
    assert leaks == []
    record(f"binary {Path(where).parent}/*.toml: dbperf ci plan", out.returncode, line, "nothing", leaks)


def test_my_cnf_linked_to_an_absolute_path_in_ci_plan(fault: Fault) -> None:
    project = _project(fault)
    cnf = project / "servers" / "conf" / "mariadb.cnf"
    cnf.unlink()
    cnf.symlink_to("/etc/passwd")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "link")
    out = _dbperf_in(fault, project, "ci", "plan", "--base", "main", "--head", "bad")
    line = _refused(out, "servers/conf/mariadb.cnf", "link to an absolute path: refused")
    leaks = fault.leaks()
    assert leaks == []
    record("my.cnf a symlink to an absolute path: dbperf ci plan", out.returncode, line, "nothing", leaks)


@pytest.mark.parametrize("module", ["trusted_comment", "check_run"])
def test_a_5000_digit_number_in_verdicts_json(fault: Fault, module: str) -> None:
    verdicts = fault.root / "verdicts.json"
    verdicts.write_text('{"format": 1, "verdicts": [], "n": ' + "7" * 5000 + "}")
    out = subprocess.run(
        [sys.executable, "-m", f"harness.report.{module}", str(verdicts), "--sha", SHA, "--out", str(fault.root / "o")],
        cwd=REPO, env={**fault.dbperf.env, **fault.env}, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    line = _refused(out, "a number of 5,000 digits", "nothing is posted")
    assert not (fault.root / "o").exists() or not any((fault.root / "o").iterdir())
    leaks = fault.leaks()
    assert leaks == []
    record(f"5,000-digit number in verdicts.json: {module}", out.returncode, line, "nothing posted", leaks)


def test_a_read_only_store_under_pytest(fault: Fault) -> None:
    with tmpfs(fault.root / "ro", "8m") as folder:
        shutil.copytree(fault.store.parent, folder / "store")
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True, timeout=30)
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "scenarios/", "-q", "-k", "2t",
             "--dbperf-scenario", "oltp_point_select", "--dbperf-server", "mariadb-local", "--dbperf-no-cost",
             "--dbperf-profile", "quick", "--dbperf-store", str(folder / "store" / "dbperf.duckdb")],
            cwd=REPO, env={**fault.dbperf.env, **fault.env, "DBPERF_PROGRESS": "0"}, capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr  # was 1, the regression code
    errors = [line for line in out.stdout.splitlines() if line.startswith("oltp_point_select-mariadb-local")]
    assert len(errors) == 1 and "Read-only file system" in errors[0], out.stdout
    assert "Traceback" not in out.stdout + out.stderr
    assert fault.earlier_readable()
    leaks = fault.leaks()
    record("read-only store: pytest scenarios/", out.returncode, errors[0], "nothing (store unchanged)", leaks)


def test_ci_run_out_on_a_disk_that_fills(fault: Fault) -> None:
    """``ci run --out`` on a disk with room for plan.json only: verdicts.json goes to the unsaved-run folder,
    report.md and comment.md are not written (no 0-byte files), and the closing line says so (was: the
    verdicts lost, 0-byte report.md and bmf.json, no closing line)."""
    project = _project(fault)  # branch ``bad`` holds no change: an empty plan, no server started
    with tmpfs(fault.root / "small", "1m") as small:
        fd = os.open(small / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        for block in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * block) > 0:
                    pass
        os.ftruncate(fd, os.fstat(fd).st_size - 4096)  # one page: plan.json
        os.close(fd)
        out = _dbperf_in(fault, project, "ci", "run", "--base", "main", "--head", "bad", "--out", str(small / "out"))
        written = sorted(p.name for p in (small / "out").iterdir())
        empty = [p.name for p in (small / "out").iterdir() if p.stat().st_size == 0]
    kept = list((fault.data_home / "dbperf" / "unsaved").glob("verdicts-*.json"))
    line = _refused(out, "verdicts kept in", "not written: verdicts.json (No space left on device)", "report.md")
    assert written == ["plan.json"] and empty == [], written
    assert len(kept) == 1 and str(kept[0]) in line and '"verdicts"' in kept[0].read_text()
    leaks = fault.leaks()
    assert leaks == []
    record(
        "ci run --out on a disk with room for plan.json only",
        out.returncode,
        line,
        "verdicts.json in the unsaved folder",
        leaks,
    )
