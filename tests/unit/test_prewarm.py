"""Cost runs' prewarm: a counted server that does not load its buffer pool at start-up (MySQL, whose counted
servers run with the load off) reads every index of the scenario's tables once before the warm-up, so the
window reads no page from disk whatever the warm-up's length (MySQL 9.7's counts fell 1.9-7 % per 4x
warm-up without it; docs/work-vector.md, "Prewarm"). Servers that load their pool themselves (MariaDB)
are left as they were, so their counts do not change."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.errors import ServerError
from harness.measure import prewarm as module
from harness.measure.cost import rebuild_on, run_options
from harness.measure.prewarm import Prewarm, index_query, scan_statements, wanted
from harness.model import CostSettings
from harness.servers.callgrind import Callgrind


def test_only_servers_that_do_not_load_their_pool_at_start_up_are_prewarmed():
    assert wanted({"innodb_buffer_pool_load_at_startup": "OFF"})
    assert wanted({"innodb_buffer_pool_load_at_startup": "off"})
    assert not wanted({"innodb_buffer_pool_load_at_startup": "ON"})
    assert not wanted({})  # not InnoDB's variable at all: nothing to prewarm
    # a counted MySQL server is (COUNTED_VARIABLES); a counted MariaDB server keeps its own load (ON)
    assert wanted(Callgrind.variables("mysql", {}))
    assert "innodb_buffer_pool_load_at_startup" not in Callgrind.variables("mariadb", {})
    # a MySQL server whose own configuration loads the pool is not prewarmed either
    assert not wanted(Callgrind.variables("mysql", {"innodb_buffer_pool_load_at_startup": "ON"}))


def test_every_index_is_listed_with_its_first_column_primary_key_first():
    sql, params = index_query("sbtest", ["sbtest1", "sbtest2"])
    assert params == ("sbtest", "sbtest1", "sbtest2")
    assert sql.count("%s") == 3
    assert "SEQ_IN_INDEX = 1" in sql
    assert "INDEX_NAME = 'PRIMARY' DESC" in sql


def test_each_index_is_scanned_by_a_statement_that_must_read_every_leaf_page():
    statements = scan_statements([("sbtest1", "PRIMARY", "id"), ("sbtest1", "k_1", "k"), ("we`ird", "i`x", "c`ol")])
    assert statements == [
        "SELECT SUM(LENGTH(`id`)) FROM `sbtest1` FORCE INDEX (`PRIMARY`)",
        "SELECT SUM(LENGTH(`k`)) FROM `sbtest1` FORCE INDEX (`k_1`)",
        "SELECT SUM(LENGTH(`c``ol`)) FROM `we``ird` FORCE INDEX (`i``x`)",
    ]
    # never COUNT(*): MySQL may answer it with InnoDB's parallel reader or from the smallest index
    assert not any("COUNT" in s for s in statements)
    assert scan_statements([("history", "", "h_c_id")]) == ["SELECT SUM(LENGTH(`h_c_id`)) FROM `history`"]


class _Cursor:
    """A server with the given indexes whose scans read ``pages`` pages and leave reads pending a while."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.row: Any = None
        self.rows: list[Any] = []

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str, params: tuple[str, ...] = ()) -> None:
        s = self.server
        s.log.append(sql)
        if "information_schema.STATISTICS" in sql:
            self.rows = [row for row in s.indexes if row[0] in params[1:]]
        elif "information_schema.COLUMNS" in sql:
            self.rows = [row for row in s.columns if row[0] in params[1:]]
        elif sql.startswith("SELECT SUM"):
            s.reads += s.pages
            s.pending = s.pending_polls
            self.rows = [(1,)]
        elif params == ("Innodb_buffer_pool_reads",):
            self.row = (params[0], str(s.reads))
        elif params == ("Innodb_buffer_pool_read_ahead",):
            self.row = (params[0], str(s.read_ahead))
        elif params == ("Innodb_buffer_pool_pages_free",):
            self.row = (params[0], str(s.free))
        elif params == ("Innodb_buffer_pool_pages_total",):
            self.row = (params[0], "8191")
        elif params == ("Innodb_data_pending_reads",):
            s.log.append("pending")
            self.row = (params[0], str(s.pending))
            s.pending = max(0, s.pending - 1)
        s.answer(self, sql, params)

    def fetchall(self) -> list[Any]:
        return self.rows

    def fetchone(self) -> Any:
        return self.row


