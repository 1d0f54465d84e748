"""The CLI prints one line for a harness error and exits 2; usage errors exit 2 too."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def dbperf(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args, "--store", str(tmp / "s.duckdb")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("run", "--scenario", "nope"), "unknown scenario 'nope'"),
        (("run", "--scenario", "oltp_pont_select"), "(did you mean oltp_point_select?)"),
        (("run", "--scenario", "oltp_point_select", "--server", "nope"), "unknown server 'nope'"),
        (("run", "--scenario", "oltp_point_select", "--server", "mysql-97"), "(did you mean mysql-9.7?)"),
        (
            ("run", "--scenario", "oltp_point_select", "--threads", "abc"),
            "--threads takes comma-separated whole numbers like 1,4,16; got abc (abc is not one)",
        ),
        (("runs", "-s", "oltp_pont_select"), "no scenario of that name in the catalogue nor in the store; did you"),
        (("runs", "--server", "mariadb-locl"), "no server of that name in the catalogue nor in the store; did you"),
        (("runs", "--server", "mariadb-locl"), "did you mean mariadb-local?"),
        (("report", "-s", "nosuch"), "--scenario nosuch: no scenario of that name in the catalogue nor in the store"),
        (("runs", "--group", "nosuch"), "--group nosuch: no such group in"),
        (("run", "--scenario", "oltp_point_select", "--profile", "huge"), "unknown profile 'huge'"),
        (("import", "sysbench-log", str(ROOT / "pyproject.toml")), "pyproject.toml:"),
    ],
)
def test_harness_errors_are_one_line_exit_2(tmp_path: Path, args: tuple[str, ...], needle: str):
    result = dbperf(*args, tmp=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dbperf: error: ")
    assert needle in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("run", "--no-such-flag"), "No such option '--no-such-flag'. (dbperf run --help)"),
        (
            ("run", "--scenarios", "x"),
            "No such option '--scenarios'. (Did you mean one of: '--scenario', '--scenarios-dir'?) (dbperf run --help)",
        ),
        (("rnus",), "No such command 'rnus'. (dbperf --help)"),
        (("runs", "--limit", "x"), "Invalid value for '--limit': 'x' is not a valid integer. (dbperf runs --help)"),
    ],
)
def test_usage_errors_are_one_line_exit_2(tmp_path: Path, args: tuple[str, ...], line: str):
    # click prints four lines by itself (usage, a hint, a blank line, the error); dbperf keeps its "did you mean"
    result = dbperf(*args, tmp=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"dbperf: error: {line}"]


def test_a_filter_that_names_real_things_but_matches_no_run_is_not_an_error(tmp_path: Path):
    for args in (("runs", "-s", "oltp_insert"), ("report", "-s", "oltp_insert", "--server", "mysql-9.7")):
        result = dbperf(*args, tmp=tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stderr.startswith("dbperf: no runs match (scenario oltp_insert"), result.stderr
    result = dbperf("runs", tmp=tmp_path)
    stored = f"dbperf: no runs stored in {tmp_path / 's.duckdb'}"
    assert (result.returncode, result.stderr.split(" (")[0]) == (0, stored)


def test_run_without_a_scenario_says_how(tmp_path: Path):
    result = dbperf("run", tmp=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("dbperf: error: give --scenario NAME (or set DBPERF_SCENARIO)")


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["run"],
        ["runs"],
        ["import", "sysbench-log"],
        ["gate"],
        ["compare"],
        ["baseline", "record"],
        ["baseline", "show"],
        ["scenarios"],
        ["servers"],
    ],
)
def test_help_explains_itself(command: list[str]):
    result = subprocess.run(
        [sys.executable, "-m", "harness", *command, "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0
    assert "Usage: dbperf" in result.stdout
    assert len(result.stdout.splitlines()) > 5


def test_settings_a_command_does_not_have_are_ignored(tmp_path: Path):
    env = {**os.environ, "DBPERF_TIME": "not-a-number", "DBPERF_THREADS": "x"}
    runs = subprocess.run(
        [sys.executable, "-m", "harness", "runs", "--store", str(tmp_path / "s.duckdb")],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert runs.returncode == 0, runs.stderr
    run = subprocess.run(
        [sys.executable, "-m", "harness", "run", "-s", "oltp_point_select", "--store", str(tmp_path / "s.duckdb")],
        capture_output=True, text=True, cwd=ROOT, env=env, check=False, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.strip().startswith("dbperf: error: --threads")


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "--server", "mariadb-local", "--base", "a", "--head", "b", "-s", "oltp_point_select"),
        ("runs", "--time", "3"),
        ("report", "--cost"),
        ("changes", "--repetitions", "3"),
    ],
)
def test_flags_a_command_does_not_use_are_errors(tmp_path: Path, args: tuple[str, ...]):
    result = dbperf(*args, tmp=tmp_path)
    assert result.returncode == 2
    assert "No such option" in result.stderr


def test_conflicting_flags_are_errors(tmp_path: Path):
    for args, needle in (
        (("report", "--append"), "--append needs --out"),
        (("report", "--title", "x"), "add --format markdown"),
        (("export", "bmf", "--out", str(tmp_path / "b.json"), "--group", "g", "--all"), "not both"),
    ):
        result = dbperf(*args, tmp=tmp_path)
        assert result.returncode == 2, args
        assert needle in result.stderr, (args, result.stderr)


def test_an_invocation_puts_back_the_signal_handlers_it_replaced() -> None:
    """In process (the test suite, a benchmark), an invocation's SIGINT/SIGTERM handling ends with it: the
    caller's handlers come back, and an interrupt an earlier invocation saw does not make the next one's
    first interrupt a "second" (noted, not raised: a run that cannot be stopped)."""
    import signal

    from harness import cli

    def mine(signum: int, frame: object) -> None:
        del signum, frame

    previous = {s: signal.signal(s, mine) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        cli._signals.append(signal.SIGINT)  # an earlier invocation's interrupt
        with pytest.raises(SystemExit):
            cli.main(["--version"])
        assert signal.getsignal(signal.SIGINT) is mine and signal.getsignal(signal.SIGTERM) is mine
        assert cli._signals == []
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
