"""Cost runs' prewarm, before the warm-up: every rollback segment written through once, and every index of
the scenario's tables read once into the buffer pool.

The rule: a counted server that does not load its buffer pool at start-up (MySQL, with
``innodb_buffer_pool_load_at_startup`` off in ``COUNTED_VARIABLES``) is prewarmed, so its measured window
finds the same pool, undo segments and statistics whatever the warm-up's length W:

- the undo prewarm: twice per rollback segment, one transaction inserts a row into and updates a row of
  the prewarm's own table (:data:`UNDO_TABLE`) and rolls back, so every rollback segment holds a cached
  insert and update undo segment before the warm-up, and the scenario's tables are not touched;
- the index scans: each index read in full, on one connection, by a statement no optimiser can answer
  without reading every leaf page (``SELECT SUM(LENGTH(col)) FROM t FORCE INDEX (idx)``, ``col`` the
  index's first column); a table without an index of its own (TPC-C's ``history``) is scanned whole on its
  first column; then the prewarm waits until no read is pending, so no page arrives during the window;
- the statistics: ``ANALYZE TABLE`` of each table from every leaf page (:data:`EXACT_SAMPLE_PAGES`), so the
  optimiser's row estimates are the same on every fresh server.

Servers that load their buffer pool themselves (MariaDB) are not prewarmed: :func:`wanted` decides from the
server's own ``innodb_buffer_pool_load_at_startup``. What each part fixed, with the counts measured without
it: docs/work-vector.md ("Prewarm", "The other MySQL scenarios with the prewarm").
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pymysql

from harness.errors import ServerError
from harness.model.endpoint import Endpoint
from harness.servers.provider import connect

PREWARM_TIMEOUT_S = 3600.0
"""How long the scans may take (uninstrumented under valgrind: seconds for the quick and ci datasets)."""
_OFF = {"OFF", "0"}


def wanted(variables: dict[str, str]) -> bool:
    """Whether a counted server needs the prewarm: it does not load its buffer pool at start-up."""
    value = variables.get("innodb_buffer_pool_load_at_startup")
    return value is not None and value.strip().upper() in _OFF


@dataclass(frozen=True)
class Prewarm:
    """What a prewarm read: the indexes scanned, the pages they brought in from disk, and the pool's pages
    left free after it (0: the tables did not fit, the scans evicted pages of their own)."""

    indexes: int
    pages_read: int
    seconds: float
    free_pages: int = 1
    pool_pages: int = 0
    undo_transactions: int = 0  # rolled-back write transactions of the undo prewarm
    analyzed: int = 0  # tables whose statistics were computed exactly (every leaf page) after the scans

    @property
    def fits(self) -> bool:
        return self.free_pages > 0

    def describe(self) -> str:
        undo = f", {self.undo_transactions} undo transactions" if self.undo_transactions else ""
        stats = f", exact statistics of {self.analyzed} tables" if self.analyzed else ""
        full = "" if self.fits else ", pool full"
        return f"{self.indexes} indexes, {self.pages_read} pages read{undo}{stats}{full}"

    def warning(self) -> str:
        """What a run whose tables do not fit the buffer pool says (empty when they fit)."""
        if self.fits:
            return ""
        return (
            f"the scenario's tables do not fit the server's buffer pool ({self.pages_read:,} pages read by the "
            f"prewarm, {self.pool_pages:,} in the pool, none left free): the measured window still reads pages "
            'from disk, and its count follows the warm-up\'s length (docs/work-vector.md, "Prewarm")'
        )


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _schema_query(
    select: str, where: str, order: str, database: str, tables: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """``SELECT <select> WHERE TABLE_SCHEMA = database AND <where> AND TABLE_NAME IN (tables) ORDER BY <order>``."""
    names = ", ".join(["%s"] * len(tables))
    sql = f"SELECT {select} WHERE TABLE_SCHEMA = %s AND {where} AND TABLE_NAME IN ({names}) ORDER BY {order}"
    return sql, (database, *tables)


def index_query(database: str, tables: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The query (and its parameters) listing every index of ``tables`` with the index's first column,
    each table's primary key first."""
    return _schema_query(
        "TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS",
        "SEQ_IN_INDEX = 1",
        "TABLE_NAME, INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME",
        database,
        tables,
    )


