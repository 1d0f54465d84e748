"""Every command the README and docs/ show works as shown.

Each line of a fenced code block in README.md and docs/*.md that starts with ``dbperf `` or
``bash tools/`` is read (continuation lines joined, comments dropped). Every dbperf command is parsed
by the real CLI (no "No such command", no "No such option", no missing option: a usage error would
exit 2), its ``--help`` is printed, and the cheap ones are run for real in an empty folder against an
empty store, where they must exit 0. The expensive ones are listed in :data:`NOT_RUN` with the reason
(and where they are run for real instead); a new command in the docs must be classified in
:data:`RUN_HERE` or :data:`NOT_RUN`, or this test fails. A ``bash tools/`` script must exist, pass
``bash -n`` and know every option the docs give it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from harness.cli import cli, main

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))

#: Commands cheap enough to run here: in an empty folder, against an empty store, they say "no runs" or
#: list the catalogue, and exit 0.
RUN_HERE = {
    ("runs",),
    ("scenarios",),
    ("servers",),
    ("baseline", "show"),
    ("report",),
    ("trend",),
    ("changes",),
    ("export", "bmf"),
    ("judge",),
    ("store", "info"),
}

#: Commands only parsed here, and why (they are run for real where the reason says).
NOT_RUN = {
    ("run",): "measures on a real server (seconds to minutes): tests/integration/test_cli.py",
    ("gate",): "measures and judges on a real server: tests/integration/test_main_job.py",
    ("compare",): "interleaved A/B runs on real servers (minutes): tests/integration/test_cost.py",
    ("baseline", "record"): "measures on a real server and writes baselines: tests/integration/test_cost.py",
    ("ci", "run"): "a pull request's comparisons (tens of minutes): tests/integration/test_ci_run.py",
    ("ci", "plan"): "needs a pull request's git refs (origin/main): tests/unit/test_ciplan.py",
    ("import", "sysbench-log"): "reads the reader's own log files: tests/unit/test_sysbench_log.py",
    ("import", "go-tpc"): "the reader's own go-tpc log: tests/unit/test_import_go_logs.py, test_import_go_cli.py",
    ("import", "go-ycsb"): "the reader's own go-ycsb log: tests/unit/test_import_go_logs.py, test_import_go_cli.py",
    ("store", "migrate"): "copies into the reader's DuckLake on PostgreSQL: tests/integration/test_lake.py",
    ("calibrate",): "measures the runner and a real server (minutes): tests/integration/test_forecast.py",
    ("calibration", "show"): "needs a calibration of this testbed: tests/integration/test_forecast.py",
}
#: Any command with one of these options names something of the writer's store, not of an empty one.
NAMES_STORED = ("--group",)

#: ``bash tools/...`` scripts the docs show; none is run here.
TOOLS = {
    "tools/main.sh": "sets the machine up and runs a gate (minutes): tests/integration/test_main_job.py",
    "tools/test.sh": "the whole suite (about 35 minutes): CI",
    "tools/workflow-test-deps.sh": "builds act from the Go module proxy: tests/workflows",
}


@dataclass(frozen=True)
class DocCommand:
    where: str
    argv: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.where}: {shlex.join(self.argv)}"


def doc_commands() -> list[DocCommand]:
    """The ``dbperf``/``bash tools/`` lines of every fenced code block in README.md and docs/*.md."""
    found = []
    for doc in DOCS:
        in_block, pending, start = False, "", 0
        for number, line in enumerate(doc.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block, pending = not in_block, ""
                continue
            if not in_block:
                continue
            text = line.strip().removeprefix("$ ")
            if pending:
                text = f"{pending} {text}"
            else:
                start = number
            if text.endswith("\\"):
                pending = text[:-1].rstrip()
                continue
            pending = ""
            if text.startswith(("dbperf ", "bash tools/")):
                argv = tuple(shlex.split(text, comments=True))
                found.append(DocCommand(f"{doc.relative_to(REPO)}:{start}", argv))
    return found


COMMANDS = doc_commands()
DBPERF = [c for c in COMMANDS if c.argv[0] == "dbperf"]
BASH = [c for c in COMMANDS if c.argv[0] == "bash"]


def resolve(argv: tuple[str, ...]) -> tuple[tuple[str, ...], click.Command, click.Context, list[str]]:
    """The command an argv names (its path of subcommands), its parent context and its own arguments;
    an unknown command raises click's usage error, as the CLI would."""
    ctx = click.Context(cli, info_name="dbperf")
    command: click.Command = cli
    args = list(argv[1:])
    path: list[str] = []
    while isinstance(command, click.Group):
        name, sub, args = command.resolve_command(ctx, args)
        assert name is not None and sub is not None
        path.append(name)
        ctx = click.Context(sub, info_name=name, parent=ctx)
        command = sub
    assert ctx.parent is not None
    return tuple(path), command, ctx.parent, args


def test_the_docs_show_commands():
    assert len(DBPERF) > 30 and BASH, [str(c) for c in COMMANDS]
    paths = {resolve(c.argv)[0] for c in DBPERF}
    assert {("run",), ("runs",), ("compare",), ("ci", "plan")} <= paths


@pytest.mark.parametrize("command", DBPERF, ids=str)
def test_every_dbperf_command_in_the_docs_parses(command: DocCommand):
    path, cmd, parent, args = resolve(command.argv)  # "No such command" raises here
    cmd.make_context(path[-1], list(args), parent=parent)  # "No such option", a bad value, a missing option
    classified = path in RUN_HERE or path in NOT_RUN
    assert classified, f"{command}: classify `dbperf {' '.join(path)}` in RUN_HERE or NOT_RUN (with a reason)"


@pytest.mark.parametrize("path", sorted({resolve(c.argv)[0] for c in DBPERF}), ids=" ".join)
def test_the_help_of_every_command_in_the_docs(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    assert out.startswith(f"Usage: dbperf {' '.join(path)} ")


CHEAP = [c for c in DBPERF if resolve(c.argv)[0] in RUN_HERE and not set(NAMES_STORED) & set(c.argv)]


@pytest.mark.parametrize("command", CHEAP, ids=str)
def test_cheap_commands_in_the_docs_run_on_an_empty_store(
    command: DocCommand, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.chdir(tmp_path)  # outside a project: the packaged catalogue, nothing written into the checkout
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    monkeypatch.setenv("NO_COLOR", "1")
    for name in [n for n in os.environ if n.startswith("DBPERF_")]:
        monkeypatch.delenv(name)
    argv = [re.sub(r"\$(\w+)", lambda m: os.environ.get(m.group(1), m.group(0)), a) for a in command.argv]
    _, cmd, _, _ = resolve(command.argv)
    store = ["--store", str(tmp_path / "empty.duckdb")] if any("--store" in p.opts for p in cmd.params) else []
    with pytest.raises(SystemExit) as done:
        main([*argv[1:], *store])
    _, err = capsys.readouterr()
    assert done.value.code == 0, f"{command}: exit {done.value.code}\n{err}"
    assert "Traceback" not in err


def test_every_command_not_run_here_says_why():
    for path, reason in NOT_RUN.items():
        assert path not in RUN_HERE and len(reason) > 20, path


@pytest.mark.parametrize("command", BASH, ids=str)
def test_the_tools_scripts_in_the_docs_exist_and_take_those_options(command: DocCommand):
    script = command.argv[1]
    assert script in TOOLS, f"{command}: classify {script} in TOOLS (with why it is not run here)"
    path = REPO / script
    assert path.is_file(), f"{command}: {script} does not exist"
    syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    text = path.read_text()
    for option in (a for a in command.argv[2:] if a.startswith("-")):
        assert option in text, f"{command}: {script} does not handle {option}"
