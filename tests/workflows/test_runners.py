"""The runners a fork cannot own: tools/pr-runner.sh (one job per registration, each from a state no earlier
job could change) and the runner roles of tools/setup-runner.sh, run for real as root with a throwaway
runner account that the test creates and removes.

GitHub is faked at the seam (a ``gh`` on PATH that hands out just-in-time configurations) and so is the
Actions runner (a root-owned ``run.sh`` that, as a hostile job would, plants a file in every folder the
job user can write, its dotfiles, a crontab, an at job, IPC objects and a process); everything else is the
real script on this machine. The planting is in tests/support/runner_standin.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import REPO, runner_standin
from support.integration import processes_of

pytestmark = pytest.mark.integration

TOKEN = "github_pat_admin_SENTINEL_0123456789"


@pytest.fixture
def world() -> Iterator[dict[str, Path]]:
    if os.geteuid() != 0:
        pytest.skip("tools/pr-runner.sh runs as root")
    with runner_standin.world(TOKEN) as paths:
        yield paths


def _pr_runner(world: dict[str, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    return runner_standin.pr_runner(REPO, world, *extra)


def test_a_job_finds_nothing_an_earlier_job_planted(world: dict[str, Path]) -> None:
    """Job 1 plants a file in every folder its user can write (found by walking every file system as that
    user), in its home's dotfiles (git, pip, a user-site .pth), in the runner it runs from, a crontab, an
    at job, System V shared memory, a semaphore, a message queue, a POSIX message queue and a process;
    before job 2 starts (checked by root, in the gh stand-in) and from inside job 2, none of it is left."""
    user = str(world["user"])
    (world["state"] / "cache-pr").mkdir()
    (world["state"] / "cache-pr" / "poisoned-snapshot").write_text("a job's dataset")
    assert not runner_standin.missing_tools(), runner_standin.missing_tools()
    out = _pr_runner(world, "--jobs", "2", "--group-id", "7")
    assert out.returncode == 0, out.stderr + out.stdout
    planted = runner_standin.planted(out.stdout)
    places = {kind for kind, _ in planted}
    # every kind of place, and the folders found by the walk include the shared and the user's own ones
    assert places >= set(runner_standin.KINDS), (places, out.stdout)
    folders = {Path(p).parent for kind, p in planted if kind == "file"}
    for wanted in ("/tmp", "/var/tmp", "/dev/shm", str(world["home"]), str(world["state"] / "cache-pr")):
        assert Path(wanted) in folders, (wanted, sorted(folders))
    assert "PRISTINE-WRITABLE" not in out.stdout  # the runner every job starts from is out of the job's reach
    # root's look between the jobs: every planted path, the crontab, the at queue, the IPC tables, processes
    between = (world["records"] / "between-2.txt").read_text()
    assert between.strip() == "clean", between
    # job 2's own look: its home is /etc/skel's, its runner the pristine one, nothing planted found anywhere
    seen = [line for line in out.stdout.splitlines() if line.startswith("JOB2 ")]
    assert seen and all(line.endswith(" ok") for line in seen), "\n".join(seen)
    assert not (world["state"] / "cache-pr" / "poisoned-snapshot").exists()
    assert processes_of(user) == []  # what job 2 left is gone too
    # after the last job, nothing of the user's but a fresh home and an empty dataset cache
    owned = runner_standin.owned_anywhere(int(str(world["uid"])))
    assert owned == sorted([str(world["home"]), str(world["state"] / "cache-pr")]), owned
    jobs = runner_standin.job_records(out.stdout)
    assert len(jobs) == 2
    for job in jobs:
        assert job["user"] == user and "docker" not in job["groups"].split()
        assert job["argv"].startswith("--jitconfig JITCONFIG-")  # a just-in-time runner: exactly one job
        assert TOKEN not in job["env"] and "GH_TOKEN" not in job["env"]  # the admin token never reaches the job
    calls = (world["records"] / "gh-calls.txt").read_text()
    assert calls.count("repos/acme/dbperf/actions/runners/generate-jitconfig") == 2
    for wanted in ("token=set", "labels[]=self-hosted", "labels[]=linux", "labels[]=dbperf-pr", "runner_group_id=7"):
        assert wanted in calls, calls
    assert "dbperf-trusted" not in calls


def test_a_runner_the_job_user_could_change_is_refused(world: dict[str, Path]) -> None:
    shutil.chown(world["runner"] / "bin", str(world["user"]))
    out = _pr_runner(world, "--jobs", "1")
    assert out.returncode == 2 and "is not root's or is writable by others" in out.stderr, out.stderr
    shutil.chown(world["runner"] / "bin", "root")
    (world["runner"] / "run.sh").chmod(0o777)
    out = _pr_runner(world, "--jobs", "1")
    assert out.returncode == 2 and "the job user could change the runner" in out.stderr, out.stderr
    (world["runner"] / "run.sh").chmod(0o755)
    out = _pr_runner(world, "--jobs", "1")
    assert out.returncode == 0, out.stderr


def test_a_readable_token_or_a_docker_group_member_is_refused(world: dict[str, Path]) -> None:
    world["token"].chmod(0o644)
    out = _pr_runner(world, "--jobs", "1")
    assert out.returncode == 2 and "can be read by others: chmod 600" in out.stderr, out.stderr
    world["token"].chmod(0o600)
    user = str(world["user"])
    subprocess.run(["groupadd", "-f", "docker"], check=True, timeout=30)
    subprocess.run(["usermod", "-aG", "docker", user], check=True, timeout=30)
    try:
        out = _pr_runner(world, "--jobs", "1")
        assert out.returncode == 2 and "is in the docker group" in out.stderr, out.stderr
        # the pull-request role of setup-runner takes the account out of the group (and needs no Docker)
        env = {**os.environ, "DBPERF_HOME": str(world["state"])}
        setup = subprocess.run(
            ["bash", str(REPO / "tools" / "setup-runner.sh"), "--role", "pr", "--user", user, "--skip-venv"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        assert setup.returncode == 0, setup.stderr[-3000:]
        assert f"taking {user} out of the docker group" in setup.stderr, setup.stderr[-3000:]
        groups = subprocess.run(["id", "-nG", user], capture_output=True, text=True, check=True).stdout.split()
        assert "docker" not in groups
        assert "Role: pr runner (label dbperf-pr)" in setup.stdout
        # the state folder is root's, only the dataset cache the job user's
        assert world["state"].stat().st_uid == 0 and (world["state"] / "cache-pr").owner() == user
    finally:
        subprocess.run(["gpasswd", "-d", user, "docker"], capture_output=True, check=False, timeout=30)
    out = _pr_runner(world, "--jobs", "1")
    assert out.returncode == 0, out.stderr


def test_setup_runner_wants_a_role() -> None:
    out = subprocess.run(
        ["bash", str(REPO / "tools" / "setup-runner.sh"), "--user", "root"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert out.returncode == 2 and "--role trusted (history jobs) or --role pr" in out.stderr, out.stderr
