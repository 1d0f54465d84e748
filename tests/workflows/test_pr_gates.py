"""The two gates around a pull request's check, executed by act with GitHub's payloads as GitHub sends them.

* The label approves a commit (pr-check.yml's ``gate`` job): a fork's check runs only when the head at the
  moment the ``perf`` label was added is a commit a maintainer approved in a review; a push between the
  review and the click, an approval by someone without write access, or an approval taken back by a later
  "request changes" runs nothing. The reviews and permissions come from the ``gh`` shim's fake API.
* The trusted side finds the pull request's commit (pr-comment.yml, bencher.yml): a ``pull_request_target``
  run's ``workflow_run.head_sha`` is the base branch's commit, so both read pr-check.yml's run-name
  (``display_title``: ``pr-check #N at SHA``), check the artifact says the same and ask the API whether that
  is still the pull request's head.

These runs need no server: the artifacts a check would upload are laid out by the test (verdicts.json of
tests/workflows/data), and pr-check.yml runs its gate only (or, refused, nothing after it).
tests/workflows/test_workflows.py runs the whole chain with a real check.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.actrun import Act, ActRun
from support.workflows import PR_NUMBER, ScratchRepo, pr_check_run_event, pull_request_event

pytestmark = [pytest.mark.integration, pytest.mark.workflows]

DATA = Path(__file__).resolve().parent / "data"
MAINTAINER, OUTSIDER = "maintainer-ann", "drive-by-bob"
OLDER = "0" * 39 + "1"  # a commit the maintainer reviewed before the pull request moved on
BENCHER_VARS = {"BENCHER_PROJECT": "dbperf-test", "BENCHER_TESTBED": "act-runner"}
SECRETS = {"BENCHER_API_TOKEN": "bencher-gates-token"}


def _explain(run: ActRun) -> str:
    return f"act {run.name} exit {run.exit_code} after {run.seconds:.0f} s; jobs {run.jobs}\n{run.tail(80)}"


def _api(act: Act, path: str, answer: object) -> None:
    """What the gh shim answers to ``GET path``."""
    file = act.state / "github" / f"{path}.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(answer))


def _reviews(act: Act, *reviews: tuple[str, str, str]) -> None:
    """Pull request 7's reviews, oldest first: (login, state, commit), and who has which permission."""
    _api(
        act,
        f"repos/acme/dbperf/pulls/{PR_NUMBER}/reviews",
        [{"id": i, "user": {"login": u}, "state": s, "commit_id": c} for i, (u, s, c) in enumerate(reviews, 1)],
    )
    _api(act, f"repos/acme/dbperf/collaborators/{MAINTAINER}/permission", {"permission": "write"})
    _api(act, f"repos/acme/dbperf/collaborators/{OUTSIDER}/permission", {"permission": "read"})


def _pull_request(act: Act, repo: ScratchRepo, head_sha: str) -> None:
    _api(
        act,
        f"repos/acme/dbperf/pulls/{PR_NUMBER}",
        {"number": PR_NUMBER, "head": {"sha": head_sha}, "base": {"sha": repo.main_sha, "ref": "main"}},
    )


def _labelled(act: Act, repo: ScratchRepo, name: str, *, fork: bool = True, jobs: tuple[str, ...] = ()) -> ActRun:
    """A maintainer adds `perf` to pull request 7, whose head is then ``repo.pr_sha``."""
    repo.checkout("smaller-buffer-pool")
    try:
        return act.run(
            name,
            "pull_request_target",
            pull_request_event(repo, fork=fork, label="perf"),
            workflow="pr-check.yml",
            variables={"DBPERF_HOME": str(act.state / "dbperf-home"), "DBPERF_SWEEP": "false"},
            jobs=jobs,
            timeout_s=600,
        )
    finally:
        repo.checkout("main")


# -- the label approves a commit -------------------------------------------------------------------


