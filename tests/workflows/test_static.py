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
