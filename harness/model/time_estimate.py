"""How long an invocation will take, worked out before it starts (docs/usage.md, "Estimates").

Every figure says where it comes from: "measured (N runs)" of this machine's stored runs of the same
server, scenario, kind and thread count, "measured" for a dataset preparation timed on this machine, or
"assumed" from the profile where nothing was measured.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from harness.model.metrics import RunKind


@dataclass(frozen=True)
class KindEstimate:
    """The wall time of the runs of one kind of one comparison, recording or case.

    ``per_run_s`` comes from this machine's recent runs of the same server, scenario, kind and
    thread count (``source`` = "measured (N runs)") or, with none stored, from the profile's
    durations and an assumed server start (``source`` = "assumed"). ``per_run_s`` is one run's own wall
    time (a stored run's span, alone or beside another); ``slots`` of the runs go at once (the cost runs
    of an A/B comparison go side by side), so their wall time is the sum over the slots."""

    label: str
    kind: RunKind
    runs: int
    per_run_s: float
    source: str
    slots: int = 1

    @property
    def seconds(self) -> float:
        return self.runs * self.per_run_s / max(1, self.slots)

    def to_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "seconds": round(self.seconds, 1)}


@dataclass(frozen=True)
class DatasetEstimate:
    """A dataset that is not in the snapshot cache yet: preparing it (a fresh server, sysbench's rows,
    the snapshot) once, priced from this machine's preparations of the same shape ("measured") or from
    its row count ("assumed")."""

    label: str
    seconds: float
    source: str

    def to_dict(self) -> dict[str, object]:
        return {"label": self.label, "seconds": round(self.seconds, 1), "source": self.source}


@dataclass(frozen=True)
class PlanEstimate:
    """The expected wall time: every kind of run, the datasets to prepare, and the fixed overhead."""

    items: tuple[KindEstimate, ...] = ()
    overhead_s: float = 0.0
    pairs: int = 0  # timing pairs per comparison, after the design check
    datasets: tuple[DatasetEstimate, ...] = ()
    overhead_source: str = "assumed"  # or "measured (N invocations)" on this runner

    @property
    def seconds(self) -> float:
        return sum(i.seconds for i in self.items) + self.overhead_s + self.datasets_s

    @property
    def datasets_s(self) -> float:
        return sum(d.seconds for d in self.datasets)

    def by_kind(self, kind: RunKind) -> float:
        return sum(i.seconds for i in self.items if i.kind == kind)

    @property
    def cost_slots(self) -> int:
        """How many cost runs go at once (1: one after another, or no cost runs)."""
        return max((i.slots for i in self.items if i.kind == "cost"), default=1)

    @property
    def measured(self) -> int:
        return sum(i.source != "assumed" for i in self.items)

    @property
    def runs(self) -> int:
        return sum(i.runs for i in self.items)

    def to_dict(self) -> dict[str, object]:
        return {
            "seconds": round(self.seconds),
            "time_s": round(self.by_kind("time")),
            "cost_s": round(self.by_kind("cost")),
            "datasets_s": round(self.datasets_s),
            "overhead_s": round(self.overhead_s),
            "overhead_source": self.overhead_source,
            "pairs": self.pairs,
            "items": [i.to_dict() for i in self.items],
            "datasets": [d.to_dict() for d in self.datasets],
        }


def duration(seconds: float) -> str:
    """Wall time for people: ``~40 s``, ``~12 min``, ``~3.5 h``, ``~2.1 days``."""
    if seconds < 90:
        return f"~{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"~{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"~{seconds / 3600:.1f} h"
    return f"~{seconds / 86400:.1f} days"
