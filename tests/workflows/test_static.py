"""What act cannot execute, read from the workflow files: concurrency, the sweep switch, token scoping.

act ignores ``concurrency`` and ``permissions`` and hands every secret to every job, so these rules
(found by reading the workflows while running them, see docs/workflow-tests.md) are checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

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
    for name in ("perf.yml", "bencher.yml"):
        assert not re.search(r"^concurrency:", text(name), re.M), name
    compare = text("perf.yml").split("\n  compare:\n", 1)[1].split("\n  record:\n", 1)[0]
    assert "group: perf-compare-${{ github.event.pull_request.number || github.run_id }}" in compare


def test_every_sweep_all_can_be_switched_off() -> None:
    sweeps = [s for s in steps("perf.yml") if "dbperf sweep --all" in s]
    assert len(sweeps) == 6  # before and after each of compare, record and fleet
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


def test_pr_comment_runs_no_code_and_writes_only_comments() -> None:
    comment = text("pr-comment.yml")
    assert "actions/checkout" not in comment and "secrets." not in comment
    assert re.search(r"^permissions: \{\}$", comment, re.M)
    assert "pull-requests: write" in comment and "contents:" not in comment
    assert "workflow_run:" in comment and "event == 'pull_request'" in comment


def test_nightly_change_points_fail_loudly() -> None:
    step = next(s for s in steps("perf.yml") if "name: Change points" in s)
    assert "dbperf changes" in step and "| tee" not in step  # a pipe hid the exit code before
    assert 'exit "$status"' in step


def test_record_exports_every_run_of_its_store() -> None:
    step = next(s for s in steps("perf.yml") if "name: Export BMF for Bencher" in s)
    assert "export bmf --all" in step
