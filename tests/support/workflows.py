"""The workflow tests' world: a scratch copy of this repository with git history, GitHub's events.

The scratch repository holds this checkout's files (committed or not, as act would see them) with
three test-only edits, made in its first commit so that base and head share them:

* only the ``mariadb-local`` server is kept, so a changed my.cnf plans one comparison, not four
  (the other servers use the same file, and two of them are containers);
* the ``ci`` and ``full`` profiles use a 2 x 50,000-row dataset (the full profile's 8 x 1 M rows take
  minutes to prepare on this machine, and the size of the data is not what these tests are about);
* nothing else: the workflow files, harness and pyproject are the checkout's own.

A branch ``smaller-buffer-pool`` then changes ``servers/conf/mariadb.cnf`` the way a pull request
would: a 6 MB buffer pool read around the page cache, a real and large regression.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from support import REPO

PR_NUMBER = 7
PR_BRANCH = "smaller-buffer-pool"
BENCHER_SENTINEL = "bencher-sentinel-3f9a1c77"
SMALL_DATASET = "tables = 2\ntable_size = 50000\n"
REGRESSION_CNF = "innodb_buffer_pool_size = 6M\ninnodb_flush_method = O_DIRECT\n"
REPOSITORY = {
    "full_name": "acme/dbperf",
    "name": "dbperf",
    "owner": {"login": "acme"},
    "default_branch": "main",
    "html_url": "https://github.com/acme/dbperf",
    "fork": False,
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=ci@dbperf.test", "-c", "user.name=dbperf", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _shrink_profiles(text: str) -> str:
    """``[profiles.ci]`` and ``[profiles.full]`` with a small dataset (other sections untouched)."""
    out, section = [], ""
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            section = header.group(1).strip()
            out.append(line)
            if section in ("profiles.ci", "profiles.full"):
                out.append(SMALL_DATASET)
            continue
        if section in ("profiles.ci", "profiles.full") and re.match(r"\s*(tables|table_size)\s*=", line):
            continue
        out.append(line)
    return "".join(out)


@dataclass(frozen=True)
class ScratchRepo:
    path: Path
    main_sha: str
    pr_sha: str

    def checkout(self, ref: str) -> None:
        git(self.path, "checkout", "-q", ref)


FORK = {**REPOSITORY, "full_name": "mallory/dbperf", "owner": {"login": "mallory"}, "fork": True}


def pull_request_event(
    repo: ScratchRepo, action: str = "opened", *, fork: bool = False, label: str = ""
) -> dict[str, object]:
    """A pull request's event as GitHub sends it, for ``pull_request`` and ``pull_request_target`` alike.

    ``fork``: the head lives in another repository (a fork); ``label``: the event is that label added."""
    labels = [{"name": label}] if label else []
    event: dict[str, object] = {
        "action": "labeled" if label else action,
        "number": PR_NUMBER,
        "pull_request": {
            "number": PR_NUMBER,
            "state": "open",
            "title": "Shrink the buffer pool",
            "labels": labels,
            "base": {"ref": "main", "sha": repo.main_sha, "repo": REPOSITORY},
            "head": {"ref": PR_BRANCH, "sha": repo.pr_sha, "repo": FORK if fork else REPOSITORY},
            "merge_commit_sha": repo.pr_sha,
        },
        "repository": REPOSITORY,
        "sender": {"login": "mallory" if fork else "acme"},
    }
    if label:
        event["label"] = {"name": label}
    return event


def push_event(repo: ScratchRepo) -> dict[str, object]:
    return {
        "ref": "refs/heads/main",
        "before": "0" * 40,
        "after": repo.main_sha,
        "deleted": False,
        "created": False,
        "head_commit": {"id": repo.main_sha, "message": "main"},
        "repository": REPOSITORY,
        "pusher": {"name": "acme"},
    }


def schedule_event() -> dict[str, object]:
    return {"schedule": "17 2 * * *", "repository": REPOSITORY}


def workflow_run_event(run_id: int, event: str, branch: str, sha: str, conclusion: str) -> dict[str, object]:
    """A perf.yml run's completion (push, schedule, dispatch); pr-check.yml's: :func:`pr_check_run_event`."""
    if event == "pull_request_target":
        raise ValueError("a pull_request_target run's workflow_run payload: use pr_check_run_event")
    workflow = "perf"
    run = {
        "id": run_id,
        "name": workflow,
        "path": f".github/workflows/{workflow}.yml",
        "html_url": f"https://github.com/acme/dbperf/actions/runs/{run_id}",
        "event": event,
        "status": "completed",
        "conclusion": conclusion,
        "head_branch": branch,
        "head_sha": sha,
        "head_repository": REPOSITORY,
        "repository": REPOSITORY,
        "run_attempt": 1,
        "run_number": run_id,
    }
    return {
        "action": "completed",
        "workflow_run": run,
        "workflow": {"name": workflow, "path": f".github/workflows/{workflow}.yml"},
        "repository": REPOSITORY,
        "sender": {"login": "acme"},
    }


def pr_check_run_event(
    run_id: int, repo: ScratchRepo, head_sha: str, conclusion: str, *, number: int = PR_NUMBER
) -> dict[str, object]:
    """pr-check.yml's run of a pull request's ``pull_request_target`` event, completed, as GitHub sends it.

    For ``pull_request_target`` GitHub runs in the base branch's context, so the run's ``head_branch`` and
    ``head_sha`` are the BASE branch's (GITHUB_SHA is "the last commit on the PR base branch"; actions/checkout
    #2454: "when workflow_run is triggered by pull_request_target, the head_sha points to the base branch, not
    the PR head"), ``pull_requests`` is empty for a fork, and ``display_title`` is pr-check.yml's run-name."""
    event = workflow_run_event(run_id, "push", "main", repo.main_sha, conclusion)
    run = dict(event["workflow_run"])  # type: ignore[call-overload]
    run.update(
        name="pr-check",
        path=".github/workflows/pr-check.yml",
        event="pull_request_target",
        display_title=f"pr-check #{number} at {head_sha}",
        pull_requests=[],
    )
    return {**event, "workflow_run": run, "workflow": {"name": "pr-check", "path": ".github/workflows/pr-check.yml"}}


def make_scratch_repo(root: Path) -> ScratchRepo:
    """This checkout copied into ``root`` with git history: base on ``main``, the pull request on PR_BRANCH."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in files:
        if not raw:
            continue
        rel = raw.decode()
        source = REPO / rel
        if not source.is_file():  # deleted in the working tree
            continue
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for server in (root / "servers").glob("*.toml"):
        if server.stem != "mariadb-local":
            server.unlink()
    shutil.rmtree(root / "servers" / "examples", ignore_errors=True)
    for scenario in (root / "scenarios").glob("*.toml"):
        scenario.write_text(_shrink_profiles(scenario.read_text()))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base: this checkout (one server, small ci/full datasets)")
    main_sha = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", PR_BRANCH)
    cnf = root / "servers" / "conf" / "mariadb.cnf"
    cnf.write_text(re.sub(r"innodb_buffer_pool_size = \S+\n", REGRESSION_CNF, cnf.read_text()))
    git(root, "commit", "-qam", "Shrink the buffer pool and bypass the page cache")
    pr_sha = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    return ScratchRepo(root, main_sha, pr_sha)
