"""The comment the trusted job rebuilds from an untrusted run's verdicts.json (pr-comment.yml).

Golden files pin the rebuilt comment per outcome; every field a pull request's code could forge is
either checked (names, enums, numbers) or dropped (free text), and anything else refuses the file.
Regenerate the golden files with ``DBPERF_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from support.comments import RUN_URL, SHA, change_document
from support.reports import CASES, check, check_golden

from harness.errors import ReportError
from harness.model.verdict_document import VerdictDocument, dump_document
from harness.report.comment import MARKER
from harness.report.trusted_comment import build_comment


def document(case: str) -> dict[str, object]:
    """verdicts.json as `dbperf ci run` writes it (harness/ci/folder.py)."""
    return json.loads(dump_document(VerdictDocument(tuple(CASES[case][0]))))


@pytest.mark.parametrize("case", list(CASES))
def test_rebuilt_comment_golden(case: str) -> None:
    text = build_comment(json.dumps(document(case)), sha=SHA, run_url=RUN_URL)
    assert text.startswith(MARKER + "\n")
    check_golden(f"trusted_comment_{case}.md", text)


def test_the_numbers_and_verdicts_survive_the_rebuild() -> None:
    text = build_comment(json.dumps(document("regression")), sha=SHA, run_url=RUN_URL)
    assert "🔴 **Performance regression**" in text
    assert (
        "| oltp_read_only | 8 | QPS | 20,150 | 18,558 | -7.9 % | [-10.2, -5.6] % | 🔴 regression | "
        "a real change, beyond" in text
    )
    assert f"[Full report, verdicts and charts]({RUN_URL})" in text


def _forged(case: str, path: tuple[object, ...], value: object) -> str:
    doc = document(case)
    target: object = doc
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    return json.dumps(doc)


FREE_TEXT = "[click here](https://evil.example) @everyone <img src=x onerror=alert(1)>"


@pytest.mark.parametrize(
    "path",
    [
        ("verdicts", 0, "metrics", 0, "reason"),
        ("verdicts", 0, "metrics", 0, "summary"),
        ("verdicts", 0, "warnings"),
    ],
)
def test_free_text_of_the_run_never_reaches_the_comment(path: tuple[object, ...]) -> None:
    value: object = [FREE_TEXT] if path[-1] == "warnings" else FREE_TEXT
    text = build_comment(_forged("regression", path, value))
    assert "evil" not in text and "@everyone" not in text and "<img" not in text
    if path[-1] == "warnings":
        assert "the run wrote 1 warning(s): see the full report" in text


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("verdicts", 0, "scenario"), "oltp [x](https://evil.example)", "not a name"),
        (("verdicts", 0, "head"), "@everyone", "not a name"),
        (("verdicts", 0, "head_version"), "11.8\n## Approved", "not a name"),
        (("verdicts", 0, "metrics", 0, "metric"), "trust_me", "unknown value"),
        (("verdicts", 0, "metrics", 0, "outcome"), "approved", "should be 'pass'"),
        (("verdicts", 0, "metrics", 0, "cause"), "<b>", "unknown value"),
        (("verdicts", 0, "metrics", 0, "estimate_pct"), "-7.9 % (fine)", "should be a valid number"),
        (("verdicts", 0, "metrics", 0, "estimate_pct"), 1e999, "should be a finite number"),
        (("verdicts", 0, "metrics", 0, "gating"), "yes", "should be a valid boolean"),
        (("verdicts", 0, "threads"), -1, "whole number"),
        (("verdicts", 0, "mode"), "merge", "should be 'ab' or 'baseline'"),
        (("format",), 99, "format"),
    ],
)
def test_forged_fields_refuse_the_whole_file(path: tuple[object, ...], value: object, problem: str) -> None:
    with pytest.raises(ReportError, match=problem) as caught:
        build_comment(_forged("regression", path, value))
    assert "nothing is posted" in str(caught.value)


def test_not_json_and_bad_links_are_refused() -> None:
    with pytest.raises(ReportError, match="not JSON"):
        build_comment("<!-- dbperf-pr-check -->\n# all good")
    with pytest.raises(ReportError, match="--run-url"):
        build_comment(json.dumps(document("pass")), run_url="https://evil.example/actions/runs/1")
    with pytest.raises(ReportError, match="--sha"):
        build_comment(json.dumps(document("pass")), sha="HEAD; rm -rf /")


def test_a_real_comment_and_the_rebuilt_one_agree_on_every_row() -> None:
    from harness.report.comment import render_comment

    verdicts, runs = CASES["inconclusive"]
    plain = [replace(v, warnings=()) for v in verdicts]
    original = render_comment(check(plain, runs))
    rebuilt = build_comment(json.dumps(document("inconclusive")))

    def cells(text: str) -> list[list[str]]:  # every table row without its last cell (the reason's words)
        return [line.split(" | ")[:-1] for line in text.splitlines() if line.startswith("| ") and "---" not in line]

    assert cells(rebuilt) == cells(original)


def test_the_posting_job_installs_exactly_what_the_builder_imports(tmp_path) -> None:
    """pr-comment.yml installs only DEPENDENCIES: the module must import nothing else, and the workflow's
    list must be that list."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    from harness.report.trusted_comment import DEPENDENCIES

    repo = Path(__file__).resolve().parents[2]
    code = (
        "import sys, importlib.metadata as md\n"
        "before = set(sys.modules)\n"  # what site hooks (.pth files) load is not the module's doing
        "import harness.report.trusted_comment\n"
        "mods = {m.split('.')[0] for m in set(sys.modules) - before} - set(sys.stdlib_module_names)\n"
        "dists = md.packages_distributions()\n"
        "print(' '.join(sorted({d.lower() for m in mods for d in dists.get(m, [])})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    optional = {"charset-normalizer"}  # numpy.f2py imports it when it is there, and does without it
    loaded = set(out.stdout.split()) - {"dbperf"} - optional
    assert loaded <= set(DEPENDENCIES), sorted(loaded - set(DEPENDENCIES))
    workflow = (repo / ".github" / "workflows" / "pr-comment.yml").read_text()
    listed = re.search(r"python3 - trusted/requirements.lock ([a-z0-9 -]+) > comment.lock", workflow)
    assert listed and sorted(listed.group(1).split()) == sorted(DEPENDENCIES)
    # and the module entry point the job runs works on a real document
    doc = json.dumps(document("regression"))
    (tmp_path / "verdicts.json").write_text(doc)
    run = subprocess.run(
        [sys.executable, "-m", "harness.report.trusted_comment", str(tmp_path / "verdicts.json"), "--sha", SHA],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0 and run.stdout == build_comment(doc, sha=SHA), run.stderr
    (tmp_path / "bad.json").write_text("{}")
    bad = subprocess.run(
        [sys.executable, "-m", "harness.report.trusted_comment", str(tmp_path / "bad.json")],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.startswith("dbperf: error: verdicts file refused"), bad.stderr


# --- the change under test and the functions behind a cost regression -------------------------------


def test_rebuilt_comment_golden_names_the_change_and_the_functions() -> None:
    from support.comments import config_change

    text = build_comment(json.dumps(change_document()), sha=SHA, run_url=RUN_URL)
    check_golden("trusted_comment_config_change.md", text)
    assert "- `performance_schema` = `ON` added (`servers/conf/mariadb.cnf` line 8, [mysqld])" in text
    from harness.report.comment import render_comment

    verdicts, changes = config_change()
    original = render_comment(check(verdicts, changes=changes))

    def cells(markdown: str) -> list[list[str]]:  # every table row (functions too) without the reason's words
        return [line.split(" | ")[:-1] for line in markdown.splitlines() if line.startswith("| ") and "---" not in line]

    assert cells(text) == cells(original) and "`pfs_start_mutex_wait_v1`" in text


EVIL = "[x](https://evil.example) @everyone <img src=x onerror=alert(1)> `code` | pipe"


@pytest.mark.parametrize(
    ("path", "value", "shown"),
    [
        (("changes", 0, "name"), EVIL, "- `?` = `ON` added"),
        (("changes", 0, "name"), "a" * 65, "- `?` = `ON` added"),
        (("changes", 0, "section"), "mysqld]\n## Approved", "line 8, [?])"),
        (("changes", 0, "new"), EVIL, "- `performance_schema` = `(not shown)` added"),
        (("changes", 0, "new"), "1" * 81, "- `performance_schema` = `(not shown)` added"),
        (("verdicts", 0, "explanation", 0, "name"), "evil` | [x](https://evil.example)", "function `?` ("),
        (("verdicts", 0, "explanation", 0, "name"), "f" * 201, "function `?` ("),
    ],
)
def test_forged_change_text_and_function_names_are_not_shown(path: tuple[object, ...], value: str, shown: str) -> None:
    doc = change_document()
    target: object = doc
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    text = build_comment(json.dumps(doc))
    assert shown in text, text
    assert "evil" not in text and "@everyone" not in text and "<img" not in text and "Approved" not in text


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("changes", 0, "file"), "../../etc/passwd", "not a file under servers/"),
        (("changes", 0, "file"), "servers/../.github/workflows/x.yml", "not a file under servers/"),
        (("changes", 0, "file"), "/servers/conf/mariadb.cnf", "not a file under servers/"),
        (("changes", 0, "file"), "servers/conf/mariadb.cnf\n## ok", "not a file under servers/"),
        (("changes", 0, "file"), "README.md", "not a file under servers/"),
        (("changes", 0, "line"), -3, "whole number"),
        (("changes", 0, "line"), "8; rm", "should be a valid integer"),
        (("changes", 0, "status"), "approved", "should be 'changed', 'added' or 'removed'"),
        (("changes", 0, "head"), "@everyone", "not a name"),
        (("changes",), {"file": "x"}, "changes: input should be a valid array"),
        (("verdicts", 0, "explanation", 0, "share"), 2.5, "not a share"),
        (("verdicts", 0, "explanation", 0, "delta"), float("nan"), "should be a finite number"),
        (("verdicts", 0, "explanation", 0, "base"), "9,120", "should be a valid number"),
        (
            ("verdicts", 0, "explanation"),
            [{"name": "f", "base": 0, "head": 0, "delta": 0, "share": 0}] * 65,
            "at most 64",
        ),
    ],
)
def test_forged_change_structure_refuses_the_whole_file(path: tuple[object, ...], value: object, problem: str) -> None:
    doc = change_document()
    target: object = doc
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    with pytest.raises(ReportError, match=problem) as caught:
        build_comment(json.dumps(doc))
    assert "nothing is posted" in str(caught.value)


def test_flame_graph_file_names_are_linked_and_nothing_else() -> None:
    doc = {**document("regression"), "flame_graphs": ["flamegraph-oltp_point_select-1t.svg"]}
    url = "https://github.com/o/r/actions/runs/42"
    comment = build_comment(json.dumps(doc), run_url=url)
    line = next(line for line in comment.splitlines() if "flame graph" in line)
    assert "`flamegraph-oltp_point_select-1t.svg`" in line
    assert f"([artifact `perf-results`]({url}))" in line
    for forged in ("flamegraph-x-1t.svg](https://evil)", "report.md", "flamegraph-<b>-1t.svg", 7):
        with pytest.raises(ReportError, match="flame_graphs"):
            build_comment(json.dumps({**doc, "flame_graphs": [forged]}))
    assert "flame graph" not in build_comment(json.dumps(document("regression")))
