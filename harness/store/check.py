"""Finding a damaged store before anything is measured.

A DuckDB file with a data block whose checksum no longer matches opens without complaint and fails
only when that block is read: after a whole benchmark has run. :func:`open_checked` opens the store
(:func:`harness.store.open_store`, which refuses files it can tell are unreadable at once, see
:mod:`harness.store.filecheck`) and then reads every row of every table of a local store once (a
streamed hash, not a copy), so that such a file is refused at the start, with the same one-line
message naming ``dbperf store rebuild``. A DuckLake store is checked by its catalog database.
"""

from __future__ import annotations

from pathlib import Path

from harness.store import Store, open_store
from harness.store.result_store import ResultStore
from harness.store.rows import TABLES


def verify(store: Store) -> None:
    """Read every row of every table once; a damaged file raises the store's own one-line StoreError."""
    with store._locked() as con:  # the store's own lock and connection (its errors name the fix)
        for table in (*TABLES, "ingested_folders"):
            con.execute(f"SELECT count(*), bit_xor(hash(t)) FROM {table} t").fetchall()


def open_checked(location: Path | str, *, timeout_s: float = 600.0) -> ResultStore:
    """:func:`open_store`, then :func:`verify`: for commands about to measure (nothing is lost later)."""
    store = open_store(location, timeout_s=timeout_s)
    if isinstance(store, Store):
        verify(store)
    return store
