"""A write killed before its commit leaves Parquet files in the lake's data path; the next migrate deletes them.

Issue 35: a killed ``dbperf store migrate`` left 4.0 MB of Parquet where the copy holds 1.4 MB, and
no later migrate removed them. Here a real writer process (DuckLake on a throwaway PostgreSQL) inserts
every table of a local store inside its transaction and is SIGKILLed before the commit; the next
``dbperf store migrate`` says how many orphaned files it deleted, and the data path holds only the
files of the copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO
from support.catalog import PASSWORD, Catalog
from support.lakes import dbperf, synthetic

from harness.store import Store, open_store

pytestmark = pytest.mark.integration

#: Inserts every table of the local store in one lake transaction, then dies before the commit.
KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from harness.store import Store, open_store
from harness.store.rows import TABLES
tables = Store(Path(sys.argv[1])).export_tables()
lake = open_store(sys.argv[2])
def die(con):
    for table in TABLES:
        incoming = tables[table]
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming")
    os.kill(os.getpid(), signal.SIGKILL)
lake.write(die, what="die before the commit")
"""


def test_the_next_migrate_deletes_what_a_killed_write_left(
    catalog: Catalog, tmp_path: Path, cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    data = tmp_path / "lake"
    url = catalog.new_lake(f"orphans_{os.getpid()}", data)
    env = {**cli_env, "PGPASSWORD": PASSWORD}
    local = tmp_path / "local" / "dbperf.duckdb"
    Store(local).save_many([synthetic(f"o{i}", i) for i in range(600)])  # beyond DuckLake's inlining
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(local), url],
        env={**env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr[-2000:]
    orphans = sorted(data.rglob("*.parquet"))
    assert orphans, "the killed writer wrote no data file: nothing to test"
    with open_store(url) as lake:
        assert lake.count() == 0  # nothing committed

    out = dbperf(env, "store", "migrate", "--store", str(local), "--to", url)
    assert out.returncode == 0, out.stderr
    assert f"deleted {len(orphans)} orphaned data file(s) an interrupted write had left" in out.stdout
    assert not any(path.exists() for path in orphans)
    with open_store(url) as lake:
        assert lake.count() == 600
    again = dbperf(env, "store", "migrate", "--store", str(local), "--to", url)  # nothing left to delete
    assert again.returncode == 0 and "orphaned" not in again.stdout, again.stderr
