"""The result store: every run, failed ones included, kept for judging, reports and trends.

:func:`open_store` is the one way in: the ``store`` setting names the backend (today a local DuckDB
file with a Parquet copy of every run, :class:`harness.store.local.Store`).
"""

from pathlib import Path

from harness.store.local import Store


def open_store(location: Path | str) -> Store:
    """The store the ``store`` setting names."""
    return Store(Path(location))


__all__ = ["Store", "open_store"]
