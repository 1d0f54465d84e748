"""The runners a fork cannot own: tools/pr-runner.sh (one job per registration) and the runner roles of
tools/setup-runner.sh, run for real as root with an unprivileged runner account.

GitHub is faked at the seam (a ``gh`` on PATH that hands out just-in-time configurations) and so is the
Actions runner (a ``run.sh`` that records what it got and leaves a file and a process behind, as a
hostile job would); everything else is the real script on this machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from integration.helpers import REPO, processes_of, unprivileged_user

pytestmark = pytest.mark.integration

TOKEN = "github_pat_admin_SENTINEL_0123456789"


@pytest.fixture
def world() -> Iterator[dict[str, Path]]:
    user = unprivileged_user()
    base = Path(tempfile.mkdtemp(prefix="dbperf-pr-runner-"))
    base.chmod(0o755)
    paths = {name: base / name for name in ("runner", "records", "shim", "home")}
    for path in paths.values():
        path.mkdir()
    shutil.chown(paths["runner"], user, user)
    paths["records"].chmod(0o777)
    (paths["shim"] / "gh").write_text(
        "#!/bin/bash\n"
        f'{{ echo "token=${{GH_TOKEN:+set}}"; printf "%s\\n" "$@"; }} >> {paths["records"]}/gh-calls.txt\n'
        'echo "JITCONFIG-$RANDOM"\n'
    )
    (paths["runner"] / "run.sh").write_text(
        "#!/bin/bash\n"
        f"records={paths['records']}\n"
        'n=$(ls "$records" | grep -c "^job-")\n'
        'here=$(dirname "$0")\n'
        '{ echo "user=$(id -un)"; echo "groups=$(id -Gn)"; echo "argv=$*"; echo "--- env"; env;\n'
        '  echo "--- left by earlier jobs"; ls -A "$here/_work" 2>/dev/null; } > "$records/job-$n.txt"\n'
        'mkdir -p "$here/_work" && echo planted > "$here/_work/left-behind"\n'
        "setsid sleep 600 < /dev/null > /dev/null 2>&1 &\n"  # a process a hostile job leaves running
    )
    for script in (paths["shim"] / "gh", paths["runner"] / "run.sh"):
        script.chmod(0o755)
    token = base / "token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    paths["token"] = token
    paths["user"] = Path(user)
    try:
        yield paths
    finally:
        for pid in processes_of(user):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        shutil.rmtree(base, ignore_errors=True)


def _pr_runner(world: dict[str, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{world['shim']}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "DBPERF_HOME": str(world["home"]),
        "LANG": "C.UTF-8",
    }
    argv = ["bash", str(REPO / "tools" / "pr-runner.sh"), "--user", str(world["user"])]
    argv += ["--runner-dir", str(world["runner"]), "--repo", "acme/dbperf", "--token-file", str(world["token"])]
    return subprocess.run([*argv, *extra], env=env, capture_output=True, text=True, check=False, timeout=120)


def test_each_job_gets_a_fresh_ephemeral_runner_and_nothing_of_the_last_one(world: dict[str, Path]) -> None:
    user = str(world["user"])
    (world["home"] / "cache-pr").mkdir()
    (world["home"] / "cache-pr" / "poisoned-snapshot").write_text("a job's dataset")
    out = _pr_runner(world, "--jobs", "2", "--group-id", "7")
    assert out.returncode == 0, out.stderr
    jobs = [(world["records"] / f"job-{n}.txt").read_text() for n in (0, 1)]
    for job in jobs:
        assert f"user={user}\n" in job and "groups=" in job and "docker" not in job.split("groups=")[1].split("\n")[0]
        assert "argv=--jitconfig JITCONFIG-" in job  # a just-in-time runner: exactly one job
        assert TOKEN not in job and "GH_TOKEN" not in job  # the admin token never reaches the job
    assert jobs[1].split("--- left by earlier jobs\n")[1].strip() == ""  # job 1's planted file was wiped
    assert processes_of(user) == []  # the process job 2 left is gone too (and job 1's before job 2 ran)
    assert not (world["home"] / "cache-pr" / "poisoned-snapshot").exists()
    calls = (world["records"] / "gh-calls.txt").read_text()
    assert calls.count("repos/acme/dbperf/actions/runners/generate-jitconfig") == 2
    for wanted in ("token=set", "labels[]=self-hosted", "labels[]=linux", "labels[]=dbperf-pr", "runner_group_id=7"):
        assert wanted in calls, calls
    assert "dbperf-trusted" not in calls


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
        env = {**os.environ, "DBPERF_HOME": str(world["home"])}
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
