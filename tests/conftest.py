"""Fixtures shared by the unit and integration tests.

Integration tests run real servers, so they share one dataset-snapshot cache for the whole session
(each dataset is prepared once and restored for every run), while every test gets its own store.
Nothing here starts a server: unit tests pay nothing for these fixtures. The one autouse fixture,
``_reap_started``, kills and reaps every dbperf process a test started and left running (a test that
failed half-way), so no process, pipe or server outlives the test that made it. A passed test's
``tmp_path`` is deleted when it is torn down (``pytest_runtest_makereport``), so the disk holds the
folders of the running and the failed tests only.

``tools/test.sh`` runs the suite on several pytest-xdist workers (``--dist loadfile``: the tests of one
file stay on one worker, so its module fixtures are made once; the longest files are handed out
first), and the tests marked ``serial`` (timing verdicts and fixed time limits that another worker's load could break)
afterwards on their own. The snapshot cache is shared by the workers (its builds hold a file lock),
so each dataset is still prepared once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest
from support import REPO
from support.catalog import Catalog, throwaway_catalog
from support.cli import Dbperf, end_started, run_pytest


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


if os.environ.get("PYTEST_XDIST_WORKER"):
    # xdist gives its workers COLUMNS=80 (the controller's width); dbperf reads COLUMNS as the width of
    # piped output, so the tests (and the dbperf processes they start) must see what a serial run sees
    os.environ.pop("COLUMNS", None)


#: The files that take longest, first: xdist (``--dist loadfile``) hands files to the workers in
#: collection order, so a long file started last would leave one worker running alone at the end.
LONGEST_FIRST = (
    "tests/integration/test_catalogue_cost.py",
    "tests/workflows/test_workflows.py",
    "tests/integration/test_catalogue.py",
    "tests/workflows/test_fleet.py",
    "tests/faults/test_second_round.py",
    "tests/integration/test_ci_run.py",
    "tests/integration/test_cost.py",
    "tests/faults/test_bad_inputs_and_disks.py",
    "tests/integration/test_lake.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the longest files first (the rest keep their order)."""
    del config
    if os.environ.get("PYTEST_XDIST_WORKER"):
        rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


#: Seconds spent per test file (setup, call and teardown), summed on the controller: the list
#: ``LONGEST_FIRST`` is kept by.
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = report.nodeid.split("::")[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """With ``--durations``, the 15 files that took longest too (what ``LONGEST_FIRST`` orders)."""
    if not config.getoption("durations", None) or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    longest = sorted(_FILE_SECONDS.items(), key=lambda item: -item[1])[:15]
    terminalreporter.write_sep("=", "slowest 15 files (setup + call + teardown)")
    for path, seconds in longest:
        terminalreporter.write_line(f"{seconds:8.1f}s {path}")


#: The call report of each test, so that its teardown report can tell whether the test passed.
_CALL_PASSED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Delete a passed test's ``tmp_path`` as soon as it is torn down (a failed test's stays to look at).

    The integration tests' folders hold copies of datasets, stores and profiles (hundreds of MB each);
    kept to the session's end, they added up to many GB on a disk the servers and containers share.
    """
    del call
    report = yield
    if report.when == "setup" and not report.passed:
        item.stash[_CALL_PASSED] = False
    elif report.when == "call":
        item.stash[_CALL_PASSED] = report.passed
    elif report.when == "teardown" and report.passed and item.stash.get(_CALL_PASSED, False):
        funcargs = getattr(item, "funcargs", None) or {}
        folder = funcargs.get("tmp_path")
        if isinstance(folder, Path):
            shutil.rmtree(folder, ignore_errors=True)
    return report


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One snapshot cache for the whole session (all xdist workers), so each dataset is prepared once.

    ``DBPERF_TEST_CACHE_DIR`` (set by ``tools/test.sh``) names one cache for both of the suite's parts,
    the parallel one and the serial one, so the serial part prepares no dataset again.
    """
    shared_env = os.environ.get("DBPERF_TEST_CACHE_DIR")
    if shared_env:
        shared = Path(shared_env)
        shared.mkdir(parents=True, exist_ok=True)
        return shared
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "dbperf-cache"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("dbperf-cache")


@pytest.fixture(scope="session")
def baselines_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty baselines folder: integration runs are never judged against the repository's."""
    return tmp_path_factory.mktemp("dbperf-baselines")


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """A fresh store for one test."""
    return tmp_path / "store" / "dbperf.duckdb"


@pytest.fixture(scope="session")
def cli_env(cache_dir: Path, baselines_dir: Path) -> dict[str, str]:
    """Environment for dbperf subprocesses: no inherited DBPERF_* settings, the session's cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBPERF_")}
    env.update(
        {
            "DBPERF_CACHE_DIR": str(cache_dir),
            "DBPERF_BASELINES_DIR": str(baselines_dir),
            "TESTCONTAINERS_RYUK_DISABLED": "true",
            "NO_COLOR": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@pytest.fixture(autouse=True)
def _reap_started() -> Iterator[None]:
    """After every test: kill and wait for the dbperf processes it started, and close their pipes.

    A test that fails half-way (an assertion while its dbperf still runs) would otherwise leave the
    process running and its pipes open; their ResourceWarnings then surface in a later test.
    """
    yield
    end_started()


@pytest.fixture(scope="session")
def dbperf(cli_env: dict[str, str]) -> Dbperf:
    return Dbperf(cli_env)


@pytest.fixture(scope="session")
def settings_factory(cache_dir: Path, baselines_dir: Path) -> Callable[..., object]:
    """``make(store, **flags)``: :class:`harness.config.settings.Settings` for the Python API, env ignored."""
    from harness.config.settings import resolve_settings

    def make(store: Path, **flags: object) -> object:
        values: dict[str, object | None] = {
            "store": str(store),
            "cache-dir": str(cache_dir),
            "baselines-dir": str(baselines_dir),
        }
        values.update({k.replace("_", "-"): v for k, v in flags.items()})
        return resolve_settings(values, environ={}, root=REPO)

    return make


@pytest.fixture(scope="session")
def inner_pytest(cli_env: dict[str, str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str | Path, timeout_s: float = 900) -> subprocess.CompletedProcess[str]:
        return run_pytest(args, cli_env, timeout_s)

    return run


@pytest.fixture
def private_tmpdir(tmp_path: Path) -> Path:
    """A TMPDIR for one dbperf process, so its temporary folders can be checked without races."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def catalog() -> Iterator[Catalog]:
    """A throwaway PostgreSQL for shared stores (DuckLake catalogs), one per test module."""
    with throwaway_catalog() as running:
        yield running
