"""The scenario record: a pinned sysbench workload resolved for one profile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.model.metrics import DEFAULT_GATE

#: Post-run checks a scenario may declare (``check = "tpcc"``); measure/consistency.py runs them.
POST_RUN_CHECKS = ("tpcc",)

#: How a cost warm-up ends its transactions (``[cost] warmup``): committed, or rolled back so the tables stay as
#: the snapshot had them.
WARMUP_MODES = ("commit", "rollback")

#: The scripts a rolled-back warm-up can take: each event is autocommit statements, or one transaction that
#: ends with ``con:query("COMMIT")`` (sent as ``ROLLBACK``), and what ``thread_done`` writes (ycsb_d's next
#: record number) it writes before it disconnects (then rolled back too). Not oltp_read_write/write_only:
#: their COMMIT is a prepared statement.
ROLLBACK_SCRIPTS = (
    "oltp_insert",
    "oltp_delete",
    "oltp_update_index",
    "oltp_update_non_index",
    "lua/tpcc.lua",
    "lua/ycsb_d.lua",
)


@dataclass(frozen=True)
class CostSettings:
    """How a scenario is measured in cost mode: fixed event counts under callgrind, not durations.

    ``read_view`` holds a consistent-snapshot transaction open from a separate connection for the
    measured window, which stops purge: without it a write workload's count follows how far background
    purge got, and varies by several percent.

    ``purge_before_window`` (with ``read_view``) releases the read view at the end of the warm-up, waits
    until purge has emptied the history list, and holds a new one for the measured window, which then
    starts from the same (purged) undo history whatever the warm-up's length. Some scenarios are steady
    only with it and others only without it, so it is each scenario's choice, made by
    ``benchmarks/warmup_steady.py`` (the drift measured either way: docs/work-vector.md, "Steady state").

    ``rebuild_before_window`` rebuilds the scenario's tables (``ALTER TABLE t FORCE``) between the warm-up (and
    the purge, when set) and the window, the read view released meanwhile and held again after it: the window
    then starts from index pages as a fresh build lays them out, whatever pages the warm-up split, filled
    or left with garbage (the scenarios that need it and the drift without it: docs/work-vector.md,
    "Rebuilt before the window").

    ``warmup = "rollback"`` runs every warm-up event inside ``BEGIN`` ... ``ROLLBACK`` (a script's own
    ``COMMIT`` is sent as ``ROLLBACK``): the warm-up executes the scenario's own statements on the same pages
    but leaves the tables as the snapshot had them, so the measured window of a workload that grows or
    shrinks its tables (oltp_insert, oltp_delete, tpcc) starts from the same rows whatever the warm-up's
    length. ``"commit"`` (the default) commits them.

    ``warmup_seed`` and ``seed`` are sysbench's ``--rand-seed`` for the warm-up and the measured window:
    fixed, so every run issues the same statements, and different, so the measured window never replays
    the warm-up's statements (with one seed, a cache filled by the warm-up answered the measured window's
    first statements: the query cache read as a 10 % improvement).
    """

    threads: tuple[int, ...] = (1,)
    warmup_events: int = 500
    events: int = 1000
    repetitions: int = 3
    read_view: bool = False
    warmup_seed: int = 1
    seed: int = 2
    purge_before_window: bool = False
    warmup: str = "commit"
    rebuild_before_window: bool = False

    def __post_init__(self) -> None:
        if not self.threads or any(t < 1 for t in self.threads):
            raise ValueError(f"cost threads must be positive, got {self.threads}")
        if self.events < 1 or self.warmup_events < 0 or self.repetitions < 1:
            raise ValueError("cost: events >= 1, warmup_events >= 0, repetitions >= 1")
        if self.purge_before_window and not self.read_view:
            raise ValueError("cost: purge_before_window needs read_view (it is the read view that holds purge back)")
        if self.warmup not in WARMUP_MODES:
            raise ValueError(f"cost: warmup must be one of {', '.join(WARMUP_MODES)}, not {self.warmup!r}")
        if self.warmup_seed < 1 or self.seed < 1 or self.warmup_seed == self.seed:
            raise ValueError(
                f"cost: warmup_seed ({self.warmup_seed}) and seed ({self.seed}) must be different positive numbers "
                "(0 is a time-based seed; one seed for both replays the warm-up in the measured window)"
            )


@dataclass(frozen=True)
class Scenario:
    """A pinned sysbench workload resolved for one profile (quick, ci or full)."""

    name: str
    script: str
    profile: str
    threads: tuple[int, ...]
    warmup_s: int
    time_s: int
    repetitions: int
    tables: int
    table_size: int
    rand_type: str = "uniform"
    description: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    writes: bool = False
    fresh_server: bool = True
    min_effects: Mapping[str, float] = field(default_factory=dict)
    gate_metrics: tuple[str, ...] = DEFAULT_GATE
    percentile: int = 95
    source: Path | None = None
    definition_hash: str = ""
    cost: CostSettings = field(default_factory=CostSettings)
    cost_hash: str = ""  # what a cost count depends on: workload, dataset and the cost settings
    #: the latency objective of a thread sweep: with two or more thread counts, A/B timing comparisons
    #: judge each side's capacity at it (clients and QPS where p95 reaches it; harness.judge.capacity)
    slo_p95_ms: float | None = None
    check: str = ""  # a post-run check of the workload's writes (POST_RUN_CHECKS), run after timing runs
    #: The tables the workload creates (``usertable``); empty: sysbench's ``sbtest1`` .. ``sbtest<tables>``.
    table_names: tuple[str, ...] = ()
    #: A per-operation metric reports show first (``NEW_ORDER.ops_per_min``), and its label ("NOPM").
    headline: str = ""
    headline_label: str = ""
    #: The name of a dataset several scenarios load alike (``ycsb``): they share its snapshot.
    dataset_name: str = ""
    #: The version of the rows the scenario's own loader writes (``[dataset] loader``); part of the snapshot key.
    dataset_loader: int = 1

    def __post_init__(self) -> None:
        if not self.threads or any(t < 1 for t in self.threads):
            raise ValueError(f"scenario {self.name}: thread counts must be positive, got {self.threads}")
        if self.time_s < 1 or self.warmup_s < 0 or self.repetitions < 1:
            raise ValueError(f"scenario {self.name}: time_s >= 1, warmup_s >= 0, repetitions >= 1")

    @property
    def created_tables(self) -> tuple[str, ...]:
        """The tables the workload's ``prepare`` creates."""
        return self.table_names or tuple(f"sbtest{i}" for i in range(1, self.tables + 1))

    def dataset_key(self) -> dict[str, object]:
        """What a prepared dataset depends on (besides the server build and sysbench version)."""
        key: dict[str, object] = {
            "script": self.dataset_name or self.script,
            "tables": self.tables,
            "table_size": self.table_size,
        }
        if self.dataset_loader > 1:  # only then: the other scenarios' snapshots keep their keys
            key["loader"] = self.dataset_loader
        return key

    def with_overrides(
        self,
        *,
        threads: Sequence[int] | None = None,
        time_s: int | None = None,
        warmup_s: int | None = None,
        repetitions: int | None = None,
    ) -> Scenario:
        """A copy with command-line overrides applied (the definition hash stays: it names the file)."""
        return replace(
            self,
            threads=tuple(threads) if threads else self.threads,
            time_s=self.time_s if time_s is None else time_s,
            warmup_s=self.warmup_s if warmup_s is None else warmup_s,
            repetitions=self.repetitions if repetitions is None else repetitions,
        )
