"""Finding a damaged store before anything is measured, and saying how to rebuild it.

A DuckDB file cut short (a full disk, a copy that stopped) or with a block whose checksum no longer
matches opens without complaint and fails only when the damaged block is read: after a whole
benchmark has run. :func:`open_checked` opens the store and reads every row of every table once
(a streamed hash, not a copy), so such a file is refused at the start with the way out: the Parquet
run folders beside it are the record, and the DuckDB file is rebuilt from them.
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import StoreError
from harness.store import Store, open_store
from harness.store.rows import TABLES

#: What DuckDB says about a damaged file (checksums, a short read, not a database at all).
_DAMAGE = (
    "Corrupt database file",
    "checksum",
    "Could not read enough bytes",
    "not a valid DuckDB database",
    "is not a DuckDB database",
    "Serialization Error",
    "INTERNAL Error",
)


def damaged(exc: BaseException) -> bool:
    return any(mark in str(exc) for mark in _DAMAGE)


def rebuild_hint(path: Path) -> str:
    runs = path.parent / (path.stem + ".runs")
    return (
        f"rebuild it from its Parquet run folders with `dbperf store rebuild --store {path}` "
        f"(or move the file away: the next command rebuilds it from {runs})"
    )


def _cause(exc: BaseException) -> str:
    text = str(exc)
    for mark in _DAMAGE:
        at = text.find(mark)
        if at >= 0:
            return text[at : at + 140]
    return text[:140]


def verify(store: Store) -> None:
    """Read every row of every table once; a damaged file raises :class:`StoreError` with the way out."""
    try:
        with store._locked() as con:  # the store's own lock and connection (no second writer)
            for table in (*TABLES, "ingested_folders"):
                con.execute(f"SELECT count(*), bit_xor(hash(t)) FROM {table} t").fetchall()
    except StoreError as exc:
        if damaged(exc):
            raise StoreError(f"the store {store.path} is damaged ({_cause(exc)}): {rebuild_hint(store.path)}") from exc
        raise


def open_checked(location: Path | str) -> Store:
    """:func:`open_store`, then :func:`verify`: for commands about to measure (nothing is lost later)."""
    path = Path(location)
    try:
        store = open_store(path)
    except StoreError as exc:
        if damaged(exc):
            raise StoreError(f"the store {path} is damaged ({_cause(exc)}): {rebuild_hint(path)}") from exc
        raise
    verify(store)
    return store