def test_the_label_runs_the_commit_a_maintainer_approved(act: Act, scratch_repo: ScratchRepo) -> None:
    _reviews(act, (OUTSIDER, "APPROVED", scratch_repo.pr_sha), (MAINTAINER, "APPROVED", scratch_repo.pr_sha))
    run = _labelled(act, scratch_repo, "gate-approved", jobs=("gate",))
    assert run.exit_code == 0 and run.jobs == {"gate": "success"}, _explain(run)
    summary = run.summary("gate")
    assert f"Commit {scratch_repo.pr_sha} of pull request #{PR_NUMBER}: approved by {MAINTAINER}" in summary
    calls = [c["path"] for c in run.github_calls()]
    assert calls[0] == f"repos/acme/dbperf/pulls/{PR_NUMBER}/reviews", calls


@pytest.mark.parametrize(
    ("case", "reviews"),
    [
        # reviewed, then a push, then the click: the label's head is a commit nobody reviewed
        ("pushed-after-review", [(MAINTAINER, "APPROVED", OLDER)]),
        ("approved-by-read-access", [(OUTSIDER, "APPROVED", "PR")]),
        ("approval-taken-back", [(MAINTAINER, "APPROVED", "PR"), (MAINTAINER, "CHANGES_REQUESTED", "PR")]),
        ("approval-dismissed", [(MAINTAINER, "APPROVED", "PR"), (MAINTAINER, "DISMISSED", "PR")]),
        ("no-review", []),
    ],
)
def test_the_label_on_an_unapproved_head_runs_nothing(
    act: Act, scratch_repo: ScratchRepo, case: str, reviews: list[tuple[str, str, str]]
) -> None:
    _reviews(act, *[(u, s, scratch_repo.pr_sha if c == "PR" else c) for u, s, c in reviews])
    # the whole workflow: the A/B check must not start (it would run the pull request's code)
    run = _labelled(act, scratch_repo, f"gate-{case}")
    assert run.jobs == {"gate": "failure"}, _explain(run)
    assert "compare" not in {job for job, _ in run.job_results()} and "Plan and compare" not in run.log
    summary = run.summary("gate")
    assert (
        f"Commit {scratch_repo.pr_sha}, the head of pull request #{PR_NUMBER} when the perf label was added, "
        "has no approving review by a maintainer: nothing runs" in summary
    ), summary


def test_a_branch_of_this_repository_needs_no_review(act: Act, scratch_repo: ScratchRepo) -> None:
    _reviews(act)
    run = _labelled(act, scratch_repo, "gate-same-repository", fork=False, jobs=("gate",))
    assert run.exit_code == 0 and run.jobs == {"gate": "success"}, _explain(run)
    assert not [c for c in run.github_calls() if "reviews" in str(c["path"])]


# -- the trusted side finds the pull request's commit --------------------------------------------------


def _check_artifacts(act: Act, head_sha: str, *, claimed: int = PR_NUMBER, claimed_sha: str = "") -> int:
    """A finished check's uploads, as pr-check.yml's collect step writes them; returns its run id."""
    run_id = act.reserve_run_id()
    for name, files in (("pr-comment", {"verdicts.json"}), ("bmf", {"bmf.json"})):
        folder = act.state / "artifacts" / str(run_id) / name
        folder.mkdir(parents=True)
        if "verdicts.json" in files:
            shutil.copy(DATA / "verdicts.json", folder / "verdicts.json")
        else:
            (folder / "bmf.json").write_text(
                json.dumps({"mariadb-local/oltp_read_only/ci/8t": {"throughput": {"value": 1.0}}})
            )
        (folder / "pr-number.txt").write_text(f"{claimed}\n")
        (folder / "head-sha.txt").write_text(f"{claimed_sha or head_sha}\n")
    return run_id


def _comments(act: Act) -> list[dict[str, object]]:
    path = act.state / "github" / "comments.json"
    return json.loads(path.read_text()) if path.exists() else []


