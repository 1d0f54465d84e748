"""The real workflow files, executed offline by act on this host against a real local MariaDB.

Four events, as GitHub would send them (tests/support/workflows.py builds the payloads and the
scratch repository, tests/support/actrun.py runs act hermetically):

* ``pull_request`` that changes ``servers/conf/mariadb.cnf`` -> perf.yml's A/B check: plan, interleaved
  runs, a regression (exit 1), the job summary, the artifacts; then pr-comment.yml posts ONE sticky
  comment and updates it, and bencher.yml uploads the head side to branch ``pr-7``;
* ``push`` to main -> record (history), report, BMF of every scenario, trend site deployed; bencher.yml;
* ``schedule`` -> the nightly: full profile, and change points that really run over every series of
  the history (a seeded history with a known step is found);
* the Bencher token reaches the upload step of bencher.yml only, never a job that runs repository code.

Runs are short (2 s measured, 1 s warm-up, 2 threads, timing only, small datasets) but real.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.actrun import Act, ActRun
from support.factories import make_testbed
from support.workflows import (
    BENCHER_SENTINEL,
    PR_BRANCH,
    PR_NUMBER,
    ScratchRepo,
    pr_check_run_event,
    pull_request_event,
    push_event,
    schedule_event,
    workflow_run_event,
)

from harness.model import Metrics, RunResult, Totals
from harness.store import Store

pytestmark = [pytest.mark.integration, pytest.mark.workflows]

BENCHER_VARS = {"BENCHER_PROJECT": "dbperf-test", "BENCHER_TESTBED": "act-runner"}
SECRETS = {"BENCHER_API_TOKEN": BENCHER_SENTINEL}
PUSH_SCENARIOS = ("oltp_point_select", "oltp_read_only")
MARKER = "<!-- dbperf-pr-check -->"
#: What conftest's pull request changes in servers/conf/mariadb.cnf: (file, setting, old, new, status, line)
CNF_CHANGES = [
    ("servers/conf/mariadb.cnf", "innodb_buffer_pool_size", "512M", "6M", "changed", 5),
    ("servers/conf/mariadb.cnf", "innodb_flush_method", "", "O_DIRECT", "added", 6),
]


def _explain(run: ActRun) -> str:
    return f"act {run.name} exit {run.exit_code} after {run.seconds:.0f} s; jobs {run.jobs}\n{run.tail(120)}"


def _pr_fixture(state: Path, sha: str, head_sha: str) -> None:
    """The GitHub API's answer for pull request 7 (the gh shim serves it)."""
    path = state / "github" / "repos" / "acme" / "dbperf" / "pulls" / f"{PR_NUMBER}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"number": PR_NUMBER, "head": {"sha": head_sha, "ref": PR_BRANCH}, "base": {"sha": sha, "ref": "main"}}
    path.write_text(json.dumps(doc))


# -- runs (each event once per session; the tests below assert on what they left) ----------------


def _approved(state: Path, sha: str) -> None:
    """A maintainer (write access) approved ``sha`` in a review of pull request 7 (the gh shim serves it)."""
    api = state / "github" / "repos" / "acme" / "dbperf"
    review = {"id": 1, "user": {"login": "maintainer"}, "state": "APPROVED", "commit_id": sha}
    for path, answer in (
        (api / "pulls" / str(PR_NUMBER) / "reviews.json", [review]),
        (api / "collaborators" / "maintainer" / "permission.json", {"permission": "write"}),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(answer))


@pytest.fixture(scope="module", autouse=True)
def uploads_before(act: Act) -> set[Path]:
    """The stand-in Bencher's uploads that other files' tests made on this worker's act state, before this
    file's first: the token checks below are about this file's uploads only."""
    return set((act.state / "bencher").glob("*"))


@pytest.fixture(scope="module")
def pr_run(act: Act, scratch_repo: ScratchRepo, quick_env: dict[str, str], common_vars: dict[str, str]) -> ActRun:
    _approved(act.state, scratch_repo.pr_sha)
    scratch_repo.checkout(PR_BRANCH)
    try:
        # a fork's pull request, labelled `perf` by a maintainer on the head they approved: the gate lets
        # that commit through, and the check runs it, on the untrusted label
        return act.run(
            "pull-request",
            "pull_request_target",
            pull_request_event(scratch_repo, fork=True, label="perf"),
            workflow="pr-check.yml",
            variables={**common_vars, "DBPERF_SCENARIO": "oltp_point_select"},
            secrets=SECRETS,
            # as in production, the plan decides what each comparison measures: cost (instructions and
            # the work vector under callgrind) decides this change on any machine; timing is left out
            env={k: v for k, v in quick_env.items() if k != "DBPERF_COST"},
            timeout_s=1800,
        )
    finally:
        scratch_repo.checkout("main")