class _Server:
    def __init__(self, indexes: list[tuple[str, str, str]], pages: int = 10, pending_polls: int = 0) -> None:
        self.indexes, self.pages, self.pending_polls = indexes, pages, pending_polls
        self.columns = [("sbtest1", "id"), ("sbtest2", "id"), ("history", "h_c_id")]
        self.log: list[str] = []
        self.reads, self.read_ahead, self.pending, self.free = 100, 7, 0, 8000

    def cursor(self) -> _Cursor:
        return _Cursor(self)

    def answer(self, cursor: _Cursor, sql: str, params: tuple[Any, ...]) -> None:
        """What a test's own server adds to the answer of ``sql`` (nothing here)."""


INDEXES = [("sbtest1", "PRIMARY", "id"), ("sbtest1", "k_1", "k"), ("sbtest2", "PRIMARY", "id"), ("sbtest2", "k_1", "k")]


def test_the_prewarm_scans_every_index_then_waits_for_pending_reads():
    server = _Server(INDEXES, pages=10, pending_polls=3)
    done = module._scan(server, "sbtest", ["sbtest1", "sbtest2"], time.monotonic() + 60, poll_s=0)  # type: ignore[arg-type]
    scans = [s for s in server.log if s.startswith("SELECT SUM")]
    assert len(scans) == 4
    assert done.indexes == 4 and done.pages_read == 40
    assert server.pending == 0  # polled until nothing was pending, after the last scan
    assert server.log.count("pending") == 3 + 1 + 1
    assert server.log.index("pending") > server.log.index(scans[-1])
    assert done.describe() == "4 indexes, 40 pages read"


def test_a_table_without_an_index_is_scanned_whole():
    """TPC-C's ``history`` has no index: InnoDB's hidden clustered index holds its rows, unlisted."""
    server = _Server(INDEXES)
    done = module._scan(server, "tpcc", ["sbtest1", "history"], time.monotonic() + 60, 0)  # type: ignore[arg-type]
    scans = [s for s in server.log if s.startswith("SELECT SUM")]
    assert scans[-1] == "SELECT SUM(LENGTH(`h_c_id`)) FROM `history`"
    assert len(scans) == 3 and done.indexes == 3
    sql, params = module.column_query("tpcc", ["history"])
    assert params == ("tpcc", "history") and "ORDINAL_POSITION = 1" in sql


def test_a_missing_table_or_reads_that_never_end_fail_the_run():
    with pytest.raises(ServerError, match=r"no such table.*sbtest3"):
        module._scan(_Server(INDEXES), "sbtest", ["sbtest1", "sbtest3"], time.monotonic() + 60, 0)  # type: ignore[arg-type]
    with pytest.raises(ServerError, match="still pending"):
        module._scan(_Server(INDEXES, pending_polls=10**9), "sbtest", ["sbtest1"], time.monotonic() + 0.05, 0)  # type: ignore[arg-type]


def test_a_prewarmed_cost_run_records_what_the_prewarm_read():
    settings = CostSettings(warmup_events=300, events=900, warmup_seed=5, seed=9)
    assert run_options(settings, ["sysbench", "run"], Prewarm(4, 1234, 2.0).describe())["prewarm"] == (
        "4 indexes, 1234 pages read"
    )
    assert "prewarm" not in run_options(settings, ["sysbench", "run"])


