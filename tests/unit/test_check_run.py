"""The check run the trusted job posts (pr-comment.yml): conclusion, summary, one annotation per regression
on the changed line, batches of 50, and the same refusals as the comment for a forged verdicts.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.comments import SHA, change_document

from harness.errors import ReportError
from harness.report.check_run import PER_REQUEST, build_check_run

RUN_URL = "https://github.com/acme/dbperf/actions/runs/1001"


def test_one_annotation_on_the_changed_line_naming_scenario_metric_change_and_interval() -> None:
    [create] = build_check_run(json.dumps(change_document()), sha=SHA, run_url=RUN_URL)
    assert (create["name"], create["head_sha"], create["status"], create["conclusion"]) == (
        "dbperf performance check", SHA, "completed", "failure"
    )  # fmt: skip
    assert create["details_url"] == RUN_URL
    output = create["output"]
    assert isinstance(output, dict)
    assert output["title"].startswith("Performance regression: 1 regression, 1 inconclusive, 1 pass")
    assert output["annotations"] == [
        {
            "path": "servers/conf/mariadb.cnf",
            "start_line": 8,
            "end_line": 8,
            "annotation_level": "failure",
            "title": "Performance regression: oltp_insert instructions/txn",
            "message": "oltp_insert 1t (cost), mariadb-local@base → mariadb-local: instructions/txn +12.3 %, "
            "95 % CI [+12.2, +12.4] %: regression beyond the 2 % minimum effect. "
            "Changed here: performance_schema (unset) → ON",
        }
    ]
    assert "- `performance_schema` = `ON` added (`servers/conf/mariadb.cnf` line 8, [mysqld])" in output["summary"]
    assert f"[Full report, verdicts and charts]({RUN_URL})" in output["summary"]


def test_a_regression_without_a_changed_line_is_listed_in_the_summary() -> None:
    doc = change_document()
    doc["changes"][0]["line"] = None  # type: ignore[index]  # a removed setting has no line at head
    [create] = build_check_run(json.dumps(doc), sha=SHA)
    output = create["output"]
    assert isinstance(output, dict) and output["annotations"] == []
    assert "**Regressions not tied to a changed line**" in output["summary"]
    assert "- oltp_insert 1t (cost), mariadb-local@base → mariadb-local: instructions/txn +12.3 %" in output["summary"]


def test_more_than_50_annotations_go_in_batches() -> None:
    doc = change_document()
    cost = doc["verdicts"][0]  # type: ignore[index]
    doc["verdicts"] = [{**cost, "scenario": f"scenario_{i:03d}"} for i in range(2 * PER_REQUEST + 3)]
    requests = build_check_run(json.dumps(doc), sha=SHA)
    sizes = [len(r["output"]["annotations"]) for r in requests]  # type: ignore[index]
    assert sizes == [PER_REQUEST, PER_REQUEST, 3]
    assert "head_sha" in requests[0] and all(set(r) == {"output"} for r in requests[1:])


def test_conclusions() -> None:
    doc = change_document()
    doc["verdicts"] = [doc["verdicts"][2]]  # type: ignore[index]  # the read that passes
    assert build_check_run(json.dumps(doc), sha=SHA)[0]["conclusion"] == "success"
    doc["verdicts"] = []
    [create] = build_check_run(json.dumps(doc), sha=SHA)
    assert create["conclusion"] == "neutral" and create["output"]["annotations"] == []  # type: ignore[index]


def test_forged_files_and_bad_arguments_are_refused(tmp_path: Path) -> None:
    doc = change_document()
    doc["changes"][0]["file"] = "../.github/workflows/pr-check.yml"  # type: ignore[index]
    with pytest.raises(ReportError, match="not a file under servers/"):
        build_check_run(json.dumps(doc), sha=SHA)
    with pytest.raises(ReportError, match="full commit id"):
        build_check_run(json.dumps(change_document()), sha="HEAD")
    with pytest.raises(ReportError, match="--run-url"):
        build_check_run(json.dumps(change_document()), sha=SHA, run_url="https://evil.example/actions/runs/1")
    # the module entry point the job runs, with the comment builder's dependencies only
    (tmp_path / "verdicts.json").write_text(json.dumps(change_document()))
    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-m", "harness.report.check_run", str(tmp_path / "verdicts.json"), "--sha", SHA,
         "--out", str(tmp_path / "check")],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (tmp_path / "check").iterdir()) == ["create.json"]
    assert json.loads((tmp_path / "check" / "create.json").read_text())["head_sha"] == SHA