@pytest.fixture(scope="module")
def push_run(act: Act, scratch_repo: ScratchRepo, quick_env: dict[str, str], common_vars: dict[str, str]) -> ActRun:
    return act.run(
        "push",
        "push",
        push_event(scratch_repo),
        workflow="perf.yml",
        variables={**common_vars, "DBPERF_SCENARIO": ",".join(PUSH_SCENARIOS)},
        secrets=SECRETS,
        env={**quick_env, "DBPERF_REPETITIONS": "2"},
        timeout_s=1800,
    )


SEEDED_COMMITS = 12
SEEDED_STEP = 6


def _seeded_run(commit: int, rep: int, qps: float) -> RunResult:
    at = datetime(2026, 10, 1, 2, 17, tzinfo=UTC) + timedelta(days=commit, minutes=rep)
    events = int(qps * 60)
    return RunResult(
        run_id=f"seed-{commit:02d}-{rep}",
        started_at=at,
        finished_at=at + timedelta(seconds=70),
        status="ok",
        server="mariadb-local",
        flavour="mariadb",
        provider="local",
        server_version="10.11.14-MariaDB",
        config_hash="seeded",
        scenario="oltp_point_select",
        scenario_hash="seeded",
        profile="full",
        script="oltp_point_select",
        threads=2,
        repetition=rep,
        warmup_s=10,
        time_s=60,
        testbed=make_testbed(cpu_model="seed CPU", hostname="seed"),
        git_sha=f"{commit:02d}" + "5eed" * 9 + "ab",
        group_id=f"seed-{commit:02d}",
        totals=Totals(time_s=60.0, events=events, reads=events, writes=0, other=0, errors=0, reconnects=0),
        metrics=Metrics(qps=qps, tps=qps, p50_ms=0.2, p95_ms=0.4, p99_ms=0.6, cpu_per_txn=400_000.0 / qps),
    )


def _seed_history(home: Path) -> None:
    """Twelve nightly commits of oltp_point_select (full profile, 2 threads): QPS drops 20 % at the 7th."""
    runs = [
        _seeded_run(commit, rep, (8000.0 if commit < SEEDED_STEP else 6400.0) * (1 + 0.004 * rep))
        for commit in range(SEEDED_COMMITS)
        for rep in (1, 2)
    ]
    Store(home / "history" / "dbperf.duckdb").save_many(runs)


@pytest.fixture(scope="module")
def schedule_run(act: Act, push_run: ActRun, quick_env: dict[str, str], common_vars: dict[str, str]) -> ActRun:
    del push_run  # the history then also holds the push's ci-profile runs: they must not join full series
    _seed_history(Path(common_vars["DBPERF_HOME"]))
    return act.run(
        "schedule",
        "schedule",
        schedule_event(),
        workflow="perf.yml",
        variables={**common_vars, "DBPERF_SCENARIO": "oltp_point_select", "DBPERF_NIGHTLY_SERVER": "mariadb-local"},
        secrets=SECRETS,
        env={**quick_env, "DBPERF_REPETITIONS": "2"},
        timeout_s=1800,
    )


# -- pull request --------------------------------------------------------------------------------


def test_pull_request_ab_check_fails_on_the_regression(pr_run: ActRun) -> None:
    assert pr_run.exit_code == 1, _explain(pr_run)
    assert pr_run.jobs == {"gate": "success", "compare": "failure"}, _explain(pr_run)
    summary = pr_run.summary("compare")
    assert "## dbperf performance check" in summary, summary
    assert "🔴 **Performance regression**" in summary
    # QPS and CPU per transaction are noisy on a loaded machine (both were inconclusive at load 12); the
    # server's instructions per transaction show this change (+5 % at the 6 MB buffer pool) every time
    assert re.search(r"\| oltp_point_select \| 1 \| instructions/txn \|.*🔴 regression", summary), summary
    assert "mariadb-local@base" in summary and "](site/png/" not in summary  # no broken images
    # charts a job summary renders: Mermaid, one per judged metric and one per flame graph, none empty
    blocks = [b.split("```")[0] for b in summary.split("```mermaid\n")[1:]]
    assert len(blocks) >= 2 and all(re.search(r"^    bar \[[^\]\s]", b, re.MULTILINE) for b in blocks), summary
    assert "`flamegraph-oltp_point_select-1t.svg` in the `perf-results` artifact" in summary


