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

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The superuser password of the throwaway PostgreSQL (`catalog`); clients pass it as PGPASSWORD.
PASSWORD = "fleet-secret"


def dbperf_argv() -> list[str]:
    """The ``dbperf`` console script of the running interpreter's environment (else ``-m harness``)."""
    script = Path(sys.executable).with_name("dbperf")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "harness"]


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


@dataclass
class Streamed:
    """A running dbperf process whose stdout and stderr are read live (with arrival times)."""

    proc: subprocess.Popen[str]
    stdout: list[str] = field(default_factory=list)
    stderr: list[tuple[float, str]] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start_readers(self) -> None:
        def pump(stream: object, sink: Callable[[str], None]) -> None:
            for line in stream:  # type: ignore[attr-defined]
                sink(line.rstrip("\n"))

        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, sink in (
            (self.proc.stdout, self.stdout.append),
            (self.proc.stderr, lambda line: self.stderr.append((time.monotonic(), line))),
        ):
            thread = threading.Thread(target=pump, args=(stream, sink), daemon=True)
            thread.start()
            self._threads.append(thread)

    def wait_for_stderr(self, predicate: Callable[[str], bool], timeout_s: float) -> str:
        """The first stderr line matching ``predicate``; fails if the process ends or time runs out."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        while time.monotonic() < deadline:
            lines = [line for _, line in self.stderr]
            for line in lines[seen:]:
                if predicate(line):
                    return line
            seen = len(lines)
            if self.proc.poll() is not None:
                for thread in self._threads:  # the readers end at end of file: every line is in
                    thread.join(timeout=10)
                if len(self.stderr) == seen:
                    break
                continue
            time.sleep(0.05)
        self.kill()
        pytest.fail(
            f"no matching stderr line within {timeout_s:.0f} s (exit {self.proc.returncode}); stderr:\n"
            + self.stderr_text()
        )

    def wait(self, timeout_s: float) -> int:
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"dbperf did not finish within {timeout_s:.0f} s; stderr:\n{self.stderr_text()}")
        self.close()
        return code

    def close(self) -> None:
        for thread in self._threads:
            thread.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.close()

    def end(self) -> None:
        """Stop a process a test left running: SIGTERM (dbperf stops its servers), SIGKILL after 60 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a test may have stopped it
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=60)
        self.kill()

    def stdout_text(self) -> str:
        return "\n".join(self.stdout)

    def stderr_text(self) -> str:
        return "\n".join(line for _, line in self.stderr)


#: dbperf processes started by the running test (``Dbperf.start``); ``_reap_started`` ends them.
_STARTED: list[Streamed] = []


@pytest.fixture(autouse=True)
def _reap_started() -> Iterator[None]:
    """After every test: kill and wait for the dbperf processes it started, and close their pipes.

    A test that fails half-way (an assertion while its dbperf still runs) would otherwise leave the
    process running and its pipes open; their ResourceWarnings then surface in a later test.
    """
    yield
    while _STARTED:
        _STARTED.pop().end()


@dataclass
class Dbperf:
    """Runs the ``dbperf`` CLI as a subprocess from the repository root."""

    env: dict[str, str]

    def run(
        self, *args: str | Path, timeout_s: float = 600, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*dbperf_argv(), *map(str, args)],
            cwd=REPO,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def start(self, *args: str | Path, env: Mapping[str, str] | None = None) -> Streamed:
        proc = subprocess.Popen(
            [*dbperf_argv(), *map(str, args)],
            cwd=REPO,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        streamed = Streamed(proc)
        streamed.start_readers()
        _STARTED.append(streamed)
        return streamed

    def runs(self, store: Path, *extra: str) -> list[dict[str, object]]:
        """``dbperf runs --json`` of a store."""
        out = self.run("runs", "--json", "--limit", "0", "--store", store, *extra, timeout_s=120)
        assert out.returncode == 0, out.stderr
        docs = json.loads(out.stdout)
        assert isinstance(docs, list)
        return docs


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


def run_pytest(
    args: Sequence[str | Path], env: Mapping[str, str], timeout_s: float = 900
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` from the repository root (used for ``pytest scenarios/``)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *map(str, args)],
        cwd=REPO,
        env={**env, "DBPERF_PROGRESS": "0"},
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


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


# -- a throwaway PostgreSQL for shared stores (DuckLake catalogs): tests/integration/test_lake.py,
# tests/workflows/test_fleet.py ---------------------------------------------------------------


@dataclass(frozen=True)
class Catalog:
    """A running throwaway PostgreSQL: its folder and port."""

    root: Path
    port: int

    def tool(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, str(REPO / "tools" / "postgres.py"), *args, str(self.root)],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        return result.stdout

    def new_lake(self, name: str, data_path: Path) -> str:
        """A brand-new catalog database ``name``: the store setting of a lake on it (no password in it)."""
        subprocess.run(
            [sys.executable, str(REPO / "tools" / "postgres.py"), "createdb", str(self.root), name],
            check=True,
            capture_output=True,
            timeout=120,
        )
        return f"ducklake:postgres:dbname={name} host=127.0.0.1 port={self.port} user=postgres data_path={data_path}"


@pytest.fixture(scope="module")
def catalog() -> Iterator[Catalog]:
    # not pytest's tmp_path: its 0700 folders are out of the postgres user's reach
    base = Path(tempfile.mkdtemp(prefix="dbperf-pg-"))
    base.chmod(0o755)
    secret = base / "password"
    secret.write_text(PASSWORD)
    started = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "postgres.py"),
            "start",
            str(base / "pg"),
            "--password-file",
            str(secret),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert started.returncode == 0, started.stderr
    port = int(started.stdout.split("port=")[1].split()[0])
    try:
        yield Catalog(base / "pg", port)
    finally:
        subprocess.run(
            [sys.executable, str(REPO / "tools" / "postgres.py"), "destroy", str(base / "pg")],
            capture_output=True,
            check=False,
            timeout=120,
        )
        shutil.rmtree(base, ignore_errors=True)
