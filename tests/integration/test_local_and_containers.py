"""The local MariaDB and the three container servers each run point select and read/write and land in
the store with plausible numbers and the pinned server version (issue 2, "What it must show")."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from support import SERVERS
from support.integration import ALL_TARGETS, assert_plausible

from harness import pipeline
from harness.config.servers import load_server
from harness.measure.session import QuietReporter
from harness.model import Server
from harness.servers.local import LocalProvider
from harness.servers.provider import DatasetCredentials, Launch, connect
from harness.store import Store

pytestmark = pytest.mark.integration

SCENARIOS = ("oltp_point_select", "oltp_read_write")
CASES = [
    pytest.param(server, scenario, id=f"{server}-{scenario}", marks=[pytest.mark.docker] * (server != "mariadb-local"))
    for server in ALL_TARGETS
    for scenario in SCENARIOS
]


@pytest.mark.parametrize(("server_name", "scenario"), CASES)
def test_runs_land_in_store(server_name, scenario, store_path, settings_factory):
    server = load_server(server_name, SERVERS)
    settings = settings_factory(store_path, server=server_name, profile="quick", time=2, warmup=1)

    results = pipeline.run(settings, scenario, QuietReporter(), server=server_name).runs

    assert len(results) == 1, "quick profile: one repetition at one thread count"
    result = results[0]
    assert result.ok, result.failure
    store = Store(store_path)
    assert store.count() == 1
    stored = store.get(result.run_id)
    # what was measured is what was stored (read back from DuckDB, not the object in memory)
    assert stored.run_id == result.run_id
    assert stored.scenario == scenario
    assert stored.profile == "quick"
    assert stored.server_version == result.server_version
    assert stored.metrics.qps == pytest.approx(result.metrics.qps)
    assert stored.metrics.p95_ms == pytest.approx(result.metrics.p95_ms)
    assert len(stored.intervals) == len(result.intervals)
    assert len(stored.histogram) == len(result.histogram)
    assert_plausible(
        stored, server, threads=result.threads, max_error_ratio=0.01 if scenario == "oltp_read_write" else 0.0
    )
    # the same run is kept as its own Parquet folder (parallel jobs never share a writable file)
    assert (store.runs_dir / result.run_id / "run.parquet").is_file()
    # server and sysbench on separate CPUs, as the server asks, recorded in the run
    assert stored.server_cpuset == (server.cpuset or "")
    assert stored.client_cpuset == (server.client_cpuset or "")
    assert "--rand-type=uniform" in stored.options.get("argv", "")


def test_a_starting_local_server_leaves_another_servers_temporary_tables(tmp_path: Path):
    """A starting mariadbd deletes every ``#sql*`` file in its tmpdir. With the shared $TMPDIR, a second
    server starting (or a datadir being initialised) deleted the first one's temporary tables: parallel
    initialisations failed with "Unknown table 'mysql.tmp_user_sys'". Each local server has its own."""
    server = Server(name="tmp", flavour="mariadb", version="10.11", provider="local", binary="mariadbd")
    provider = LocalProvider(server)
    credentials = DatasetCredentials.generate()
    for name in ("a", "b"):
        provider.initialize(tmp_path / name, credentials)
    with provider.serve(Launch(tmp_path / "a", credentials)) as first:
        conn = connect(
            first.endpoint.host,
            first.endpoint.port,
            first.endpoint.user,
            first.endpoint.password,
            first.endpoint.database,
        )
        try:
            with conn.cursor() as cur:
                cur.execute("CREATE TEMPORARY TABLE scratch (a INT) ENGINE=MyISAM")
                cur.execute("SELECT @@tmpdir")
                row = cur.fetchone()
                assert row is not None
                tmpdir = Path(row[0])
            files = sorted(p.name for p in tmpdir.glob("#sql*"))
            assert files, f"the temporary table's files are not in {tmpdir}"
            with provider.serve(Launch(tmp_path / "b", credentials)) as second:
                # the second server has started: the first one's temporary table is still on disk
                assert sorted(p.name for p in tmpdir.glob("#sql*")) == files
                with (
                    connect(
                        second.endpoint.host, second.endpoint.port, second.endpoint.user, second.endpoint.password
                    ) as other,
                    other.cursor() as cur,
                ):
                    cur.execute("SELECT @@tmpdir")
                    row = cur.fetchone()
                    assert row is not None and Path(row[0]) != tmpdir
            assert tmpdir != Path(tempfile.gettempdir()), tmpdir
        finally:
            conn.close()