def column_query(database: str, tables: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """The query (and its parameters) listing the first column of each of ``tables``: for tables with no
    index of their own (TPC-C's ``history``), whose rows InnoDB keeps in a hidden clustered index
    (``GEN_CLUST_INDEX``) that ``information_schema.STATISTICS`` does not list."""
    return _schema_query(
        "TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS",
        "ORDINAL_POSITION = 1",
        "TABLE_NAME",
        database,
        tables,
    )


def scan_statements(indexes: Sequence[tuple[str, str, str]]) -> list[str]:
    """One full scan per (table, index, first column): ``SELECT SUM(LENGTH(col)) ... FORCE INDEX``; an empty
    index name is a table without an index of its own, scanned whole (its hidden clustered index)."""
    return [
        f"SELECT SUM(LENGTH({_quote(column)})) FROM {_quote(table)}"
        + (f" FORCE INDEX ({_quote(index)})" if index else "")
        for table, index, column in indexes
    ]


def long_connection(endpoint: Endpoint, timeout_s: float, purpose: str) -> pymysql.connections.Connection:
    """A connection whose statements may run ``timeout_s`` (scans and rebuilds under valgrind); a failure to
    connect is a :class:`ServerError` that says what it was for."""
    try:
        return connect(
            endpoint.host,
            endpoint.port,
            endpoint.user,
            endpoint.password,
            endpoint.database,
            timeout=60,
            read_timeout=timeout_s,
        )
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to {purpose}: {exc}") from exc


@contextmanager
def prewarmed(
    endpoint: Endpoint,
    tables: Sequence[str],
    timeout_s: float = PREWARM_TIMEOUT_S,
    poll_s: float = 0.2,
    *,
    undo: bool = False,
    analyze: bool = False,
) -> Iterator[Prewarm]:
    """Scan every index of ``tables`` once on one connection, wait until no page read is pending, and hold
    the connection open until the run ends: no connection the prewarm opened goes away between the warm-up
    and the window (which server thread serves the window's connection moves its count, docs/cost-noise.md)."""
    started = time.monotonic()
    conn = long_connection(endpoint, timeout_s, "prewarm the buffer pool")
    try:
        done = _scan(conn, endpoint.database, tables, started + timeout_s, poll_s, undo=undo, analyze=analyze)
    except BaseException:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.close()
        raise
    try:
        yield done
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.close()


UNDO_TABLE = "dbperf_prewarm"
"""The prewarm's own table (in the scenario's database of the restored copy, gone with it): the undo prewarm
writes there, never on the scenario's tables."""


def undo_statements(segments: int) -> list[str]:
    """Statements that make each of ``segments`` rollback segments create (and cache) an insert and an update
    undo segment: one transaction per rollback segment (InnoDB hands them out in turn), rolled back."""
    table = _quote(UNDO_TABLE)
    head = [
        f"CREATE TABLE IF NOT EXISTS {table} (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB",
        f"REPLACE INTO {table} VALUES (1, 0)",
    ]
    one = ["BEGIN", f"INSERT INTO {table} VALUES (2, 0)", f"UPDATE {table} SET v = v + 1 WHERE id = 1", "ROLLBACK"]
    return head + one * segments


def _segments(cur: pymysql.cursors.Cursor) -> int:
    """Rollback segments InnoDB hands out in turn: ``innodb_rollback_segments`` per undo tablespace."""
    cur.execute("SELECT @@innodb_rollback_segments")
    row = cur.fetchone()
    per_space = int(row[0]) if row else 128
    cur.execute("SELECT COUNT(*) FROM information_schema.INNODB_TABLESPACES WHERE SPACE_TYPE = 'Undo'")
    row = cur.fetchone()
    return per_space * max(1, int(row[0]) if row else 1)


def _scan(
    conn: pymysql.connections.Connection,
    database: str,
    tables: Sequence[str],
    deadline: float,
    poll_s: float,
    *,
    undo: bool = False,
    analyze: bool = False,
) -> Prewarm:
    started = time.monotonic()
    transactions = analyzed = 0
    try:
        with conn.cursor() as cur:
            if undo:  # twice round: the prewarm's own first transactions take rollback segments too
                transactions = 2 * _segments(cur)
                for statement in undo_statements(transactions):
                    cur.execute(statement)
            indexes = list_indexes(cur, database, tables)
            before = _reads(cur)
            for statement in scan_statements(indexes):
                cur.execute(statement)
                cur.fetchall()
            if analyze and not (set(tables) - {t for t, _, _ in indexes}):
                analyzed = _analyze(cur, tables)
            while pending_reads(cur) > 0 and time.monotonic() < deadline:
                time.sleep(poll_s)
            pending, pages = pending_reads(cur), _reads(cur) - before
            free, total = _status(cur, "Innodb_buffer_pool_pages_free"), _status(cur, "Innodb_buffer_pool_pages_total")
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"the buffer pool prewarm failed: {exc}") from exc
    missing = sorted(set(tables) - {t for t, _, _ in indexes})
    if missing:
        raise ServerError(f"cannot prewarm: no such table(s) {', '.join(missing)}")
    if pending:
        raise ServerError(f"{pending} page reads were still pending when the prewarm timed out")
    return Prewarm(len(indexes), pages, time.monotonic() - started, free, total, transactions, analyzed)