def test_the_comment_is_posted_for_a_pull_request_target_run(act: Act, scratch_repo: ScratchRepo) -> None:
    """workflow_run as GitHub sends it for pr-check.yml: head_sha is main's commit; the comment still posts,
    on pull request 7, and the check run is on the pull request's commit."""
    (act.state / "github" / "comments.json").unlink(missing_ok=True)
    (act.state / "github" / "check-runs.json").unlink(missing_ok=True)
    _pull_request(act, scratch_repo, scratch_repo.pr_sha)
    run_id = _check_artifacts(act, scratch_repo.pr_sha)
    event = pr_check_run_event(run_id, scratch_repo, scratch_repo.pr_sha, "failure")
    assert event["workflow_run"]["head_sha"] == scratch_repo.main_sha  # type: ignore[index]
    run = act.run("gates-comment", "workflow_run", event, workflow="pr-comment.yml")
    assert run.exit_code == 0, _explain(run)
    assert "Posted the dbperf comment on pull request #7" in run.summary("comment"), run.summary("comment")
    [comment] = _comments(act)
    assert comment["issue"] == PR_NUMBER and str(comment["body"]).startswith("<!-- dbperf-pr-check -->\n")
    assert f"head {scratch_repo.pr_sha[:12]}; rebuilt from verdicts.json" in str(comment["body"])
    [check] = json.loads((act.state / "github" / "check-runs.json").read_text())
    assert check["head_sha"] == scratch_repo.pr_sha


@pytest.mark.parametrize(
    ("case", "claimed", "moved", "said"),
    [
        ("artifact-claims-another-pr", {"claimed": 8}, False, "The artifact claims #8 at"),
        ("artifact-claims-another-commit", {"claimed_sha": "e" * 40}, False, "The artifact claims #7 at eeee"),
        ("pull-request-moved-on", {}, True, "Pull request #7 has moved on from"),
    ],
)
def test_the_comment_is_not_posted_when_the_run_does_not_match(
    act: Act, scratch_repo: ScratchRepo, case: str, claimed: dict[str, object], moved: bool, said: str
) -> None:
    (act.state / "github" / "comments.json").unlink(missing_ok=True)
    _pull_request(act, scratch_repo, "f" * 40 if moved else scratch_repo.pr_sha)
    run_id = _check_artifacts(act, scratch_repo.pr_sha, **claimed)  # type: ignore[arg-type]
    event = pr_check_run_event(run_id, scratch_repo, scratch_repo.pr_sha, "success")
    run = act.run(f"gates-comment-{case}", "workflow_run", event, workflow="pr-comment.yml")
    assert run.exit_code == 0, _explain(run)
    assert said in run.summary("comment"), run.summary("comment")
    assert _comments(act) == []


def test_bencher_uploads_a_pull_request_target_run_under_its_commit(act: Act, scratch_repo: ScratchRepo) -> None:
    _pull_request(act, scratch_repo, scratch_repo.pr_sha)
    run_id = _check_artifacts(act, scratch_repo.pr_sha)
    before = set((act.state / "bencher").glob("*")) if (act.state / "bencher").exists() else set()
    event = pr_check_run_event(run_id, scratch_repo, scratch_repo.pr_sha, "success")
    run = act.run(
        "gates-bencher", "workflow_run", event, workflow="bencher.yml", variables=BENCHER_VARS, secrets=SECRETS
    )
    assert run.exit_code == 0, _explain(run)
    [upload] = set((act.state / "bencher").glob("*")) - before
    argv = (upload / "argv.txt").read_text().split("\n")
    assert argv[argv.index("--branch") + 1] == f"pr-{PR_NUMBER}"
    assert argv[argv.index("--hash") + 1] == scratch_repo.pr_sha  # not main's commit, the run's head_sha
    assert argv[argv.index("--start-point-hash") + 1] == scratch_repo.main_sha
