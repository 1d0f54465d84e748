"""The fault matrix: faults injected on purpose into real dbperf processes (issue 13).

Every case runs ``dbperf`` as a user would (a subprocess, real servers, real sysbench, real signals,
real tmpfs mounts) with its own TMPDIR, store and XDG_DATA_HOME, so what it asserts about leftovers
is about exactly what that case made, even while other dbperf processes work on this machine. Each
case checks: the exit code, one closing line with the cause and the fix, what was stored (the failed
run, or the fallback file), nothing leaked (processes, temporary folders, containers), and that the
run stored before the fault is still readable. Each case adds a row to ``artifacts/fault-matrix.md``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.faults import ExternalServer, Fault, external_mariadb, quick, write_matrix

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def earlier_store(dbperf: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one real run, copied into every case (the run that must stay readable)."""
    folder = tmp_path_factory.mktemp("earlier-store")
    store = folder / "dbperf.duckdb"
    out = dbperf.run(*quick("--store", str(store), "--json"), timeout_s=600)
    assert out.returncode == 0, out.stderr
    runs = dbperf.runs(store)
    assert len(runs) == 1 and runs[0]["status"] == "ok", runs
    return store, str(runs[0]["run_id"])


@pytest.fixture
def fault(dbperf: Any, earlier_store: tuple[Path, str], tmp_path: Path) -> Iterator[Fault]:
    store_dir = tmp_path / "store"
    shutil.copytree(earlier_store[0].parent, store_dir)
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    case = Fault(dbperf, tmp_path, tmpdir, store_dir / "dbperf.duckdb", tmp_path / "data-home", earlier_store[1])
    yield case
    for streamed in case.started:  # a case that failed half-way must not leave its dbperf running
        streamed.end()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the fault matrix (``support.faults.write_matrix``)."""
    write_matrix(session)


@pytest.fixture(scope="session")
def external(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExternalServer]:
    """A MariaDB dbperf did not start (``support.faults.external_mariadb``)."""
    with external_mariadb(tmp_path_factory.mktemp("external-mariadb")) as server:
        yield server
