"""What the pipeline and the commands use from a store, whichever backend holds it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import pyarrow as pa

from harness.model import RunResult


class ResultStore(Protocol):
    """A store of runs: the local DuckDB file (:class:`~harness.store.local.Store`) or a DuckLake
    (:class:`~harness.store.lake.LakeStore`). Same tables, same records, same queries."""

    @property
    def location(self) -> str:
        """Where the store is, for messages (never with a password)."""
        ...

    def save(self, run: RunResult) -> None:
        """Store one run, replacing a stored run with the same id."""
        ...

    def save_many(self, runs: Sequence[RunResult]) -> None:
        """Store many runs at once (imports, generated data); run ids must not repeat within the batch."""
        ...

    def ingest_pending(self) -> int:
        """Bring in runs written but not yet queryable (local Parquet folders); how many."""
        ...

    def runs(
        self,
        *,
        scenario: str | None = None,
        server: str | None = None,
        threads: int | None = None,
        status: str | None = None,
        group_id: str | None = None,
        source: str | None = None,
        limit: int | None = None,
        with_samples: bool = False,
        with_profiles: bool = False,
    ) -> list[RunResult]:
        """Stored runs matching every given filter, newest first; samples and cost profiles on request."""
        ...

    def get(self, run_id: str) -> RunResult:
        """One run, with its intervals, histogram and cost profile."""
        ...

    def metrics_table(
        self,
        *,
        scenario: str | None = None,
        server: str | None = None,
        threads: int | None = None,
        status: str | None = None,
        group_id: str | None = None,
        source: str | None = None,
        limit: int | None = None,
    ) -> pa.Table:
        """A ``pyarrow.Table``, one row per run (newest first): identity columns and every metric."""
        ...

    def count(self) -> int:
        """How many runs the store holds."""
        ...

    def save_tables(self, tables: dict[str, pa.Table]) -> None:
        """Store the runs of these Arrow tables (one per store table, as ``export_tables`` gives them)."""
        ...

    def export_tables(self, run_ids: Sequence[str] | None = None) -> dict[str, pa.Table]:
        """Every table's rows, of these runs or of all, in the store's column order."""
        ...

    def close(self) -> None:
        """Release connections (a no-op for the local store, which connects per call)."""
        ...
