"""The fourth fault round (issue 35), the pull-request runner: a hostile job, and a runner it could change.

Run for real as root by tools/pr-runner.sh with a throwaway account (tests/support/runner_standin.py:
created here and removed on the way out, even when a check fails). The label and comment gates of the
same round are workflow logic, run by act in tests/workflows/test_pr_gates.py.
"""

from __future__ import annotations

import os
import shutil

import pytest
from support import REPO, runner_standin
from support.faults import record
from support.integration import processes_of

pytestmark = pytest.mark.integration


@pytest.fixture
def world():
    if os.geteuid() != 0:
        pytest.skip("tools/pr-runner.sh runs as root")
    with runner_standin.world("github_pat_fault_round_4") as paths:
        yield paths


def _last(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines and "Traceback" not in stderr, stderr
    return lines[-1]


def test_a_job_that_plants_in_every_writable_place(world) -> None:
    """Job 1 plants in every folder its user can write, its dotfiles and runner copy, cron, at, IPC, a
    process; job 2 and root between the two find none of it."""
    assert not runner_standin.missing_tools(), runner_standin.missing_tools()
    out = runner_standin.pr_runner(REPO, world, "--jobs", "2")
    assert out.returncode == 0, out.stderr
    planted = runner_standin.planted(out.stdout)
    assert {kind for kind, _ in planted} >= set(runner_standin.KINDS), out.stdout
    between = (world["records"] / "between-2.txt").read_text().strip()
    seen = [line for line in out.stdout.splitlines() if line.startswith("JOB2 ")]
    assert between == "clean" and seen and all(line.endswith(" ok") for line in seen), (between, seen)
    owned = runner_standin.owned_anywhere(int(str(world["uid"])))
    assert owned == sorted([str(world["home"]), str(world["state"] / "cache-pr")]), owned
    leaks = [f"process {p}" for p in processes_of(str(world["user"]))]
    assert leaks == []
    record(
        f"pull-request runner: job 1 plants {len(planted)} things ({len(runner_standin.KINDS)} kinds of place)",
        out.returncode,
        _last(out.stderr),
        "nothing of job 1 before job 2 (fresh home, empty cache-pr)",
        leaks,
    )


def test_a_runner_the_job_user_could_change(world) -> None:
    shutil.chown(world["runner"] / "run.sh", str(world["user"]))
    out = runner_standin.pr_runner(REPO, world, "--jobs", "1")
    line = _last(out.stderr)
    assert out.returncode == 2 and "the job user could change the runner" in line, out.stderr
    assert not (world["records"] / "gh-count").exists()  # refused before any registration
    record("pull-request runner: --runner-dir owned by the job user", out.returncode, line, "nothing", [])
