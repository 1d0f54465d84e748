"""The shared store: a DuckLake on a real PostgreSQL catalog, written by real dbperf processes at once.

A throwaway PostgreSQL 15 (``tools/postgres.py``) serves the catalogs; TCP logins need the
superuser's password, which every client takes from ``PGPASSWORD`` (never from the store setting).
Each test gets its own catalog database and data folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO
from support.catalog import PASSWORD, Catalog
from support.ci_repos import git
from support.cli import dbperf_argv
from support.integration import reaping
from support.lakes import TESTBED_A, TESTBED_B, dbperf, synthetic

from harness.errors import StoreError
from harness.model import CostProfile, FunctionCost
from harness.pipeline import history
from harness.store import Store, open_store
from harness.store.lake import LakeStore
from harness.store.schema import SCHEMA_VERSION

pytestmark = pytest.mark.integration

QUICK = ["--profile", "quick", "--time", "2", "--warmup", "0", "--repetitions", "1", "--threads", "1"]


_databases = iter(range(1_000_000))


@pytest.fixture
def lake_url(catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A brand-new lake: its own catalog database and data folder; PGPASSWORD set for this process."""
    url = catalog.new_lake(f"lake_{os.getpid()}_{next(_databases)}", tmp_path / "lake")
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    return url


@pytest.fixture
def lake_env(cli_env: dict[str, str], lake_url: str) -> dict[str, str]:
    return {**cli_env, "DBPERF_STORE": lake_url, "PGPASSWORD": PASSWORD}


def duplicates(store: LakeStore) -> dict[str, int]:
    """Rows that appear more than once (same run id and sample key) in any table.

    Histogram buckets have no unique key: sysbench prints their values with 3 decimals, so two buckets
    below ~0.05 ms can share a value within one run. A run saved twice shows as a run whose every
    bucket appears twice.
    """
    keys = {"runs": "run_id", "intervals": "run_id, seq", "profiles": "run_id"}
    found = {}
    for table, key in keys.items():
        sql = f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY ALL HAVING count(*) > 1)"
        found[table] = int(store.con.execute(sql).fetchall()[0][0])
    sql = (
        "SELECT count(*) FROM (SELECT run_id FROM histogram GROUP BY run_id "
        "HAVING count(*) >= 2 * count(DISTINCT (value_ms, count)))"
    )
    found["histogram"] = int(store.con.execute(sql).fetchall()[0][0])
    return found


@pytest.fixture
def fleet_repo(tmp_path: Path) -> Path:
    """A git repository whose branch adds a copy of the embedded MariaDB with one harmless variable:
    `ci run` compares it with the base's server (A/B pairs, as many as the design needs)."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "servers", root / "servers")
    shutil.copytree(REPO / "scenarios", root / "scenarios", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (root / "pyproject.toml").write_text("[tool.dbperf]\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "new-server")
    fleet = root / "servers" / "mariadb-fleet.toml"
    text = (root / "servers" / "mariadb-local.toml").read_text().replace('"mariadb-local"', '"mariadb-fleet"')
    fleet.write_text(text + '\n[variables]\nmax_allowed_packet = "32M"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "add a server")
    return root


def test_runners_and_a_ci_run_write_one_history_at_once(lake_env: dict[str, str], fleet_repo: Path, tmp_path: Path):
    writers = [
        subprocess.Popen(
            [*dbperf_argv(), "run", "--scenario", "oltp_point_select", "--server", "mariadb-local", *QUICK, "--json"],
            cwd=REPO, env=lake_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]  # fmt: skip
    out = tmp_path / "ci-out"
    ci = subprocess.Popen(
        [*dbperf_argv(), "ci", "run", "--base", "main", "--head", "new-server", "--scenario", "oltp_point_select",
         "--out", str(out), "--profile", "quick", "--time", "1", "--warmup", "0", "--threads", "1"],
        cwd=fleet_repo, env={**lake_env, "DBPERF_COST": "false"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    run_ids = []
    with reaping(*writers, ci):
        for proc in writers:
            stdout, stderr = proc.communicate(timeout=900)
            assert proc.returncode == 0, stderr[-3000:]
            run_ids.append(json.loads(stdout)["run_id"])
        stdout, stderr = ci.communicate(timeout=900)
        assert ci.returncode == 0, (stdout + stderr)[-3000:]
    ci_runs = [r.run_id for r in Store(out / "dbperf.duckdb").runs()]
    assert ci_runs, (stdout + stderr)[-3000:]

    with open_store(lake_env["DBPERF_STORE"]) as lake:
        assert isinstance(lake, LakeStore)
        stored = {r.run_id: r for r in lake.runs(with_samples=True)}
        missing = {"runs": sorted(set(run_ids) - set(stored)), "ci": sorted(set(ci_runs) - set(stored))}
        assert set(stored) == set(run_ids) | set(ci_runs), (missing, len(stored))  # every run, nothing else
        assert duplicates(lake) == {"runs": 0, "intervals": 0, "histogram": 0, "profiles": 0}
        for run_id in run_ids:
            run = stored[run_id]
            assert run.ok and run.server == "mariadb-local" and run.intervals and run.histogram, run_id
        assert {stored[i].server for i in ci_runs} == {"mariadb-local@base", "mariadb-fleet"}
        assert {stored[i].label for i in ci_runs} == {"base", "head"}

    # the reading commands work on the lake unchanged
    listed = dbperf(lake_env, "runs", "--limit", "0", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {r["run_id"] for r in json.loads(listed.stdout)} == set(run_ids) | set(ci_runs)
    report = dbperf(lake_env, "report", "--all", "--format", "markdown")
    assert report.returncode == 0, report.stderr
    assert "oltp_point_select" in report.stdout
    bmf = dbperf(lake_env, "export", "bmf", "--all", "--out", str(tmp_path / "bmf.json"))
    assert bmf.returncode == 0, bmf.stderr
    assert json.loads((tmp_path / "bmf.json").read_text())
    info = dbperf(lake_env, "store", "info")
    assert info.returncode == 0, info.stderr
    assert f"runs: {len(run_ids) + len(ci_runs)}" in info.stdout and "DuckLake" in info.stdout
    assert "fleet-secret" not in listed.stdout + listed.stderr + info.stdout + report.stdout


VICTIM = """
import sys
from harness.store import open_store
from support.lakes import synthetic

