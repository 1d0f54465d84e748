"""Store files DuckDB cannot read (written by DuckDB 2.0, truncated, damaged): one line naming
`dbperf store rebuild`, and the rebuild from the Parquet run folders, by a real dbperf process."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from support.store_runs import make_run

from harness.errors import StoreError
from harness.store import Store
from harness.store.filecheck import READABLE, classify, diagnose, storage_version
from harness.store.migrate import rebuild

ROOT = Path(__file__).parents[2]
V20 = ROOT / "tests" / "data" / "store" / "duckdb-2.0"


def dbperf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBPERF_")}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=cwd, env=env, check=False
    )


@pytest.fixture
def store_v20(tmp_path: Path) -> Path:
    """A copy of a real store written by DuckDB 2.0.0, with its two run folders."""
    path = tmp_path / "dbperf.duckdb"
    path.write_bytes(gzip.decompress((V20 / "dbperf.duckdb.gz").read_bytes()))
    shutil.copytree(V20 / "dbperf.runs", tmp_path / "dbperf.runs")
    return path


@pytest.fixture
def saved(tmp_path: Path) -> Store:
    store = Store(tmp_path / "s" / "dbperf.duckdb")
    store.save(make_run("r1", 1, samples=True))
    store.save_many([make_run(f"b{i}", 10 + i) for i in range(30)])
    return store


def test_the_header_tells_the_duckdb_version(store_v20: Path, saved: Store) -> None:
    assert storage_version(store_v20) == 999
    assert storage_version(saved.path) in READABLE
    assert 999 not in READABLE  # this project runs DuckDB 1.5
    assert diagnose(saved.path, saved.runs_dir) is None


def test_a_duckdb_2_file_is_refused_with_the_fix(store_v20: Path) -> None:
    with pytest.raises(StoreError) as info:
        Store(store_v20)
    message = str(info.value)
    assert "\n" not in message
    assert "written by DuckDB 2.0 (storage version 999" in message
    assert f"dbperf store rebuild --store {store_v20}" in message
    assert str(store_v20.with_name("dbperf.runs")) in message


def test_rebuild_command_brings_back_every_run(store_v20: Path) -> None:
    result = dbperf("store", "rebuild", "--store", str(store_v20), cwd=store_v20.parent)
    assert result.returncode == 0, result.stderr
    assert "rebuilt" in result.stdout and "with 2 run(s)" in result.stdout
    aside = [p for p in store_v20.parent.iterdir() if p.name.startswith("dbperf.duckdb.aside-")]
    assert len(aside) == 1 and storage_version(aside[0]) == 999  # kept, untouched
    store = Store(store_v20)
    assert store.count() == 2
    assert store.get("v20-a") == make_run("v20-a", 1, samples=True)
    assert store.get("v20-b") == make_run("v20-b", 2)


def _truncate(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _scribble_header(path: Path) -> None:
    with path.open("r+b") as handle:  # random bytes: a run of equal words can keep DuckDB's checksum
        handle.seek(4096 + 64)
        handle.write(os.urandom(64))


def _not_duckdb(path: Path) -> None:
    path.write_bytes(b"not a database\n" * 500)


@pytest.mark.parametrize(
    ("damage", "says"),
    [(_truncate, "is truncated"), (_scribble_header, "is damaged"), (_not_duckdb, "is not a DuckDB database")],
)
def test_damaged_file_is_refused_then_rebuilt(saved: Store, damage: object, says: str) -> None:
    assert callable(damage)
    damage(saved.path)
    with pytest.raises(StoreError) as info:
        saved.count()
    message = str(info.value)
    assert says in message and "dbperf store rebuild" in message and "\n" not in message
    result = rebuild(saved.path)
    assert result.moved_to is not None and result.moved_to.exists()
    assert result.runs == 31
    assert saved.get("r1") == make_run("r1", 1, samples=True)


def test_rebuild_refuses_without_run_folders(tmp_path: Path) -> None:
    path = tmp_path / "lonely.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(StoreError, match=r"no run folders .* left as it is"):
        rebuild(path)
    assert path.exists()


def test_rebuild_refuses_a_lake(tmp_path: Path) -> None:
    result = dbperf("store", "rebuild", "--store", "ducklake:postgres:dbname=x host=127.0.0.1", cwd=tmp_path)
    assert result.returncode == 2
    assert "a lake has no local file to rebuild" in result.stderr


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("IO Error: Trying to read a database file with version number 999, but we can only read versions "
         "between 64 and 68.", "newer-format"),
        ("IO Error: Corrupt database file: computed checksum 1 does not match stored checksum 2 in block at "
         "location 12595200", "checksum"),
        ('IO Error: Could not read enough bytes from file "x": attempted to read 262144 bytes', "truncated"),
        ('IO Error: The file "x" exists, but it is not a valid DuckDB database file!', "not-duckdb"),
        ("Binder Error: column x not found", "other"),
    ],
)  # fmt: skip
def test_classify_duckdb_errors(text: str, kind: str) -> None:
    assert classify(duckdb.IOException(text)) == kind
