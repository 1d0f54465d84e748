"""Fixtures of the workflow tests: act, a scratch copy of this repository with git history (``support.workflows``)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import REPO
from support.actrun import Act
from support.workflows import ScratchRepo, make_scratch_repo


@pytest.fixture(scope="session")
def scratch_repo(tmp_path_factory: pytest.TempPathFactory) -> ScratchRepo:
    return make_scratch_repo(tmp_path_factory.mktemp("act-repo"))


@pytest.fixture(scope="session")
def act_tools() -> tuple[Path, Path]:
    """The act binary and the offline wheelhouse (built once into .tools/; a failed build fails the tests)."""
    done = subprocess.run(
        ["bash", str(REPO / "tools" / "workflow-test-deps.sh")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"tools/workflow-test-deps.sh failed:\n{done.stderr[-3000:]}"
    act, wheelhouse = done.stdout.split()
    return Path(act), Path(wheelhouse)


@pytest.fixture(scope="session")
def act(
    scratch_repo: ScratchRepo, act_tools: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Act]:
    state = tmp_path_factory.mktemp("act-state")
    (state / "github").mkdir()
    yield Act(act_tools[0], scratch_repo.path, state)
    shutil.rmtree(state / "act-cache", ignore_errors=True)  # the jobs' workspaces (venvs): large


@pytest.fixture(scope="session")
def quick_env(act_tools: tuple[Path, Path]) -> dict[str, str]:
    """Environment that keeps the workflows' runs short and their installs offline."""
    return {
        "DBPERF_TIME": "2",
        "DBPERF_WARMUP": "1",
        "DBPERF_THREADS": "2",
        "DBPERF_COST": "0",
        "PIP_FIND_LINKS": str(act_tools[1]),
        "PIP_NO_INDEX": "1",
        "PIP_NO_COMPILE": "1",
    }


@pytest.fixture(scope="session")
def common_vars(act: Act) -> dict[str, str]:
    """Repository variables of every run: the state folder, and no `dbperf sweep --all` (shared machine)."""
    return {"DBPERF_HOME": str(act.state / "dbperf-home"), "DBPERF_SWEEP": "false"}
