"""The renderers that show verdicts read the verdict document (docs/reports.md, "verdicts.json").

The terminal (report/verdicts.py), report.md and the job summary (report/markdown.py), the comment
(report/comment.py) and the trusted jobs (report/trusted_comment.py) import
``harness.model.verdict_document``; no renderer in report/ takes an ``Outcome`` except release.py
(``--out`` of compare/judge, which also writes the ``--json`` document of the outcome); the front ends
print verdicts through ``print_document`` only; ci/folder.py hands its charts the document's verdicts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
DOCUMENT_READERS = ("verdicts.py", "markdown.py", "comment.py", "trusted_comment.py")
TAKES_OUTCOME = {"release.py"}  # writes the --json document of compare/judge --out beside its report


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _imported(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_verdict_renderers_import_the_document():
    missing = [
        name
        for name in DOCUMENT_READERS
        if "harness.model.verdict_document" not in _imported(_tree(HARNESS / "report" / name))
    ]
    assert not missing


def test_no_renderer_takes_an_outcome():
    taking = []
    for path in sorted((HARNESS / "report").glob("*.py")):
        if path.name in TAKES_OUTCOME:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                for arg in args:
                    if arg.annotation is not None and re.search(r"\bOutcome\b", ast.unparse(arg.annotation)):
                        taking.append(f"{path.name}:{node.name}({arg.arg})")
    assert not taking


def test_front_ends_print_verdicts_through_the_document():
    callers = []
    for path in sorted(HARNESS.rglob("*.py")):
        if path == HARNESS / "report" / "verdicts.py":
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print_verdicts":
                callers.append(f"{path.relative_to(HARNESS)}:{node.lineno}")
    assert not callers


def test_ci_folder_charts_read_the_document():
    tree = _tree(HARNESS / "ci" / "folder.py")
    reads = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in {"verdicts", "plans"}
        and isinstance(node.value, ast.Name)
        and node.value.id == "outcome"
    ]
    assert not reads