def test_pull_request_artifacts(pr_run: ActRun, scratch_repo: ScratchRepo) -> None:
    results = pr_run.artifact("perf-results")
    for name in ("report.md", "comment.md", "verdicts.json", "plan.json", "bmf.json", "dbperf.duckdb"):
        assert (results / name).is_file(), f"{name} missing from perf-results: {sorted(results.iterdir())}"
    assert list((results / "site" / "png").glob("*.png")), "charts missing"
    assert (results / "flamegraph-oltp_point_select-1t.svg").read_text().startswith("<svg "), "flame graph missing"
    plan = json.loads((results / "plan.json").read_text())
    assert [(c["base_server"], c["head_server"], c["scenario"]) for c in plan["comparisons"]] == [
        ("mariadb-local@base", "mariadb-local", "oltp_point_select")
    ]
    # the buffer pool and the flush method change what cost runs count (buffer-pool reads, writes and
    # fsyncs per transaction): cost judges them, and the plan says why timing was left out
    assert plan["comparisons"][0]["kinds"] == ["cost"]
    assert [line.split(": ")[0] for line in plan["left_out"]] == ["timing on mariadb-local oltp_point_select"]
    assert plan["estimate"]["cost_s"] > 0 and plan["estimate"]["time_s"] == 0
    verdicts = {v["kind"]: v for v in json.loads((results / "verdicts.json").read_text())["verdicts"]}
    assert set(verdicts) == {"cost"}
    cost = {m["metric"]: m for m in verdicts["cost"]["metrics"]}
    assert verdicts["cost"]["outcome"] == "regression"
    assert cost["instr_per_txn"]["outcome"] == "regression" and cost["instr_per_txn"]["estimate_pct"] > 1
    bmf = json.loads((pr_run.artifact("bmf") / "bmf.json").read_text())
    assert sorted(bmf) == ["mariadb-local/oltp_point_select/ci/1t/cost"]
    assert (pr_run.artifact("bmf") / "pr-number.txt").read_text().strip() == str(PR_NUMBER)
    # the comment's data only: the trusted job builds the Markdown (never this run)
    uploaded = sorted(p.name for p in pr_run.artifact("pr-comment").iterdir())
    assert uploaded == ["head-sha.txt", "pr-number.txt", "verdicts.json"], uploaded
    # what was checked: the commit the gate let through, which the trusted jobs compare with the run's title
    assert (pr_run.artifact("pr-comment") / "head-sha.txt").read_text().strip() == scratch_repo.pr_sha
    # the change under test, setting by setting, with its line in the pull request's my.cnf
    changes = json.loads((results / "verdicts.json").read_text())["changes"]
    assert [(c["file"], c["name"], c["old"], c["new"], c["status"], c["line"]) for c in changes] == CNF_CHANGES
    comment = (results / "comment.md").read_text()
    assert "- `innodb_buffer_pool_size`: `512M` → `6M` (`servers/conf/mariadb.cnf` line 5, [mysqld])" in comment


def test_pull_request_results_stay_out_of_the_history(pr_run: ActRun, common_vars: dict[str, str]) -> None:
    assert pr_run.exit_code in (0, 1), _explain(pr_run)
    home = Path(common_vars["DBPERF_HOME"])
    assert (home / "cache-pr").is_dir(), "the A/B check should use the pull-request dataset cache"
    history = home / "history" / "dbperf.duckdb"
    if history.exists():
        assert not [r for r in Store(history).runs() if r.label in ("base", "head") or "@" in r.server]


def _nothing_ran(run: ActRun) -> bool:
    """No job ran: every job was skipped (its condition, or no runner with its label), or the workflow
    has no job for the event at all (act then says so and exits 1)."""
    no_stage = "Could not find any stages to run" in run.log
    return run.jobs == {} and (run.exit_code == 0 or no_stage) and "Run Main" not in run.log


