"""The first hour, as a new user walks it on a fresh clone: every command dbperf suggests works as printed.

One walk on the local MariaDB, quick profile, with the repository's committed cost baselines (copied)
and an empty timing side, every step's exit code 0 or 1 (a verdict), never 2:

1. the main job (``tools/main.sh``'s command): the cost verdict against the committed baseline, and a
   timing verdict "no baseline ...; record one with: dbperf baseline record ..." naming the repetitions
   the gate's design check needs;
2. that command, parsed from the output and run exactly as printed;
3. the gate again (timing only: step 1 gave its cost verdict): the design check raises the candidate
   runs to as many as the baseline has (not to 500) and says so with the plan's wall time, before it
   starts;
4. an A/B comparison whose head sets a value the base already runs with (``thread_cache_size=64`` is
   pinned by dbperf): said to be an A/A comparison, in a note and the verdict's label; first with a
   limit it is over (one line naming the cheaper way, exit 2, nothing run), then run;
5. ``dbperf ci plan`` of a server change, priced by the runs the walk stored.

Each step's wall time is printed (``-s`` shows them), with the estimate the design check printed
beside it; timings are not asserted (a shared machine's load decides them). docs/method.md, "Before
the first run", has the measured walk.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import REPO
from support.cli import Dbperf, dbperf_argv

pytestmark = pytest.mark.integration

POINT = ("--scenario", "oltp_point_select", "--server", "mariadb-local")
SUGGESTED = re.compile(r"dbperf (?:baseline record|gate|compare) [^;\n`\"]*")
PLANNED = re.compile(r"the whole plan: about ([^,]+),")


def suggestions(text: str) -> list[str]:
    """Every dbperf command the text suggests, as printed (a suggestion ends its clause)."""
    return [m.group(0).strip() for m in SUGGESTED.finditer(text)]


def parses(command: str) -> list[str]:
    """The command's arguments after ``dbperf``, checked by dbperf's own parser (``--help`` after them
    would hide an unknown option, so the command's context is made without running it)."""
    from harness.cli import cli

    argv = shlex.split(command)
    assert argv[0] == "dbperf", command
    ctx = cli.make_context("dbperf", argv[1:], resilient_parsing=False)
    name, sub, rest = cli.resolve_command(ctx, argv[1:])
    assert sub is not None and name, command
    group_ctx = sub.make_context(name, rest, parent=ctx)
    if hasattr(sub, "resolve_command"):  # baseline record
        _, leaf, args = sub.resolve_command(group_ctx, rest)  # type: ignore[attr-defined]
        assert leaf is not None, command
        leaf.make_context(leaf.name or "", args, parent=group_ctx)
    return argv[1:]


class Walk:
    """Runs the steps, keeps their wall times and output."""

    def __init__(self, dbperf: Dbperf) -> None:
        self.dbperf = dbperf
        self.times: list[tuple[str, float, str]] = []

    def step(self, name: str, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        started = time.monotonic()
        if cwd is None:
            out = self.dbperf.run(*args, timeout_s=900)
        else:
            out = subprocess.run(
                [*dbperf_argv(), *map(str, args)],
                cwd=cwd,
                env=self.dbperf.env,
                capture_output=True,
                text=True,
                check=False,
                timeout=900,
            )
        seconds = time.monotonic() - started
        planned = PLANNED.search(out.stderr)
        self.times.append((name, seconds, planned.group(1) if planned else "-"))
        print(f"\n$ dbperf {' '.join(map(str, args))}\n  exit {out.returncode} after {seconds:.0f} s")
        for line in out.stderr.splitlines():
            if line.startswith(("note:", "warning:", "dbperf: error")) or "record one with" in line:
                print(f"  {line[:400]}")
        return out


def test_the_suggested_path_works_as_printed(dbperf: Dbperf, tmp_path: Path):
    baselines, store = tmp_path / "baselines", tmp_path / "store" / "dbperf.duckdb"
    shutil.copytree(REPO / "baselines" / "cost", baselines / "cost")  # a fresh clone's committed ones
    where = ("--baselines-dir", str(baselines), "--store", str(store))
    walk = Walk(dbperf)

    # 1. the main job: a cost verdict, and the timing side says which recording to make
    main = walk.step("main job", "gate", *POINT, *where, "--json")
    assert main.returncode in {0, 1}, main.stderr[-3000:]
    doc = json.loads(main.stdout)
    reasons = [m["reason"] for v in doc["verdicts"] for m in v["metrics"]]
    (record,) = {c for r in reasons for c in suggestions(r)}
    assert "--repetitions 6" in record and "--no-cost" in record, record
    assert f"--baselines-dir {baselines}" in record  # what the gate reads is where it records

    # 2. the suggested recording, exactly as printed: exit 0, the timing baseline of 6 runs written
    recorded = walk.step("suggested record", *parses(record))
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert "timing, 6 runs at 2 threads" in recorded.stdout
    assert not [c for c in suggestions(recorded.stderr) if c != record]  # nothing more to record

    # 3. the gate again: raised to at most the baseline's 6 runs (not 500), with the plan's time, before it runs
    gate = walk.step("gate", "gate", *POINT, *where, "--no-cost")
    assert gate.returncode in {0, 1}, gate.stderr[-3000:]
    (raised,) = [line for line in gate.stderr.splitlines() if line.startswith("note:") and "instead of" in line]
    found = re.search(r"running (\d+) repetitions instead of 1 \(the whole plan: about \d+", raised)
    assert found and 2 <= int(found.group(1)) <= 6, raised
    assert gate.stderr.index(raised[6:]) < gate.stderr.index("#1 (")  # said before the first run
    for command in suggestions(gate.stderr + gate.stdout):
        parses(command)

    # 4. an A/B whose head changes nothing: an A/A, said; over a small limit it stops in one line first
    aa = (
        "compare", "--base", "mariadb-local", "--head-var", "thread_cache_size=64", "--scenario",
        "oltp_point_select", "--no-cost", "--gate-metric", "qps", "--time", "1", "--warmup", "0", "--store", store,
    )  # fmt: skip
    stopped = walk.step("compare over its limit", *aa, "--max-minutes", "0.1")
    assert stopped.returncode == 2, stopped.stderr[-3000:]
    (error,) = [line for line in stopped.stderr.splitlines() if line.startswith("dbperf: error")]
    assert "not started" in error and "over the 6 s limit" in error and "--yes" in error
    assert "cheaper: cost runs only, --cost instead of --no-cost" in error
    assert "running mariadb-local" not in stopped.stderr  # nothing ran
    compared = walk.step("compare", *aa)
    assert compared.returncode in {0, 1}, compared.stderr[-3000:]
    assert "this is an A/A comparison" in compared.stderr
    assert "(A/A)" in compared.stdout  # the verdict's label

    # 5. ci plan of a server change, priced by the runs above
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "servers", repo / "servers")
    shutil.copytree(REPO / "scenarios", repo / "scenarios", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (repo / "pyproject.toml").write_text("[tool.dbperf]\n")
    git = ("git", "-c", "user.email=ci@dbperf.test", "-c", "user.name=dbperf")
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    server = repo / "servers" / "mariadb-local.toml"
    server.write_text(server.read_text() + '\n[variables]\nmax_statement_time = "1000"\n')
    subprocess.run([*git, "commit", "-qam", "arm a statement timer"], cwd=repo, check=True)
    plan = walk.step(
        "ci plan", "ci", "plan", "--base", "HEAD~1", "--profile", "quick", "-s", "oltp_point_select",
        "--store", store, cwd=repo,
    )  # fmt: skip
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "estimated time" in plan.stdout
    for command in suggestions(plan.stdout + plan.stderr):
        parses(command)

    print("\nstep                      wall time   planned (design check)")
    for name, seconds, planned in walk.times:
        print(f"{name:<25} {seconds:>7.0f} s   {planned}")
