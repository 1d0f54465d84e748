"""The result store: Parquet folders + DuckDB, migrations, crash recovery, concurrent writers."""

from __future__ import annotations

import dataclasses
import multiprocessing
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.store_runs import T0, TESTBED, make_run

from harness.errors import StoreError
from harness.model import Metrics, RunResult
from harness.store import Store
from harness.store.rows import arrow_tables
from harness.store.schema import (
    DDL_V1,
    METRIC_COLUMNS,
    METRICS_TABLE_KEYS,
    RUN_COLUMNS,
    SCHEMA_VERSION,
)


def failed_run(run_id: str, index: int = 0, **overrides: object) -> RunResult:
    return make_run(
        run_id,
        index,
        status="failed",
        failure="server crashed: signal 11",
        totals=None,
        metrics=Metrics(),
        **overrides,
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "results" / "dbperf.duckdb")


def test_round_trip_keeps_every_field(store: Store) -> None:
    run = make_run("r-full", samples=True)
    store.save(run)
    loaded = store.get("r-full")
    assert loaded == run
    assert loaded.testbed == TESTBED
    assert loaded.testbed.fingerprint == TESTBED.fingerprint
    assert loaded.started_at.tzinfo is not None
    assert loaded.started_at.utcoffset() == timedelta(0)  # stored and returned in UTC
    assert loaded.started_at == T0
    assert loaded.intervals == run.intervals
    assert loaded.histogram == run.histogram
    assert loaded.probes.status_deltas == {"Com_select": 42000}
    assert loaded.metrics.cpu_per_txn == run.metrics.cpu_per_txn
    assert loaded.metrics.p999_ms == 19.5
    # without samples, the rest is still all there
    (light,) = store.runs()
    assert light == dataclasses.replace(run, intervals=(), histogram=())


def test_layout_and_parquet_glob(store: Store) -> None:
    assert store.path.parent.is_dir()  # the parent folder was created
    store.save(make_run("r1", 1, samples=True))
    folder = store.runs_dir / "r1"
    assert store.runs_dir == store.path.parent / "dbperf.runs"
    assert sorted(p.name for p in folder.iterdir()) == [
        "functions.parquet",
        "histogram.parquet",
        "intervals.parquet",
        "profile.parquet",
        "run.parquet",
    ]
    half = store.runs_dir / ".staging" / "half-written"  # a writer that died mid-way
    half.mkdir(parents=True)
    (half / "run.parquet").write_bytes(b"PAR1 truncated")
    con = duckdb.connect()
    rows = con.sql(
        f"SELECT run_id, qps FROM read_parquet('{store.runs_dir}/*/run.parquet', union_by_name=true)"
    ).fetchall()
    assert rows == [("r1", 1600.0)]
    con.close()
    assert store.count() == 1  # the staging leftover is not a run folder


def test_schema_matches_the_column_lists(store: Store) -> None:
    store.count()
    con = duckdb.connect(str(store.path))
    described = con.sql("DESCRIBE runs").fetchall()
    (version,) = con.sql("SELECT version FROM schema_version").fetchall()
    con.close()
    assert sorted((row[0], row[1].replace("TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ")) for row in described) == sorted(
        RUN_COLUMNS
    )
    assert version == (SCHEMA_VERSION,)
    # the work vector is derived from the stored probes (status deltas, syscalls), not a column of its own
    assert {f.name for f in dataclasses.fields(Metrics)} - {"work"} == set(METRIC_COLUMNS)


def test_filters_order_and_limit(store: Store) -> None:
    runs = [
        make_run("a", 0),
        make_run("b", 1, threads=16),
        make_run("c", 2, scenario="oltp_write_only", group_id="g2"),
        make_run("d", 3, server="mysql-8.4", source="import"),
        failed_run("e", 4),
    ]
    for run in runs:
        store.save(run)
    ids = lambda found: [r.run_id for r in found]  # noqa: E731
    assert ids(store.runs()) == ["e", "d", "c", "b", "a"]  # newest first
    assert ids(store.runs(limit=2)) == ["e", "d"]
    assert ids(store.runs(scenario="oltp_write_only")) == ["c"]
    assert ids(store.runs(server="mysql-8.4")) == ["d"]
    assert ids(store.runs(threads=16)) == ["b"]
    assert ids(store.runs(status="failed")) == ["e"]
    assert ids(store.runs(group_id="g2")) == ["c"]
    assert ids(store.runs(source="import")) == ["d"]
    assert ids(store.runs(scenario="oltp_read_only", threads=8, status="ok", source="run")) == ["a"]
    assert store.runs(scenario="nope") == []
    assert store.count() == 5

    table = store.metrics_table(threads=8)
    assert table.column_names == [*METRICS_TABLE_KEYS, *METRIC_COLUMNS]
    assert table.column("run_id").to_pylist() == ["e", "d", "c", "a"]
    assert table.column("qps").to_pylist() == [None, 1603.0, 1602.0, 1600.0]
    assert table.column("testbed_fingerprint").to_pylist()[0] == TESTBED.fingerprint
    assert table.schema.field("qps").type == pa.float64()
    assert store.metrics_table(group_id="g2", limit=1).num_rows == 1


