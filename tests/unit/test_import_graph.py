"""The import graph of ``harness``: imports run one way, down the stages, and no module imports itself
back through others (docs/architecture.md, "Imports run one way").

Every import is counted, at module level and inside functions alike (a lazy import is still an arrow).
Before this test the graph had report -> ci (CiPlan), report -> pipeline (Outcome, history),
report -> store, sysbench -> servers (Endpoint), workspace -> servers (a container clean-up), and the
cycle servers.container -> servers.local -> workspace -> servers.container.

Renderers import ``model/`` only, never ``judge/``: a report shows the figures the judge put in the
records it is handed and computes no statistics of its own, and what a renderer shares with the judge
(a wall-time format, a cause's name, the capacity metrics, a frame ranking, a plan's differences in
words) lives in ``model/``, in one place. Before this rule report/ imported judge/ nine times (capacity,
classify twice, design, flame twice, forecast, plans, steady).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"

#: Lowest first; a module may import its own layer's and lower layers' modules only.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "harness errors model crash bounded_json",  # records, the exception root, the last resort, safe JSON
        "workspace testbed store",  # this process's folders, the machine, the results kept
        "config",  # settings and the catalogue files, read into records
        "sysbench imports",  # the client, and clients' logs (sysbench text, go-tpc, go-ycsb) read into runs
        "servers",  # provisioning
        "dataset",  # prepared datadirs, snapshots
        "judge",  # statistics and verdicts
        "report",  # renderers: records in, text or files out
        "measure",  # one run end to end
        "pipeline",  # the wiring
        "ci",  # pull-request checks through the pipeline
        "cli plugin __main__",  # the front ends
    )
)


#: Lower stages a stage must not import all the same: reports never query the store (they render the
#: records they are handed; queries live in store/trend_queries.py and are called by the pipeline), and
#: never import the judge (they show the statistics in their records and compute none: the module's
#: docstring says why).
FORBIDDEN = {"report": frozenset({"store", "workspace", "testbed", "judge"})}


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _modules() -> dict[str, Path]:
    out = {}
    for path in HARNESS.rglob("*.py"):
        parts = path.relative_to(HARNESS.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])])
            # ``from pkg import submodule`` imports the submodule; ``from pkg import name`` the package
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            found = target
            while found and found not in known:
                found = found.rpartition(".")[0]
            if found and found != name:
                yield found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: set(_imports(name, path, set(modules))) for name, path in modules.items()}


def _layer(module: str) -> int:
    stage = _stage(module)
    for index, layer in enumerate(LAYERS):
        if stage in layer:
            return index
    raise AssertionError(f"{module}: its stage {stage!r} is in no layer of this test (and of docs/architecture.md)")


def test_no_import_runs_up_the_stages():
    upward = sorted(
        f"{a} -> {b}" for a, targets in _graph().items() for b in targets if _layer(b) > _layer(a)
    )  # fmt: skip
    assert not upward, "imports from a lower stage to a higher one:\n" + "\n".join(upward)


def test_reports_only_render():
    found = sorted(
        f"{a} -> {b}" for a, targets in _graph().items() for b in targets
        if _stage(b) in FORBIDDEN.get(_stage(a), frozenset())
    )  # fmt: skip
    assert not found, "reports that fetch or judge instead of render:\n" + "\n".join(found)


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_is_read_whole():
    graph = _graph()
    assert len(graph) > 90
    assert "harness.model.outcome" in graph["harness.pipeline.flow"]
    assert "harness.servers.container" in graph["harness.servers"]  # a function-level import counts
