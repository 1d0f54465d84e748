"""One way to provision: outside ``harness/servers/`` (the providers themselves), only
``harness/measure/provision.py`` starts a server (``provider.serve``), prepares a dataset (sysbench's
``prepare``) or asks the dataset cache for a snapshot (``cache.ensure``). Before it, ``dataset.py`` and
``measure/session.py`` each had their own start-and-prepare sequence (docs/architecture.md, "The pipeline").
"""

from __future__ import annotations

import ast
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
THE_PATH = HARNESS / "measure" / "provision.py"


def _provisioning_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("serve", "ensure"):
            found.append(f"line {node.lineno}: .{func.attr}(...)")
        elif isinstance(func, ast.Name) and func.id == "prepare":
            found.append(f"line {node.lineno}: prepare(...)")
    return found


def test_only_provision_starts_servers_and_prepares_datasets() -> None:
    strays = {}
    for path in sorted(HARNESS.rglob("*.py")):
        if path == THE_PATH or path.is_relative_to(HARNESS / "servers"):
            continue
        calls = _provisioning_calls(ast.parse(path.read_text(), str(path)))
        if calls:
            strays[str(path.relative_to(HARNESS))] = calls
    assert not strays, f"start servers and prepare datasets in measure/provision.py only: {strays}"


def test_provision_does_all_three() -> None:
    calls = " ".join(_provisioning_calls(ast.parse(THE_PATH.read_text())))
    assert ".serve(" in calls and "prepare(" in calls and ".ensure(" in calls


def test_ci_execute_goes_through_the_pipeline() -> None:
    """``ci run`` opens its session (and the user's store beside ``out/``) through the pipeline, not by
    reaching into ``measure`` and ``store`` itself."""
    tree = ast.parse((HARNESS / "ci" / "execute.py").read_text())
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    reached = [m for m in modules if m.startswith(("harness.measure", "harness.store"))]
    assert not reached, f"ci/execute.py should reach the session and stores through harness.pipeline: {reached}"


def test_provision_asks_providers_through_the_protocol() -> None:
    """What a provider can do is in the ``Provider`` protocol (``credentials``), not probed with ``hasattr``."""
    tree = ast.parse(THE_PATH.read_text())
    probes = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "hasattr"]
    assert not probes, f"measure/provision.py probes providers with hasattr at lines {probes}: add to Provider"
