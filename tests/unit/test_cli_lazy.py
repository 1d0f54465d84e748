"""`dbperf --help` lists every command without importing them (it took 1.7 s when ci_cmds pulled the
whole pipeline in at load); the table it lists from agrees with the commands themselves."""

from __future__ import annotations

import re
import subprocess
import sys

import click

from harness.cli import COMMANDS, cli


def test_the_help_table_is_the_commands_own_help():
    ctx = click.Context(cli)
    for name, (module, short) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None, name
        assert command.get_short_help_str(1000) == short, name
        assert command.callback is None or command.callback.__module__ == f"harness.cli.{module}", name
    registered = set(cli.commands)
    assert registered == set(COMMANDS)  # no command registered that the help table leaves out


def test_help_imports_no_pipeline_statistics_or_store():
    code = (
        "import sys; from harness.cli import cli\n"
        "try:\n    cli.main(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "heavy = ('harness.pipeline', 'scipy', 'duckdb', 'docker', 'harness.cli.ci_cmds')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "Commands:" in out.stdout and re.search(r"\n  runs +List stored runs, newest first\.", out.stdout)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout[-500:]


def test_runs_reads_the_store_without_arrow_numpy_or_the_catalogue(tmp_path):
    """`dbperf runs` reads runs without pyarrow, numpy or the pydantic catalogue (it took 1.0-1.5 s with
    them); a run saved first (which does write Parquet through pyarrow) is listed from a fresh process."""
    from support.factories import run as make_run

    from harness.store import open_store

    store_path = tmp_path / "store.duckdb"
    open_store(store_path).save(make_run(1000.0))
    code = (
        "import sys; from harness.cli import cli\n"
        f"try:\n    cli.main(['runs', '--store', {str(store_path)!r}], standalone_mode=False)\n"
        "except SystemExit:\n    pass\n"
        "heavy = ('pyarrow', 'numpy', 'pydantic', 'scipy', 'harness.pipeline', 'harness.config.scenarios')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert "1 run(s) in" in out.stdout, out.stdout[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout[-500:]
