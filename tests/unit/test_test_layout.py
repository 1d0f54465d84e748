"""The tests' own layout: shared code lives in tests/support, conftest files hold fixtures only.

Before tests/support, 14 test modules imported helpers from conftest files and 28 from other test
modules, and the testbed record was typed out in seven files. Every import is counted, at module level
and inside functions alike.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: The tests' own packages and folders: a module imports their code from ``support`` only.
TEST_FOLDERS = frozenset({"tests", "unit", "integration", "faults", "workflows"})


def sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS)
        if rel.parts[0] != "data":
            yield str(rel), ast.parse(path.read_text(), str(path))


def imported(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every imported module as written (``.``-prefixed when relative), with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            yield node.lineno, module
            if not node.module:  # ``from . import x``: x is the module
                yield from ((node.lineno, module + alias.name) for alias in node.names)


def test_no_test_imports_a_conftest_a_test_module_or_a_test_folder() -> None:
    wrong = []
    for rel, tree in sources():
        for line, module in imported(tree):
            parts = module.lstrip(".").split(".")
            if (
                module.startswith(".")
                or "conftest" in parts
                or any(part.startswith("test_") for part in parts)
                or parts[0] in TEST_FOLDERS
            ):
                wrong.append(f"{rel}:{line}: imports {module} (shared code belongs in tests/support)")
    assert not wrong, "\n".join(wrong)


def test_conftest_files_hold_fixtures_and_hooks_only() -> None:
    wrong = []
    for rel, tree in sources():
        if Path(rel).name != "conftest.py":
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                wrong.append(f"{rel}:{node.lineno}: class {node.name} (move it to tests/support)")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                fixture = any("fixture" in ast.unparse(d) for d in node.decorator_list)
                if not fixture and not node.name.startswith("pytest_"):
                    wrong.append(f"{rel}:{node.lineno}: def {node.name} is no fixture or hook (tests/support)")
    assert not wrong, "\n".join(wrong)


def test_the_testbed_record_is_built_in_tests_support_only() -> None:
    """One builder, ``support.factories.make_testbed``: a new Testbed field is added in one place.

    (Not named ``testbed``: pytest collects an imported function whose name starts with ``test``.)
    """
    wrong = []
    for rel, tree in sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name == "Testbed" and rel != "support/factories.py":
                    wrong.append(f"{rel}:{node.lineno}: builds a Testbed (use support.factories.make_testbed)")
    assert not wrong, "\n".join(wrong)


def test_the_scan_sees_the_support_package() -> None:
    seen = {rel for rel, _ in sources()}
    assert {"support/__init__.py", "support/factories.py", "conftest.py", "unit/test_test_layout.py"} <= seen
