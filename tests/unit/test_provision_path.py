"""One way to provision: outside ``harness/servers/`` (the providers themselves), only
``harness/measure/provision.py`` starts a run's server (``provider.serve``) on the copy the dataset cache
restores (``cache.restored``), and only ``harness/dataset.py`` loads rows (sysbench's ``prepare``), on a
snapshot's own server (its one other ``serve``) or an external server's tables. The dataset stage takes
no callback from a higher stage: provisioning goes down the layers and back once (docs/provisioning.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.factories import scenario as make_scenario

from harness.dataset import DatasetCache
from harness.measure import provision
from harness.measure.provision import Provisioner, ServerSetup
from harness.model import Scenario, Server

HARNESS = Path(__file__).resolve().parents[2] / "harness"
THE_PATH = HARNESS / "measure" / "provision.py"
DATASET = HARNESS / "dataset.py"


def _provisioning_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("serve", "restored"):
            found.append(f"line {node.lineno}: .{func.attr}(...)")
        elif isinstance(func, ast.Name) and func.id == "prepare":
            found.append(f"line {node.lineno}: prepare(...)")
    return found


def test_only_provision_starts_servers_and_only_the_dataset_stage_loads_rows() -> None:
    strays = {}
    for path in sorted(HARNESS.rglob("*.py")):
        if path in (THE_PATH, DATASET) or path.is_relative_to(HARNESS / "servers"):
            continue
        calls = _provisioning_calls(ast.parse(path.read_text(), str(path)))
        if calls:
            strays[str(path.relative_to(HARNESS))] = calls
    assert not strays, f"start a run's server in measure/provision.py, load rows in dataset.py: {strays}"
    in_provision = " ".join(_provisioning_calls(ast.parse(THE_PATH.read_text())))
    assert "prepare(" not in in_provision, f"measure/provision.py loads rows itself: {in_provision}"
    in_dataset = _provisioning_calls(ast.parse(DATASET.read_text()))
    assert len([c for c in in_dataset if ".serve(" in c]) == 1, f"dataset.py starts servers: {in_dataset}"
    assert not [c for c in in_dataset if ".restored(" in c], in_dataset


def test_the_dataset_stage_takes_no_callback() -> None:
    """Before, ``DatasetCache.ensure`` took a loader from ``measure/provision.py`` that started the snapshot's
    server and prepared it: the dataset stage called back up into the stage that called it. Now only
    ``say`` (progress lines) is a callable parameter there."""
    tree = ast.parse(DATASET.read_text())
    callbacks = [
        f"line {arg.lineno}: {arg.arg}"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for arg in [*node.args.args, *node.args.kwonlyargs]
        if arg.annotation is not None and "Callable" in ast.unparse(arg.annotation) and arg.arg != "say"
    ]
    assert not callbacks, f"dataset.py takes callbacks: {callbacks}"


def test_only_provision_asks_for_a_servers_provider() -> None:
    """A server's build, build-id and snapshot key are resolved in one place (``resolve_setup``, with or
    without a session): nothing else outside ``harness/servers/`` calls ``provider_for``."""
    strays = []
    for path in sorted(HARNESS.rglob("*.py")):
        if path == THE_PATH or path.is_relative_to(HARNESS / "servers"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        calls = [
            n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "provider_for"
        ]
        strays += [f"{path.relative_to(HARNESS)}:{line}" for line in calls]
    assert not strays, f"resolve a server's setup through measure/provision.py: {strays}"


def test_provision_starts_servers_on_restored_copies() -> None:
    calls = " ".join(_provisioning_calls(ast.parse(THE_PATH.read_text())))
    assert ".serve(" in calls and ".restored(" in calls
    assert " prepare(" in " " + " ".join(_provisioning_calls(ast.parse(DATASET.read_text())))


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


def test_a_setup_is_resolved_once_per_server_and_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Provisioner.setup`` resolves a (server, scenario) once per invocation; its cost identity once more,
    when a cost run first asks; another server (a ``--head-var`` head) or thread count is a setup of its own."""
    resolved: list[str] = []

    def resolve(server: Server, scenario: Scenario, sysbench_version: str) -> ServerSetup:
        resolved.append(server.name)
        return ServerSetup(server, scenario, object(), {}, {}, "b", "g", {"k": 1}, "k")  # type: ignore[arg-type]

    monkeypatch.setattr(provision, "resolve_setup", resolve)
    monkeypatch.setattr(provision, "cost_identity", lambda setup: f"cost of {setup.server.name}")
    provisioner = Provisioner(DatasetCache(tmp_path), "1.0.20", lambda _: None)
    server, scenario = Server("mariadb-local", "mariadb", "10.11", "local"), make_scenario()
    first = provisioner.setup(server, scenario)
    assert provisioner.setup(server, scenario) is first
    assert provisioner.setup(server, scenario.with_overrides(warmup_s=30)) is first  # a warm-up adapted: the same
    costed = provisioner.setup(server, scenario, cost=True)
    assert costed.cost == f"cost of {server.name}" and provisioner.setup(server, scenario, cost=True) is costed
    assert provisioner.setup(server, scenario) is costed
    provisioner.setup(server.with_variables({"sort_buffer_size": "4M"}), scenario)
    provisioner.setup(server, scenario.with_overrides(threads=(1, 8)))
    assert resolved == [server.name, f"{server.name}+sort_buffer_size=4M", server.name]