def test_a_forks_pull_request_runs_only_on_the_untrusted_label(
    act: Act, pr_run: ActRun, scratch_repo: ScratchRepo, common_vars: dict[str, str]
) -> None:
    """Every workflow file, as GitHub would pick them for a fork's pull request: unlabelled, nothing runs;
    on a machine that is only the trusted runner, nothing runs even with the label; labelled, only the
    A/B check runs, on `dbperf-pr` (pr_run). ci.yml's pull-request jobs run on GitHub's machines and
    pull a container image, so act leaves it out; the static tests check its runners."""
    assert pr_run.jobs == {"gate": "success", "compare": "failure"}, _explain(pr_run)
    workflows = sorted(
        p.name for p in (scratch_repo.path / ".github" / "workflows").glob("*.yml") if p.name != "ci.yml"
    )
    assert "pr-check.yml" in workflows and "perf.yml" in workflows
    scratch_repo.checkout(PR_BRANCH)
    try:
        for event in ("pull_request", "pull_request_target"):
            for workflow in workflows:
                # act runs a job when ANY of its labels has a runner (GitHub: ALL of them), so each
                # machine is given by the one label that tells the runners apart
                unlabelled = act.run(
                    f"fork-{event}-{workflow}-unlabelled", event, pull_request_event(scratch_repo, fork=True),
                    workflow=workflow, variables=common_vars, only_labels=("dbperf-pr", "dbperf-trusted"),
                    timeout_s=600,
                )  # fmt: skip
                assert _nothing_ran(unlabelled), _explain(unlabelled)
                trusted_only = act.run(
                    f"fork-{event}-{workflow}-trusted-machine", event,
                    pull_request_event(scratch_repo, fork=True, label="perf"), workflow=workflow,
                    variables=common_vars, only_labels=("dbperf-trusted",), timeout_s=600,
                )  # fmt: skip
                assert _nothing_ran(trusted_only), _explain(trusted_only)
    finally:
        scratch_repo.checkout("main")


