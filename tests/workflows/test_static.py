"""What act cannot execute, read from the workflow files: concurrency, the sweep switch, token scoping.

act ignores ``concurrency`` and ``permissions`` and hands every secret to every job, so these rules
(found by reading the workflows while running them, see docs/workflow-tests.md) are checked here.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from _pytest.mark.expression import Expression

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"


def text(name: str) -> str:
    return (WORKFLOWS / name).read_text()


def steps(workflow: str) -> list[str]:
    """Each step of the workflow as its text (from its ``- `` line to the next step or job)."""
    out, current = [], []
    for line in text(workflow).splitlines():
        if re.match(r"^ {6}- ", line) or re.match(r"^ {2}\S", line):
            if current:
                out.append("\n".join(current))
            current = [line] if line.startswith("      - ") else []
        elif current:
            current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def test_no_workflow_level_concurrency_that_drops_runs() -> None:
    # an unrelated label cancelled a running check; push and nightly dropped each other; bencher
    # uploads were dropped while pending (GitHub keeps one pending run per group)
    for name in ("perf.yml", "pr-check.yml", "bencher.yml"):
        assert not re.search(r"^concurrency:", text(name), re.M), name
    compare = jobs("pr-check.yml")["compare"]
    assert "group: pr-check-${{ github.event.pull_request.number || github.run_id }}" in compare


def test_every_sweep_all_can_be_switched_off() -> None:
    sweeps = [s for w in ("perf.yml", "pr-check.yml") for s in steps(w) if "dbperf sweep --all" in s]
    assert len(sweeps) == 6  # before and after each of compare (pr-check.yml), record and fleet
    for step in sweeps:
        assert "vars.DBPERF_SWEEP != 'false'" in step, step


def test_bencher_token_only_in_bencher_yml_and_never_beside_a_checkout() -> None:
    for path in WORKFLOWS.glob("*.yml"):
        if path.name != "bencher.yml":
            assert "BENCHER_API_TOKEN" not in path.read_text(), path.name
    bencher = text("bencher.yml")
    assert "actions/checkout" not in bencher
    using = [s for s in steps("bencher.yml") if "secrets.BENCHER_API_TOKEN" in s]
    assert len(using) == 2  # "Check the configuration" (a boolean only) and "Upload"
    assert "secrets.BENCHER_API_TOKEN != ''" in using[0]
    assert "name: Upload\n" in using[1] + "\n"


def test_pr_comment_builds_the_comment_with_the_default_branchs_code() -> None:
    comment = text("pr-comment.yml")
    assert "secrets." not in comment
    assert re.search(r"^permissions: \{\}$", comment, re.M)
    assert "pull-requests: write" in comment and "contents: read" in comment and "contents: write" not in comment
    assert "workflow_run:" in comment and "workflows: [pr-check]" in comment
    assert "event == 'pull_request_target'" in comment
    # the only checkout is the default branch's, into its own folder, without credentials
    (checkout,) = [s for s in steps("pr-comment.yml") if "actions/checkout" in s]
    assert "ref: ${{ github.event.repository.default_branch }}" in checkout and "path: trusted" in checkout
    assert "persist-credentials: false" in checkout
    # the posted file is the one `dbperf ci comment` built from the verdicts, never the run's Markdown
    assert "PYTHONPATH=trusted .venv/bin/python -m harness.report.trusted_comment pr-comment/verdicts.json" in comment
    assert "--out comment.md" in comment
    assert "pr-comment/comment.md" not in comment
    # the check run: built by the same checked code from the same verdicts, posted with checks: write
    assert "checks: write" in comment
    assert "PYTHONPATH=trusted .venv/bin/python -m harness.report.check_run pr-comment/verdicts.json" in comment
    assert 'gh api --method POST "repos/$REPO/check-runs" --input check-run/create.json' in comment
    assert "comment.md" not in text("pr-check.yml").split("Collect the uploads")[1].split("Upload results")[0]


def test_nightly_change_points_fail_loudly() -> None:
    step = next(s for s in steps("perf.yml") if "name: Change points" in s)
    assert "dbperf changes" in step and "| tee" not in step  # a pipe hid the exit code before
    assert 'exit "$status"' in step


def test_record_exports_every_run_of_its_store() -> None:
    step = next(s for s in steps("perf.yml") if "name: Export BMF for Bencher" in s)
    assert "export bmf --all" in step


_MARKS_PLUGIN = """
import json, os

def pytest_collection_finish(session):
    with open(os.environ["DBPERF_MARKS_OUT"], "w") as out:
        json.dump({item.nodeid: sorted({m.name for m in item.iter_markers()}) for item in session.items}, out)
