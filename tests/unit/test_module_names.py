"""Every module under ``harness/`` has a basename of its own (docs/architecture.md, the tree).

A basename says what one module holds, so ``model/plan.py`` and ``ci/plan.py`` (a query plan and the
CI plan) cannot both be ``plan.py``: a traceback, a grep or an editor tab that shows only the name
then points at one module, not four. Package files (``__init__.py``, ``__main__.py``) are exempt.
Before this test eight basenames were shared (``operations.py`` by four modules; ``estimate.py``,
``files.py``, ``flame.py``, ``forecast.py``, ``outcome.py``, ``plan.py`` and ``plans.py`` by two).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"
EXEMPT = frozenset({"__init__.py", "__main__.py"})


def shared_basenames(root: Path) -> dict[str, list[str]]:
    """Each basename two or more modules under ``root`` share, with their paths relative to it."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if path.name not in EXEMPT:
            by_name[path.name].append(path.relative_to(root).as_posix())
    return {name: paths for name, paths in by_name.items() if len(paths) > 1}


def test_no_two_harness_modules_share_a_basename() -> None:
    shared = shared_basenames(HARNESS)
    assert not shared, "modules that share a basename (name each for what it holds): " + "; ".join(
        f"{name}: {', '.join(paths)}" for name, paths in sorted(shared.items())
    )


def test_the_check_sees_a_shared_basename(tmp_path: Path) -> None:
    for rel in ("model/plan.py", "ci/plan.py", "ci/__init__.py", "model/__init__.py", "run.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert shared_basenames(tmp_path) == {"plan.py": ["ci/plan.py", "model/plan.py"]}