def test_pr_comment_is_posted_once_and_updated(
    act: Act, pr_run: ActRun, scratch_repo: ScratchRepo, common_vars: dict[str, str]
) -> None:
    _pr_fixture(act.state, scratch_repo.main_sha, scratch_repo.pr_sha)
    # as GitHub sends it: head_sha is main's commit; the pull request and its commit are in the run's title
    event = pr_check_run_event(pr_run.run_id, scratch_repo, scratch_repo.pr_sha, "failure")
    comments_file = act.state / "github" / "comments.json"
    comments_file.unlink(missing_ok=True)
    (act.state / "github" / "check-runs.json").unlink(missing_ok=True)
    first = act.run("comment-1", "workflow_run", event, workflow="pr-comment.yml", secrets=SECRETS)
    assert first.exit_code == 0, _explain(first)
    comments = json.loads(comments_file.read_text())
    assert len(comments) == 1
    body = comments[0]["body"]
    assert comments[0]["issue"] == PR_NUMBER and comments[0]["user"]["login"] == "github-actions[bot]"
    # built here from verdicts.json with the default branch's dbperf: the run's own comment.md has the same
    # rows (but for the reasons' words, which the trusted job rebuilds from the numbers)
    assert body.startswith(MARKER + "\n") and "rebuilt from verdicts.json by the trusted comment job" in body
    assert f"https://github.com/acme/dbperf/actions/runs/{pr_run.run_id}" in body
    assert "`flamegraph-oltp_point_select-1t.svg`" in body  # the flame graph, linked to the run's artifact
    own = (pr_run.artifact("perf-results") / "comment.md").read_text()

    def rows(markdown: str) -> list[list[str]]:
        return [r.split(" | ")[:-1] for r in markdown.splitlines() if r.startswith("| ") and "---" not in r]

    assert rows(body) == rows(own) and rows(body), (body, own)
    assert "Posted the dbperf comment on pull request #7" in first.summary("comment")
    # it leads with the largest change in words, the change under test, the worst verdict per scenario, then
    # why: the metrics that moved and (instructions moved) the functions
    change = body.index("- `innodb_buffer_pool_size`: `512M` → `6M` (`servers/conf/mariadb.cnf` line 5, [mysqld])")
    assert body.index("Largest regression: ") < change
    assert change < body.index("**Worst verdict per scenario**") < body.index("**Why**")
    assert re.search(
        r"\| oltp_point_select \| 1 \| function `[^`|]+` \([+-]\d+ % of the change\) \| [0-9,]+ \| [0-9,]+ "
        r"\| [+-][0-9,]+ /txn \|",
        body,
    ), body
    # and the check run on the measured commit: one annotation per regressed metric on each changed line
    [check] = json.loads((act.state / "github" / "check-runs.json").read_text())
    assert (check["head_sha"], check["conclusion"], check["repo"]) == (scratch_repo.pr_sha, "failure", "acme/dbperf")
    annotations = check["output"]["annotations"]
    regressed = [
        (v["scenario"], m["metric"])
        for v in json.loads((pr_run.artifact("pr-comment") / "verdicts.json").read_text())["verdicts"]
        for m in v["metrics"]
        if m["gating"] and m["outcome"] == "regression"
    ]
    assert ("oltp_point_select", "instr_per_txn") in regressed
    assert len(annotations) == 2 * len(regressed)  # each regression on both changed lines
    assert sorted({(a["path"], a["start_line"], a["end_line"]) for a in annotations}) == [
        ("servers/conf/mariadb.cnf", 5, 5),
        ("servers/conf/mariadb.cnf", 6, 6),
    ]
    cost = next(a for a in annotations if "instructions/txn" in a["message"] and a["start_line"] == 5)
    assert cost["annotation_level"] == "failure"
    assert re.fullmatch(
        r"oltp_point_select 1t \(cost\), mariadb-local@base → mariadb-local: instructions/txn \+\d+\.\d %, "
        r"95 % CI \[\+\d+\.\d, \+\d+\.\d\] %: regression beyond the [\d.]+ % minimum effect\. "
        r"Changed here: innodb_buffer_pool_size 512M → 6M",
        cost["message"],
    ), cost["message"]
    assert f"Reported check run {check['id']} with {len(annotations)} annotation(s)" in first.summary("comment")
    # the next push's run: the same comment is updated, not a second one added
    second = act.run("comment-2", "workflow_run", event, workflow="pr-comment.yml", secrets=SECRETS)
    assert second.exit_code == 0, _explain(second)
    comments = json.loads(comments_file.read_text())
    assert len(comments) == 1 and comments[0].get("updated") == 1
    assert "Updated the dbperf comment" in second.summary("comment")
    calls = [(c["method"], c["path"].split("/")[-1]) for c in second.github_calls() if c.get("tool") == "gh"]
    assert calls == [("GET", "7"), ("GET", "comments"), ("PATCH", "9000"), ("POST", "check-runs")], calls
    # a run of a commit the pull request has moved on from never overwrites the comment
    _pr_fixture(act.state, scratch_repo.main_sha, "f" * 40)
    stale = act.run("comment-stale", "workflow_run", event, workflow="pr-comment.yml", secrets=SECRETS)
    assert stale.exit_code == 0, _explain(stale)
    assert "has moved on" in stale.summary("comment")
    assert json.loads(comments_file.read_text())[0].get("updated") == 1
    del common_vars


def test_bencher_upload_of_the_pull_request(
    act: Act, pr_run: ActRun, scratch_repo: ScratchRepo, common_vars: dict[str, str]
) -> None:
    _pr_fixture(act.state, scratch_repo.main_sha, scratch_repo.pr_sha)
    # as GitHub sends it: head_sha is main's commit; the pull request and its commit are in the run's title
    event = pr_check_run_event(pr_run.run_id, scratch_repo, scratch_repo.pr_sha, "failure")
    before = set((act.state / "bencher").glob("*")) if (act.state / "bencher").exists() else set()
    run = act.run("bencher-pr", "workflow_run", event, workflow="bencher.yml", variables=BENCHER_VARS, secrets=SECRETS)
    assert run.exit_code == 0, _explain(run)
    [upload] = set((act.state / "bencher").glob("*")) - before
    argv = (upload / "argv.txt").read_text().split("\n")
    assert argv[argv.index("--branch") + 1] == f"pr-{PR_NUMBER}"
    assert argv[argv.index("--start-point-hash") + 1] == scratch_repo.main_sha
    assert sorted(json.loads((upload / "bmf.json").read_text())) == ["mariadb-local/oltp_point_select/ci/1t/cost"]
    del common_vars


# -- push to main -------------------------------------------------------------------------------


