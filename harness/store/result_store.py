"""What the pipeline and the commands use from a store, whichever backend holds it.

:class:`ResultStore` reads and batches runs the same way for both backends, with the queries of
:mod:`harness.store.queries`; a backend says only how it writes tables and how a reader gets a
connection that sees the whole store (:meth:`ResultStore._reading`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, TypedDict, Unpack

import duckdb

from harness.errors import StoreError
from harness.model import RunResult
from harness.store import queries
from harness.store.rows import arrow_tables

if TYPE_CHECKING:
    import pyarrow as pa


class RunFilter(TypedDict, total=False):
    """The filters :meth:`ResultStore.runs` and :meth:`ResultStore.metrics_table` take (``None``: any)."""

    scenario: str | None
    server: str | None
    threads: int | None
    status: str | None
    group_id: str | None
    source: str | None
    limit: int | None


def _split(method: str, given: RunFilter) -> tuple[dict[str, object], int | None]:
    """The column filters (in :data:`queries.FILTERS` order) and the limit of one call."""
    unknown = sorted(set(given) - set(RunFilter.__annotations__))
    if unknown:
        raise TypeError(f"{method}() got an unexpected keyword argument {unknown[0]!r}")
    values: dict[str, object] = dict(given)
    return {name: values.get(name) for name in queries.FILTERS}, given.get("limit")


class ResultStore(ABC):
    """A store of runs: the local DuckDB file (:class:`~harness.store.duckdb_file.Store`) or a DuckLake
    (:class:`~harness.store.lake.LakeStore`). Same tables, same records, same queries."""

    # -- what each backend provides ------------------------------------------------------------

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store is, for messages (never with a password)."""

    @abstractmethod
    def save_tables(self, tables: dict[str, pa.Table]) -> None:
        """Store the runs of these Arrow tables (one per store table, as ``export_tables`` gives them)."""

    @abstractmethod
    def ingest_pending(self) -> int:
        """Bring in runs written but not yet queryable (local Parquet folders); how many."""

    @abstractmethod
    def close(self) -> None:
        """Release connections (a no-op for the local store, which connects per call)."""

    @abstractmethod
    def _reading(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A connection whose default catalog holds every stored run, for the queries of one read."""

    # -- writing -------------------------------------------------------------------------------

    def save(self, run: RunResult) -> None:
        """Store one run, replacing a stored run with the same id."""
        self.save_many([run])

    def save_many(self, runs: Sequence[RunResult]) -> None:
        """Store many runs at once (imports, generated data); run ids must not repeat within the batch."""
        if not runs:
            return
        ids = [run.run_id for run in runs]
        if len(set(ids)) != len(ids):
            dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
            raise StoreError(f"save_many: run ids repeat within the batch: {', '.join(dupes[:5])}")
        self.save_tables(arrow_tables(runs))

    # -- reading -------------------------------------------------------------------------------

    def runs(
        self, *, with_samples: bool = False, with_profiles: bool = False, **given: Unpack[RunFilter]
    ) -> list[RunResult]:
        """Stored runs matching every given filter, newest first; samples and cost profiles on request."""
        filters, limit = _split("runs", given)
        with self._reading() as con:
            return queries.read_runs(con, filters, limit, with_samples=with_samples, with_profiles=with_profiles)

    def get(self, run_id: str) -> RunResult:
        """One run, with its intervals, histogram and cost profile."""
        with self._reading() as con:
            run = queries.read_one(con, run_id)
        if run is None:
            raise StoreError(f"no run {run_id!r} in {self.location}: `dbperf runs` lists the stored runs")
        return run

    def metrics_table(self, **given: Unpack[RunFilter]) -> pa.Table:
        """A ``pyarrow.Table``, one row per run (newest first): identity columns and every metric."""
        filters, limit = _split("metrics_table", given)
        with self._reading() as con:
            return queries.metrics(con, filters, limit)

    def durations(self, hostname: str, limit: int = 2000) -> list[dict[str, object]]:
        """How long this machine's recent runs took (``hostname``'s successful runs, newest first)."""
        with self._reading() as con:
            return queries.durations(con, hostname, limit)

    def count(self) -> int:
        """How many runs the store holds."""
        with self._reading() as con:
            return queries.count(con)

    def export_tables(self, run_ids: Sequence[str] | None = None) -> dict[str, pa.Table]:
        """Every table's rows, of these runs or of all, in the store's column order (one snapshot)."""
        with self._reading() as con:
            return queries.export(con, run_ids)