def test_tables_that_do_not_fit_the_pool_are_said_so():
    """A pool with no free page left after the prewarm evicted pages the scans read: the window reads from
    disk again (the full profile's 8 x 1,000,000 rows against MySQL's 512 MiB)."""
    fits = module._scan(_Server(INDEXES), "sbtest", ["sbtest1"], time.monotonic() + 60, 0)  # type: ignore[arg-type]
    assert fits.fits and fits.warning() == "" and fits.pool_pages == 8191
    full = _Server(INDEXES)
    full.free = 0
    done = module._scan(full, "sbtest", ["sbtest1"], time.monotonic() + 60, 0)  # type: ignore[arg-type]
    assert not done.fits
    assert "do not fit the server's buffer pool" in done.warning() and "8,191 in the pool" in done.warning()
    assert done.describe().endswith("pool full")


def test_the_undo_prewarm_writes_once_per_rollback_segment_on_its_own_table_and_keeps_nothing():
    statements = module.undo_statements(3)
    assert statements[0].startswith("CREATE TABLE IF NOT EXISTS `dbperf_prewarm`")
    body = statements[2:]
    assert len(body) == 3 * 4 and body.count("BEGIN") == 3 and body.count("ROLLBACK") == 3
    assert all("sbtest" not in s and "usertable" not in s for s in statements)  # never the scenario's tables
    # an insert (insert undo) and an update (update undo) in each transaction
    assert any(s.startswith("INSERT") for s in body) and any(s.startswith("UPDATE") for s in body)


def test_the_undo_prewarm_goes_twice_round_the_rollback_segments_before_the_scans():
    class _Undo(_Server):
        def answer(self, cursor: _Cursor, sql: str, params: tuple[Any, ...]) -> None:
            if sql == "SELECT @@innodb_rollback_segments":
                cursor.row = (128,)
            elif "SPACE_TYPE = 'Undo'" in sql:
                cursor.row = (2,)

    server = _Undo(INDEXES)
    done = module._scan(server, "sbtest", ["sbtest1"], time.monotonic() + 60, 0, undo=True)  # type: ignore[arg-type]
    assert done.undo_transactions == 512 and server.log.count("ROLLBACK") == 512
    assert max(i for i, s in enumerate(server.log) if s == "ROLLBACK") < server.log.index(
        next(s for s in server.log if s.startswith("SELECT SUM"))
    )
    assert done.describe() == "2 indexes, 20 pages read, 512 undo transactions"


def test_the_prewarm_computes_exact_statistics_after_the_scans_and_puts_the_sample_size_back():
    """ycsb_e on MySQL 9.7: the snapshot's statistics were sampled during the load, a background recalculation
    replaced them during the warm-up at a moment that followed thread timing, from 20 random pages, and the
    window's record buffer (rows InnoDB reads past LIMIT) followed the optimiser's estimates: 543,619 or
    575,318 instructions per operation at the same W (docs/work-vector.md)."""

    class _Stats(_Server):
        def answer(self, cursor: _Cursor, sql: str, params: tuple[Any, ...]) -> None:
            if sql == "SELECT @@GLOBAL.innodb_stats_persistent_sample_pages":
                cursor.row = (20,)
            elif sql.startswith("SET GLOBAL"):
                self.log[-1] = f"{sql} -> {params[0]}"
            elif sql.startswith("ANALYZE"):
                table = sql.split("`")[1]
                cursor.rows = [(f"sbtest.{table}", "analyze", "status", "OK")]

    server = _Stats(INDEXES)
    done = module._scan(server, "sbtest", ["sbtest1", "sbtest2"], time.monotonic() + 60, 0, analyze=True)  # type: ignore[arg-type]
    assert done.analyzed == 2
    analyze = [i for i, s in enumerate(server.log) if s.startswith("ANALYZE")]
    scans = [i for i, s in enumerate(server.log) if s.startswith("SELECT SUM")]
    assert len(analyze) == 2 and min(analyze) > max(scans)  # every page is in the pool when it reads them
    sets = [s for s in server.log if s.startswith("SET GLOBAL")]
    assert sets == [
        f"SET GLOBAL innodb_stats_persistent_sample_pages = %s -> {module.EXACT_SAMPLE_PAGES}",
        "SET GLOBAL innodb_stats_persistent_sample_pages = %s -> 20",
    ]
    assert done.describe() == "4 indexes, 40 pages read, exact statistics of 2 tables"
    assert module.analyze_statements(["we`ird"]) == ["ANALYZE TABLE `we``ird`"]
    # without it (the default), no statistics are touched
    plain = _Stats(INDEXES)
    assert module._scan(plain, "sbtest", ["sbtest1"], time.monotonic() + 60, 0).analyzed == 0  # type: ignore[arg-type]
    assert not any(s.startswith(("ANALYZE", "SET GLOBAL")) for s in plain.log)