def test_push_records_history_and_every_scenario_for_bencher(
    act: Act, push_run: ActRun, scratch_repo: ScratchRepo, common_vars: dict[str, str]
) -> None:
    assert push_run.exit_code == 0, _explain(push_run)
    assert push_run.jobs == {"record": "success", "pages": "success"}, _explain(push_run)
    summary = push_run.summary("record")
    assert "## dbperf history run (ci profile)" in summary, summary
    for scenario in PUSH_SCENARIOS:
        assert re.search(rf"\| {scenario} \| `mariadb-local` \| 2 \| 2 \|", summary), summary
    history = Store(Path(common_vars["DBPERF_HOME"]) / "history" / "dbperf.duckdb")
    recorded = [r for r in history.runs() if r.git_sha == scratch_repo.main_sha and r.profile == "ci"]
    assert sorted({r.scenario for r in recorded}) == sorted(PUSH_SCENARIOS) and len(recorded) == 4
    bmf = json.loads((push_run.artifact("bmf") / "bmf.json").read_text())
    assert sorted(bmf) == [f"mariadb-local/{s}/ci/2t" for s in sorted(PUSH_SCENARIOS)]
    assert (push_run.pages() / "index.html").is_file()
    # bencher.yml, for this run: every scenario reaches Bencher, on branch main, with thresholds
    event = workflow_run_event(push_run.run_id, "push", "main", scratch_repo.main_sha, "success")
    before = set((act.state / "bencher").glob("*")) if (act.state / "bencher").exists() else set()
    upload_run = act.run(
        "bencher-push", "workflow_run", event, workflow="bencher.yml", variables=BENCHER_VARS, secrets=SECRETS
    )
    assert upload_run.exit_code == 0, _explain(upload_run)
    [upload] = set((act.state / "bencher").glob("*")) - before
    assert sorted(json.loads((upload / "bmf.json").read_text())) == sorted(bmf)
    argv = (upload / "argv.txt").read_text().split("\n")
    assert argv[argv.index("--branch") + 1] == "main" and "--thresholds-reset" in argv


# -- nightly ------------------------------------------------------------------------------------


def test_nightly_change_points_run_over_every_series(schedule_run: ActRun) -> None:
    assert schedule_run.exit_code == 0, _explain(schedule_run)
    assert schedule_run.jobs == {"record": "success", "pages": "success"}, _explain(schedule_run)
    summary = schedule_run.summary("record")
    assert "## dbperf history run (full profile)" in summary
    changes = (schedule_run.artifact("perf-results") / "changes.txt").read_text()
    assert "### Change points" in summary and changes.strip() in summary
    # the seeded series plus tonight's commit, full profile only (the push's ci runs are another series)
    found = re.search(r"mariadb-local oltp_point_select full 2t: (\d+) commit\(s\), (\d+) change point\(s\)", changes)
    assert found, changes
    assert int(found.group(1)) == SEEDED_COMMITS + 1 and int(found.group(2)) >= 1, changes
    assert " ci " not in changes and "/ci/" not in changes, changes
    assert re.search(r"change points \(alpha 0\.01\)", changes), changes
    bmf = json.loads((schedule_run.artifact("bmf") / "bmf.json").read_text())
    assert list(bmf) == ["mariadb-local/oltp_point_select/full/2t"]


# -- the token ---------------------------------------------------------------------------------


def test_bencher_token_only_in_the_upload_step(
    act: Act,
    pr_run: ActRun,
    push_run: ActRun,
    schedule_run: ActRun,
    scratch_repo: ScratchRepo,
    uploads_before: set[Path],
) -> None:
    """Every step of every job got the token as an act secret; only bencher.yml's Upload step may see it."""
    event = workflow_run_event(schedule_run.run_id, "schedule", "main", scratch_repo.main_sha, "success")
    bencher = act.run(
        "bencher-schedule", "workflow_run", event, workflow="bencher.yml", variables=BENCHER_VARS, secrets=SECRETS
    )
    assert bencher.exit_code == 0, _explain(bencher)
    seen = []
    for run in (pr_run, push_run, schedule_run, bencher):
        steps = run.step_envs()
        assert steps, f"no step environments saved for {run.name}"
        seen += [(run.name, s.job) for s in steps if BENCHER_SENTINEL in "\n".join(s.variables.values())]
    assert seen == [("bencher-schedule", "upload")], seen
    uploads = sorted(d / "token.txt" for d in set((act.state / "bencher").glob("*")) - uploads_before)
    assert uploads and all(t.read_text().strip() == f"token-length={len(BENCHER_SENTINEL)}" for t in uploads)
    shutil.rmtree(act.state / "act-cache", ignore_errors=True)