def test_failed_run_keeps_its_reason(store: Store) -> None:
    store.save(failed_run("f1"))
    loaded = store.get("f1")
    assert loaded.status == "failed"
    assert loaded.failure == "server crashed: signal 11"
    assert loaded.totals is None
    assert loaded.metrics == Metrics()
    assert loaded == failed_run("f1")


def test_get_missing_names_the_id(store: Store) -> None:
    with pytest.raises(StoreError, match=r"no run 'nope'.*dbperf runs"):
        store.get("nope")


def test_saving_again_replaces_the_run(store: Store) -> None:
    store.save(make_run("r1", samples=True))
    store.save(make_run("r1", label="rerun"))
    assert store.count() == 1
    again = store.get("r1")
    assert again.label == "rerun"
    assert again.intervals == ()


def test_migrates_a_version_1_file(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    run = make_run("old-1", samples=True)
    tables = arrow_tables([run])
    runs_t, intervals_t, histogram_t = tables["runs"], tables["intervals"], tables["histogram"]
    v2_only = ["group_id", "label", "instr_per_txn", "cpu_per_txn", "server_cpuset", "client_cpuset"]
    con = duckdb.connect(str(path))
    for statement in DDL_V1:
        con.execute(statement)
    v1_columns = {row[0] for row in con.sql("DESCRIBE runs").fetchall()}
    assert not v1_columns & set(v2_only)
    v3_only = ["kind", "backend", "build_id", "requested_hash", "tool", "arch", "notes", "instr_per_query"]
    v4_only = ["testbed_class"]
    v5_only = ["syscalls", "cache_misses"]  # version 6, version 8
    v1_runs = runs_t.drop_columns(v2_only + v3_only + v4_only + v5_only)
    v1_runs = v1_runs.rename_columns(["target" if n == "server" else n for n in v1_runs.column_names])
    con.register("v1_runs", v1_runs)
    con.register("v1_intervals", intervals_t)
    con.register("v1_histogram", histogram_t)
    con.execute("INSERT INTO runs BY NAME SELECT * FROM v1_runs")
    con.execute("INSERT INTO intervals BY NAME SELECT * FROM v1_intervals")
    con.execute("INSERT INTO histogram BY NAME SELECT * FROM v1_histogram")
    con.close()

    store = Store(path)
    con = duckdb.connect(str(path))
    (version,) = con.sql("SELECT version FROM schema_version").fetchall()
    new_values = con.sql(f"SELECT {', '.join(v2_only)} FROM runs").fetchall()
    con.close()
    assert version == (SCHEMA_VERSION,)
    assert new_values == [(None,) * len(v2_only)]
    loaded = store.get("old-1")
    expected = dataclasses.replace(
        run,
        group_id="",
        label="",
        server_cpuset="",
        client_cpuset="",
        metrics=dataclasses.replace(run.metrics, cpu_per_txn=None, instr_per_txn=None, instr_per_query=None),
    )
    assert loaded == expected
    store.save(make_run("new-1", 1))
    assert store.get("new-1").group_id == "g1"
    assert store.count() == 2


def test_reads_parquet_folders_written_before_the_server_rename(tmp_path: Path) -> None:
    """Folders written by schema 2 name the server column "target"; rebuilding the file keeps the name."""
    store = Store(tmp_path / "s.duckdb")
    store.save(make_run("r-old", samples=True))
    folder = store.runs_dir / "r-old" / "run.parquet"
    table = pq.read_table(folder)
    pq.write_table(table.rename_columns(["target" if n == "server" else n for n in table.column_names]), folder)
    store.path.unlink()
    rebuilt = Store(store.path)
    assert rebuilt.get("r-old").server == make_run("r-old").server != ""


def test_refuses_a_newer_schema(store: Store) -> None:
    con = duckdb.connect(str(store.path))
    con.execute("UPDATE schema_version SET version = 99")
    con.close()
    with pytest.raises(StoreError, match=r"newer dbperf.*upgrade"):
        Store(store.path)


@pytest.mark.parametrize("content", [b"", b"this is not a database\n" * 300])
def test_refuses_a_file_that_is_not_duckdb(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.duckdb"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a DuckDB database") as info:
        Store(path)
    assert str(path) in str(info.value)


def test_refuses_a_duckdb_file_of_something_else(tmp_path: Path) -> None:
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a dbperf store"):
        Store(path)


def test_parquet_written_but_never_merged_is_picked_up(store: Store) -> None:
    # a process that died after writing its Parquet folder and before the DuckDB merge
    store._write_folder("crashed-1", arrow_tables([make_run("crashed-1", 1, samples=True)]))
    store._write_folder("crashed-2", arrow_tables([make_run("crashed-2", 2)]))
    reopened = Store(store.path)
    assert reopened.count() == 2  # a read picks both up
    assert reopened.get("crashed-1") == make_run("crashed-1", 1, samples=True)
    store._write_folder("crashed-3", arrow_tables([make_run("crashed-3", 3)]))
    store.save(make_run("next", 4))  # and so does the next save
    assert [r.run_id for r in reopened.runs()] == ["next", "crashed-3", "crashed-2", "crashed-1"]
    assert store.ingest_pending() == 0


def test_failed_merge_keeps_the_run_for_later(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> int:
        raise duckdb.IOException("disk full")

    monkeypatch.setattr(Store, "_merge", broken)
    with pytest.raises(StoreError, match=r"kept in .*r1.*merges it"):
        store.save(make_run("r1"))
    monkeypatch.undo()
    assert (store.runs_dir / "r1" / "run.parquet").is_file()
    assert store.ingest_pending() == 1
    assert store.count() == 1


def test_rebuilds_duckdb_from_the_parquet_folders(store: Store) -> None:
    store.save(make_run("r1", 1, samples=True))
    store.save_many([make_run(f"b{i}", 10 + i) for i in range(5)])
    store.path.unlink()
    rebuilt = Store(store.path)
    assert rebuilt.count() == 6
    assert rebuilt.get("r1") == make_run("r1", 1, samples=True)


def test_batch_and_single_folder_with_the_same_run(store: Store) -> None:
    store._write_folder("r1", arrow_tables([make_run("r1", 1, label="single")]))
    store.save_many([make_run("r1", 1, label="batch"), make_run("r2", 2)])  # merged after the folder
    assert store.count() == 2
    assert store.get("r1").label == "batch"


def _save_many_times(path: str, worker: int, count: int) -> None:
    store = Store(Path(path))
    for i in range(count):
        store.save(make_run(f"w{worker}-{i:03d}", i, samples=i % 2 == 0))


def test_concurrent_saves_from_several_processes(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "dbperf.duckdb"
    workers, per_worker = 4, 20
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_save_many_times, args=(str(path), w, per_worker)) for w in range(workers)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=900)  # a state (the process ended), not a time limit: a loaded machine took 351 s
    assert [proc.exitcode for proc in procs] == [0] * workers
    store = Store(path)
    assert store.count() == workers * per_worker
    assert len({r.run_id for r in store.runs()}) == workers * per_worker
    assert store.get("w3-018").intervals == make_run("x", samples=True).intervals


def test_save_many_ten_thousand_runs(store: Store) -> None:
    runs = [make_run(f"bulk-{i:05d}", i, threads=2 ** (i % 6)) for i in range(10_000)]
    started = time.perf_counter()
    store.save_many(runs)
    elapsed = time.perf_counter() - started
    assert elapsed < 15, f"save_many of 10k runs took {elapsed:.1f} s"
    assert store.count() == 10_000
    table = store.metrics_table(threads=32)
    assert table.num_rows == 10_000 // 6 + (1 if 10_000 % 6 > 5 else 0)
    assert store.runs(limit=1)[0] == runs[-1]
    assert len(list(store.runs_dir.iterdir())) == 2  # the batch folder and .staging


def test_save_many_refuses_repeated_ids(store: Store) -> None:
    with pytest.raises(StoreError, match="repeat"):
        store.save_many([make_run("x"), make_run("x")])
    assert store.count() == 0


def test_run_id_must_name_a_folder(store: Store) -> None:
    with pytest.raises(StoreError, match="cannot name a folder"):
        store.save(make_run("../escape"))


def test_naive_timestamps_are_taken_as_utc(store: Store) -> None:
    naive = datetime(2025, 1, 1, 12, 0)
    store.save(make_run("naive", started_at=naive, finished_at=naive + timedelta(seconds=40)))
    assert store.get("naive").started_at == naive.replace(tzinfo=UTC)
