"""The result store: every run, failed ones included, kept for judging, reports and trends.

:func:`open_store` is the one way in: the ``store`` setting names the backend, a local DuckDB file
with a Parquet copy of every run (:class:`harness.store.duckdb_file.Store`, the default) or a DuckLake on a
PostgreSQL catalog shared by a fleet of runners (:class:`harness.store.lake.LakeStore`,
``ducklake:postgres:...``, see :mod:`harness.store.location`). Both implement
:class:`harness.store.result_store.ResultStore`.
"""

from pathlib import Path

from harness.store.duckdb_file import Store
from harness.store.location import LakeLocation, is_lake, parse_lake
from harness.store.result_store import ResultStore


def open_store(location: Path | str, *, timeout_s: float = 600.0) -> ResultStore:
    """The store the ``store`` setting names: a ``ducklake:postgres:...`` string, else a file path.

    ``timeout_s`` is how long a lake's writers may keep its lock before a write gives up."""
    if is_lake(location):
        from harness.store.lake import LakeStore  # loads the DuckLake extensions: only when asked for

        return LakeStore(parse_lake(str(location)), deadline_s=timeout_s)
    return Store(Path(location))


__all__ = ["LakeLocation", "ResultStore", "Store", "is_lake", "open_store", "parse_lake"]
