"""The scenario record: a pinned sysbench workload resolved for one profile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path


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
    gate_metrics: tuple[str, ...] = ("qps", "p95_ms")
    percentile: int = 95
    source: Path | None = None
    definition_hash: str = ""

    def __post_init__(self) -> None:
        if not self.threads or any(t < 1 for t in self.threads):
            raise ValueError(f"scenario {self.name}: thread counts must be positive, got {self.threads}")
        if self.time_s < 1 or self.warmup_s < 0 or self.repetitions < 1:
            raise ValueError(f"scenario {self.name}: time_s >= 1, warmup_s >= 0, repetitions >= 1")

    def dataset_key(self) -> dict[str, object]:
        """What a prepared dataset depends on (besides the server build and sysbench version)."""
        return {"script": self.script, "tables": self.tables, "table_size": self.table_size}

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