EXACT_SAMPLE_PAGES = 1 << 32
"""``innodb_stats_persistent_sample_pages`` for the prewarm's ``ANALYZE TABLE``: more pages than any index has,
so InnoDB reads every leaf page (``dict_stats_analyze_index``: a full scan when the pages to sample are at
least the index's leaf pages) and the statistics are exact, the same on every fresh server."""


def analyze_statements(tables: Sequence[str]) -> list[str]:
    """``ANALYZE TABLE`` of each of ``tables``, one statement each."""
    return [f"ANALYZE TABLE {_quote(table)}" for table in tables]


def _analyze(cur: pymysql.cursors.Cursor, tables: Sequence[str]) -> int:
    """Compute the persistent statistics of ``tables`` from every leaf page (not InnoDB's 20 random ones), and
    put the server's sample size back: the optimiser's row estimates (the table's row count, and every range
    estimate, which InnoDB caps at half of it) are then the same on every fresh server, and no background
    recalculation replaces them during the run (``innodb_stats_auto_recalc`` is off on a counted MySQL
    server, ``COUNTED_VARIABLES``). The dataset snapshot's own statistics were sampled during its load, some
    of them from a nearly empty table."""
    cur.execute("SELECT @@GLOBAL.innodb_stats_persistent_sample_pages")
    row = cur.fetchone()
    before = int(row[0]) if row else 20
    cur.execute("SET GLOBAL innodb_stats_persistent_sample_pages = %s", (EXACT_SAMPLE_PAGES,))
    try:
        for statement in analyze_statements(tables):
            cur.execute(statement)
            failed = [str(r[3]) for r in cur.fetchall() if str(r[2]).lower() == "error"]
            if failed:
                raise ServerError(f"the prewarm's {statement} failed: {'; '.join(failed)}")
    finally:
        cur.execute("SET GLOBAL innodb_stats_persistent_sample_pages = %s", (before,))
    return len(tables)


def list_indexes(cur: pymysql.cursors.Cursor, database: str, tables: Sequence[str]) -> list[tuple[str, str, str]]:
    """(table, index, first column) of every index of ``tables``; ``(table, "", column)`` for a table without an
    index of its own (scanned whole: its hidden clustered index)."""
    cur.execute(*index_query(database, tables))
    indexes = [(str(t), str(i), str(c)) for t, i, c in cur.fetchall()]
    bare = sorted(set(tables) - {t for t, _, _ in indexes})
    if bare:
        cur.execute(*column_query(database, bare))
        indexes += [(str(t), "", str(c)) for t, c in cur.fetchall()]
    return indexes


def _status(cur: pymysql.cursors.Cursor, name: str) -> int:
    cur.execute("SHOW GLOBAL STATUS LIKE %s", (name,))
    row = cur.fetchone()
    return int(row[1]) if row and str(row[1]).isdigit() else 0


def _reads(cur: pymysql.cursors.Cursor) -> int:
    """Pages read from disk: on demand plus read-ahead."""
    return _status(cur, "Innodb_buffer_pool_reads") + _status(cur, "Innodb_buffer_pool_read_ahead")


def pending_reads(cur: pymysql.cursors.Cursor) -> int:
    return _status(cur, "Innodb_data_pending_reads")