url, log, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(url)
print("ready", flush=True)
batch = start
while True:
    store.save_many([synthetic(f"v{batch}-{i}", i) for i in range(300)])
    with open(log, "a") as handle:
        handle.write(f"{batch}\\n")
    batch += 1
"""

STEADY = """
import sys
from harness.store import open_store
from support.lakes import synthetic

store = open_store(sys.argv[1])
for i in range(int(sys.argv[2])):
    store.save(synthetic(f"steady-{i}", i))
"""


def _python(code: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    path = f"{REPO}{os.pathsep}{REPO / 'tests'}"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env={**env, "PYTHONPATH": path},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _committing(watch: LakeStore, application: str) -> bool:
    """True while the victim's PostgreSQL backend runs DuckLake's commit (the snapshot insert or COMMIT)."""
    sql = (
        f"SELECT count(*) FROM pg_stat_activity WHERE application_name = ''{application}'' AND state = ''active'' AND "
        "(query ILIKE ''%ducklake_snapshot%'' OR query ILIKE ''COMMIT%'')"
    )
    rows = watch.con.execute(f"SELECT * FROM postgres_query('lake_lock', '{sql}')").fetchall()
    return bool(rows[0][0])


def test_writers_killed_mid_commit_leave_the_lake_readable(lake_url: str, tmp_path: Path, cli_env: dict[str, str]):
    env = {**cli_env, "PGPASSWORD": PASSWORD}
    watch = open_store(lake_url)
    assert isinstance(watch, LakeStore)
    steady = _python(STEADY, lake_url, "40", env=env)
    with reaping(steady):
        log = tmp_path / "done.log"
        log.touch()
        outcomes = []
        for round_number in range(3):
            victim_url = f"{lake_url} application_name=victim{round_number}"
            victim = _python(VICTIM, victim_url, str(log), str(round_number * 1000), env=env)
            with reaping(victim):
                assert victim.stdout is not None
                assert victim.stdout.readline().strip() == "ready", victim.stderr.read() if victim.stderr else ""
                deadline = time.monotonic() + 240
                while not _committing(watch, f"victim{round_number}") and time.monotonic() < deadline:
                    time.sleep(0.01)
                victim.send_signal(signal.SIGKILL)
                victim.communicate(timeout=60)  # reaps it and closes its pipes
            outcomes.append(time.monotonic() < deadline)
        assert all(outcomes), "never caught a victim committing"
        _, steady_err = steady.communicate(timeout=600)
        assert steady.returncode == 0, steady_err[-3000:]

    done = {int(line) for line in log.read_text().split()}
    with open_store(lake_url) as lake:
        assert isinstance(lake, LakeStore)
        counts = dict(lake.con.execute("SELECT split_part(run_id, '-', 1), count(*) FROM runs GROUP BY ALL").fetchall())
        assert duplicates(lake) == {"runs": 0, "intervals": 0, "histogram": 0, "profiles": 0}
        ((orphans,),) = lake.con.execute("SELECT count(*) FROM intervals ANTI JOIN runs USING (run_id)").fetchall()
        assert orphans == 0
        ((short,),) = lake.con.execute(
            "SELECT count(*) FROM (SELECT run_id FROM intervals GROUP BY run_id HAVING count(*) <> 10)"
        ).fetchall()
        assert short == 0
    assert counts.pop("steady") == 40  # the other writer lost nothing
    for batch in done:
        assert counts.get(f"v{batch}") == 300, batch  # every save that returned is there
    assert all(n == 300 for n in counts.values()), counts  # the one in flight: all or nothing
    watch.close()


def test_migrate_local_to_lake_and_back_keeps_every_run(lake_url: str, tmp_path: Path, cli_env: dict[str, str]):
    env = {**cli_env, "PGPASSWORD": PASSWORD}
    profile = CostProfile(
        total_ir=5_000_000, functions=(FunctionCost("mysql_select", 3_000_000, 4_000_000, 1000),), dump=b"\x1f\x8b-dump"
    )
    runs = [synthetic(f"m{i}", i) for i in range(50)]
    runs[0] = dataclasses.replace(runs[0], kind="cost", cost_profile=profile)
    local = tmp_path / "local" / "dbperf.duckdb"
    Store(local).save_many(runs)

    there = dbperf(env, "store", "migrate", "--store", str(local), "--to", lake_url)
    assert there.returncode == 0, there.stderr
    assert "copied 50 run(s)" in there.stdout and "every table checked" in there.stdout
    again = dbperf(env, "store", "migrate", "--store", str(local), "--to", lake_url)  # replaces, never duplicates
    assert again.returncode == 0, again.stderr
    back = tmp_path / "back" / "dbperf.duckdb"
    home = dbperf(env, "store", "migrate", "--store", lake_url, "--to", str(back))
    assert home.returncode == 0, home.stderr

    with open_store(lake_url) as lake:
        assert lake.count() == 50
        assert duplicates(lake) == {"runs": 0, "intervals": 0, "histogram": 0, "profiles": 0}  # type: ignore[arg-type]
        assert lake.get("m0") == runs[0]
    returned = Store(back)
    assert returned.count() == 50
    assert {r.run_id: r for r in returned.runs(with_samples=True, with_profiles=True)} == {r.run_id: r for r in runs}
    # the local copy is a real local store: its Parquet folders alone rebuild it
    back.unlink()
    assert Store(back).count() == 50


def test_trend_site_from_the_lake_keeps_testbeds_apart(lake_url: str, tmp_path: Path, cli_env: dict[str, str]):
    with open_store(lake_url) as lake:
        runs = [synthetic(f"a{i}", i, testbed=TESTBED_A, qps=1000.0) for i in range(60)]
        runs += [synthetic(f"b{i}", i, testbed=TESTBED_B, qps=3000.0) for i in range(60)]
        lake.save_many(runs)
        data = history(lake.metrics_table())
    points = data.points.to_pylist()
    assert {p["qps"] for p in points} == {1000.0, 3000.0}  # never averaged across machines
    by_line = {p["line"] for p in points}
    assert len(by_line) == 2 and all("mariadb-local" in line for line in by_line)
    assert len({p["series"] for p in points}) == 2
    site = dbperf(
        {**cli_env, "PGPASSWORD": PASSWORD},
        "trend",
        "--out",
        str(tmp_path / "site"),
        "--no-images",
        "--store",
        lake_url,
    )
    assert site.returncode == 0, site.stderr
    page = (tmp_path / "site" / "index.html").read_text()
    for line in by_line:
        assert json.dumps(line)[1:-1] in page


def test_a_newer_lake_is_refused_with_the_fix(lake_url: str):
    with open_store(lake_url) as lake:
        assert isinstance(lake, LakeStore)
        lake.con.execute("UPDATE schema_version SET version = 99")
    expected = rf"schema version 99, this dbperf knows up to {SCHEMA_VERSION}: upgrade dbperf"
    with pytest.raises(StoreError, match=expected):
        open_store(lake_url)


def test_a_version_3_lake_gains_the_hardware_class(lake_url: str):
    """Runners with this dbperf add the ``testbed_class`` column (version 4), and every later version's
    tables and columns, to a lake older runners made; the runs already there keep their testbed and
    fingerprint."""
    with open_store(lake_url) as lake:
        assert isinstance(lake, LakeStore)
        lake.save(synthetic("old", 0))
        lake.con.execute("ALTER TABLE runs DROP COLUMN testbed_class")
        # and what later versions added (5: the operations table, 6: the work vector's syscalls column)
        lake.con.execute("DROP TABLE operations")
        lake.con.execute("ALTER TABLE runs DROP COLUMN syscalls")
        lake.con.execute("UPDATE schema_version SET version = 3")
    classed = dataclasses.replace(TESTBED_A, hardware_class="epyc-16")
    with open_store(lake_url) as lake:
        assert isinstance(lake, LakeStore)
        ((version,),) = lake.con.execute("SELECT max(version) FROM schema_version").fetchall()
        assert version == SCHEMA_VERSION
        lake.save(synthetic("new", 1, testbed=classed))
        old, new = lake.get("old"), lake.get("new")
    assert old.testbed == TESTBED_A and old.testbed.fingerprint == TESTBED_A.fingerprint
    assert new.testbed.hardware_class == "epyc-16" and new.testbed.fingerprint != TESTBED_A.fingerprint