def test_an_analyze_that_fails_fails_the_run_and_still_puts_the_sample_size_back():
    class _Broken(_Server):
        def answer(self, cursor: _Cursor, sql: str, params: tuple[Any, ...]) -> None:
            if sql == "SELECT @@GLOBAL.innodb_stats_persistent_sample_pages":
                cursor.row = (20,)
            elif sql.startswith("ANALYZE"):
                cursor.rows = [("sbtest.sbtest1", "analyze", "Error", "Table is read only")]
            elif sql.startswith("SET GLOBAL"):
                self.log[-1] = f"SET GLOBAL -> {params[0]}"

    server = _Broken(INDEXES)
    with pytest.raises(ServerError, match="read only"):
        module._scan(server, "sbtest", ["sbtest1"], time.monotonic() + 60, 0, analyze=True)  # type: ignore[arg-type]
    assert server.log[-1] == "SET GLOBAL -> 20"


def test_a_counted_mysql_server_never_recalculates_statistics_in_the_background():
    assert Callgrind.variables("mysql", {})["innodb_stats_auto_recalc"] == "OFF"
    assert "innodb_stats_auto_recalc" not in Callgrind.variables("mariadb", {})


def test_a_rebuild_before_the_window_alters_each_table_then_reads_every_index_of_them_back():
    """MySQL 9.7 leaves a rebuilt index's pages out of the buffer pool: the rebuild scans them back in and
    waits for pending reads, as the prewarm does, so the window reads no page from disk."""
    server = _Server(INDEXES, pages=10, pending_polls=2)
    rebuild_on(server, "sbtest", ["sbtest1", "sbtest2"], time.monotonic() + 60, poll_s=0)  # type: ignore[arg-type]
    assert server.log[:2] == ["ALTER TABLE `sbtest1` FORCE", "ALTER TABLE `sbtest2` FORCE"]
    scans = [s for s in server.log if s.startswith("SELECT SUM")]
    assert len(scans) == 4 and server.log.index(scans[0]) > 1
    assert server.pending == 0 and server.log.index("pending") > server.log.index(scans[-1])
    # a table without an index of its own is read back whole, as the prewarm reads it
    bare = _Server(INDEXES)
    rebuild_on(bare, "tpcc", ["sbtest1", "history"], time.monotonic() + 60, poll_s=0)  # type: ignore[arg-type]
    assert "ALTER TABLE `history` FORCE" in bare.log
    assert [s for s in bare.log if s.startswith("SELECT SUM")][-1] == "SELECT SUM(LENGTH(`h_c_id`)) FROM `history`"


def test_a_rebuild_that_fails_names_the_step_and_closes_its_connection(monkeypatch: pytest.MonkeyPatch):
    import pymysql

    from harness.measure import cost
    from harness.model.endpoint import Endpoint

    class _Refusing(_Server):
        closed = False

        def answer(self, cursor: _Cursor, sql: str, params: tuple[Any, ...]) -> None:
            if sql.startswith("ALTER TABLE"):
                raise pymysql.err.OperationalError(1205, "Lock wait timeout exceeded")

        def close(self) -> None:
            self.closed = True

    server = _Refusing(INDEXES)
    monkeypatch.setattr(cost, "long_connection", lambda *_: server)
    endpoint = Endpoint("127.0.0.1", 3306, "u", "p", "sbtest")
    with pytest.raises(ServerError, match=r"cannot rebuild the tables before the window: .*Lock wait timeout"):
        cost.rebuild_tables(endpoint, ["sbtest1"])
    assert server.closed