"""


def test_ci_yml_runs_every_test(tmp_path: Path) -> None:
    # test_trend_site.py was marked only `browser`, and no job of ci.yml selected it. One collection
    # of the whole suite, then each ci.yml pytest command's paths and -m expression applied to it.
    (tmp_path / "dbperf_marks.py").write_text(_MARKS_PLUGIN)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "DBPERF_MARKS_OUT": str(tmp_path / "marks.json")}
    repo = WORKFLOWS.parents[1]
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "dbperf_marks"]
    out = subprocess.run([*argv, "tests"], check=False, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    marks: dict[str, list[str]] = json.loads((tmp_path / "marks.json").read_text())
    commands = re.findall(r"\.venv/bin/pytest ([^\n]+)", text("ci.yml"))
    assert commands
    selected: set[str] = set()
    for command in commands:
        words = shlex.split(command)
        expression = Expression.compile(words[words.index("-m") + 1]) if "-m" in words else None
        paths = [w for w in words if w.startswith("tests")]
        for nodeid, names in marks.items():
            under = any(nodeid.startswith((p.rstrip("/") + "/", p + "::")) for p in paths)
            if under and (expression is None or expression.evaluate(lambda name, names=names: name in names)):
                selected.add(nodeid)
    missing = sorted(set(marks) - selected)
    files = sorted({nodeid.split("::")[0] for nodeid in missing})
    assert not missing, f"{len(missing)} tests no ci.yml job selects, in {files}"


# -- the trust boundary: pull-request code never reaches a trusted runner or a secret -------------------------


def jobs(workflow: str) -> dict[str, str]:
    """Each job of the workflow as its text, by id."""
    body = text(workflow).split("\njobs:\n", 1)[1]
    found = {}
    for chunk in re.split(r"\n(?=  [A-Za-z0-9_-]+:\n)", "\n" + body):
        match = re.match(r"\n?  ([A-Za-z0-9_-]+):\n", chunk)
        if match:
            found[match.group(1)] = chunk
    return found


def triggers(workflow: str) -> set[str]:
    head = text(workflow).split("\non:\n", 1)[1].split("\npermissions:", 1)[0]
    return set(re.findall(r"^  ([a-z_]+):", head, re.M))


def runs_on(job: str) -> list[str]:
    match = re.search(r"^    runs-on: \[([^\]]*)\]|^    runs-on: (\S+)", job, re.M)
    assert match, job[:200]
    raw = match.group(1) if match.group(1) is not None else match.group(2)
    return [label.strip().strip('"') for label in raw.split(",")]


PULL_REQUEST_EVENTS = {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}


def test_no_pull_request_code_reaches_a_trusted_runner() -> None:
    """A workflow a pull request triggers runs on the untrusted label only; the trusted label serves
    workflows no pull request triggers (perf.yml: push, schedule, dispatch)."""
    seen = {"dbperf-pr": 0, "dbperf-trusted": 0}
    for path in sorted(WORKFLOWS.glob("*.yml")):
        on_pull_requests = bool(triggers(path.name) & PULL_REQUEST_EVENTS)
        for job_id, job in jobs(path.name).items():
            labels = runs_on(job)
            if "self-hosted" not in labels:
                continue
            where = f"{path.name}:{job_id} runs-on {labels}"
            assert ("dbperf-pr" in labels) != ("dbperf-trusted" in labels), where
            seen["dbperf-pr" if "dbperf-pr" in labels else "dbperf-trusted"] += 1
            if on_pull_requests:
                assert "dbperf-pr" in labels, where
            if "dbperf-trusted" in labels:
                assert not on_pull_requests, where
    assert seen["dbperf-pr"] == 1 and seen["dbperf-trusted"] == 3, seen
    assert triggers("perf.yml") == {"push", "schedule", "workflow_dispatch"}
    # the fork gate lives in the default branch's file: pull_request_target, never pull_request
    assert triggers("pr-check.yml") == {"pull_request_target", "workflow_dispatch"}
    for path in WORKFLOWS.glob("*.yml"):  # ci.yml's pull_request jobs run on GitHub's machines only
        if any("self-hosted" in runs_on(job) for job in jobs(path.name).values()):
            assert "pull_request" not in triggers(path.name), path.name


def test_the_pull_request_job_holds_no_secret_and_no_write_token() -> None:
    check = text("pr-check.yml")
    assert "secrets." not in check and "environment:" not in check
    assert re.search(r"^permissions: \{\}$", check, re.M)
    compare = jobs("pr-check.yml")["compare"]
    assert re.search(r"^    permissions:\n      contents: read\n    env:", compare, re.M), compare
    assert "persist-credentials: false" in compare and "actions/cache" not in check
    # exactly the commit the gate let through, checked after the checkout
    assert "ref: ${{ needs.gate.outputs.sha }}" in compare and "needs: gate" in compare
    assert '[ "$head" = "$SHA" ]' in compare
    # forks only with the label a maintainer adds, on a head a maintainer approved; the same
    # repository's branches at once. The gate runs on GitHub's machines and may only read reviews.
    gate = jobs("pr-check.yml")["gate"]
    assert "github.event.label.name == 'perf'" in gate
    assert "github.event.pull_request.head.repo.full_name == github.repository" in gate
    assert runs_on(gate) == ["ubuntu-24.04"]
    assert re.search(r"^    permissions:\n      pull-requests: read #[^\n]*\n    outputs:", gate, re.M), gate
    assert '$2 == "APPROVED" && $3 == sha' in gate and "admin|maintain|write" in gate
    # what the run checked is GitHub's record (run-name), read by the trusted jobs instead of head_sha
    run_name = "format('pr-check #{0} at {1}', github.event.pull_request.number, github.event.pull_request.head.sha)"
    assert run_name in check
    for name in ("pr-comment.yml", "bencher.yml"):
        assert "title='^pr-check #([0-9]{1,9}) at ([0-9a-f]{40})$'" in text(name), name
    assert "workflow_run.head_sha" not in text("pr-comment.yml").split("permissions: {}")[1]


def test_secrets_only_in_jobs_bound_to_an_environment() -> None:
    """zizmor's secrets-outside-env, as a test: a secret is only read by a job whose environment the
    repository limits to the default branch (fleet-store, bencher)."""
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for job_id, job in jobs(path.name).items():
            if re.search(r"secrets\.(?!GITHUB_TOKEN)", job):
                match = re.search(r"^    environment: ?([A-Za-z0-9_-]*)", job, re.M)
                assert match and match.group(1) in {"fleet-store", "bencher"}, f"{path.name}:{job_id}"


def test_container_images_pinned_by_digest() -> None:
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for image in re.findall(r"^\s+image: (\S+)", path.read_text(), re.M):
            assert re.fullmatch(r"[a-z0-9./_-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}", image), f"{path.name}: {image}"
