"""Why a local store file cannot be read, in one line that names the fix (``dbperf store rebuild``).

A DuckDB file starts with a 4 KiB header: an 8-byte checksum, the magic ``DUCK`` at offset 8, then
the storage version (little-endian uint64) at offset 12. DuckDB 1.5 writes 64 and reads 64-68;
DuckDB 2.0 writes 999, which 1.x refuses at connect. Damage shows as DuckDB errors: a truncated
file at connect ("Could not read enough bytes"), a bad header or metadata block at connect and a bad
data block at the first query that reads it ("Corrupt database file: computed checksum ...").

In every case the Parquet run folders beside the file are the record, so the remedy is the same:
move the file aside and rebuild it from them (:func:`harness.store.migrate.rebuild`).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Literal

import duckdb

#: What DuckDB 2.0 writes.
DUCKDB_2_STORAGE = 999
#: Storage versions this DuckDB reads: 1.5 says "can only read versions between 64 and 68"; 2.0 reads its own too.
READABLE: frozenset[int] = frozenset(
    [*range(64, 69), *([DUCKDB_2_STORAGE] if int(duckdb.__version__.split(".")[0]) >= 2 else [])]
)

Damage = Literal["newer-format", "checksum", "truncated", "not-duckdb", "other"]


def storage_version(path: Path) -> int | None:
    """The storage version in the file's header, or None when the file is not a DuckDB database."""
    with path.open("rb") as handle:
        head = handle.read(20)
    if len(head) < 20 or head[8:12] != b"DUCK":
        return None
    return int(struct.unpack("<Q", head[12:20])[0])


def rebuild_advice(path: Path, runs_dir: Path) -> str:
    """The fix, worded once for every message."""
    if runs_dir.is_dir():
        return (
            f"run `dbperf store rebuild --store {path}` to move it aside and rebuild the store from the "
            f"Parquet run folders in {runs_dir}"
        )
    return f"move it away or point the `store` setting at another file (no run folders {runs_dir} to rebuild from)"


def diagnose(path: Path, runs_dir: Path) -> str | None:
    """Before connecting: a one-line message for a file this DuckDB cannot open, else None."""
    try:
        if path.stat().st_size == 0:
            return f"{path} is empty, not a DuckDB database: {rebuild_advice(path, runs_dir)}"
        version = storage_version(path)
    except FileNotFoundError:
        return None  # a new store
    except OSError as exc:
        return f"cannot read the store {path}: {exc.strerror}"
    if version is None:
        return f"{path} is not a DuckDB database: {rebuild_advice(path, runs_dir)}"
    if version not in READABLE:
        written = "DuckDB 2.0" if version == DUCKDB_2_STORAGE else "another DuckDB"
        return (
            f"{path} was written by {written} (storage version {version}, duckdb {duckdb.__version__} reads "
            f"{min(READABLE)}-68): {rebuild_advice(path, runs_dir)}"
        )
    return None


def classify(exc: BaseException) -> Damage:
    """The kind of damage a DuckDB error (at connect or at query time) reports."""
    text = str(exc)
    if "version number" in text and "can only read versions" in text:
        return "newer-format"
    if "Corrupt database file" in text or "checksum" in text:
        return "checksum"
    if "Could not read enough bytes" in text or "truncated" in text.lower():
        return "truncated"
    if "not a valid DuckDB database" in text:
        return "not-duckdb"
    return "other"


def explain(exc: BaseException, path: Path, runs_dir: Path) -> str | None:
    """A one-line message for a DuckDB error that means the file is unreadable or damaged, else None."""
    kind = classify(exc)
    if kind == "other":
        return None
    what = {
        "newer-format": "was written by a newer DuckDB",
        "checksum": "is damaged (a block's checksum does not match)",
        "truncated": "is truncated",
        "not-duckdb": "is not a DuckDB database",
    }[kind]
    return f"{path} {what}: {rebuild_advice(path, runs_dir)}"
