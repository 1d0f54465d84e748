"""The verdict records: the judgement of each metric of one comparison, and of the comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["pass", "regression", "improvement", "inconclusive", "no_baseline", "failed"]


@dataclass(frozen=True)
class MetricVerdict:
    """The judgement of one metric of one scenario x threads comparison."""

    metric: str
    higher_is_worse: bool
    outcome: Outcome
    reason: str
    base_median: float | None = None
    head_median: float | None = None
    estimate_pct: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    bound_pct: float | None = None
    noise_pct: float | None = None
    n_base: int = 0
    n_head: int = 0
    pairs_needed: int | None = None
    gating: bool = True
    confidence: float | None = None  # achieved confidence of the interval (exact rank intervals come in steps)


@dataclass(frozen=True)
class Verdict:
    """All metric verdicts for one scenario x threads comparison (A/B or against a baseline)."""

    mode: Literal["ab", "baseline"]
    scenario: str
    threads: int
    base: str
    head: str
    metrics: tuple[MetricVerdict, ...]
    base_version: str = ""
    head_version: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def outcome(self) -> Outcome:
        # failed and no-baseline describe the whole comparison; other outcomes count when they gate
        outcomes = {m.outcome for m in self.metrics if m.gating or m.outcome in {"failed", "no_baseline"}}
        order: tuple[Outcome, ...] = ("failed", "regression", "no_baseline", "inconclusive", "improvement")
        for o in order:
            if o in outcomes:
                return o
        return "pass"
