"""The verdict records: the judgement of each metric of one comparison, and of the comparison."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from harness.model.forecast import Forecast
from harness.model.work import WORK

VerdictOutcome = Literal["pass", "regression", "improvement", "inconclusive", "no_baseline", "failed"]
#: What a comparison measured: wall-clock runs (QPS, latency, CPU time) or deterministic cost runs
#: (instructions under callgrind). Each is judged on its own metrics, in one multiplicity family.
Kind = Literal["time", "cost"]
#: Why a metric's verdict is what it is (harness.judge.classify decides it; the reports word it).
Cause = Literal[
    "regression",
    "improvement",
    "pass",
    "multiplicity",
    "significance",
    "small",
    "repetitions",
    "noise",
    "not-deterministic",
    "one-run",
]
#: The cause a latency verdict held back by an unsteady window carries (harness.judge.steady).
UNSTEADY: Final = "unsteady"
#: The test a metric was judged by: exact signed-rank (A/B pairs), rank-sum (against a baseline), or the
#: cost t-test (harness.judge.design).
TestMethod = Literal["signed-rank", "rank-sum", "cost"]


@dataclass(frozen=True)
class FunctionDelta:
    """One function's instructions per transaction on each side of a cost comparison, and the change.

    ``share`` is the change as a (signed) fraction of the whole change per transaction.
    """

    name: str
    base: float
    head: float
    delta: float
    share: float


@dataclass(frozen=True)
class SweepPoint:
    """One run of a thread sweep, as the capacity view draws it: clients, throughput and p95 latency."""

    threads: int
    qps: float
    p95_ms: float


@dataclass(frozen=True)
class SweepCurve:
    """One side's thread sweep in one pair of an A/B comparison (the runs of one repetition, by threads),
    and what it gives at the latency SLO (see :mod:`harness.judge.capacity`)."""

    side: Literal["base", "head"]
    pair: int
    points: tuple[SweepPoint, ...]
    clients_at_slo: float
    qps_at_slo: float
    #: "within": p95 reached the SLO inside the sweep; "beyond": every client count met it (the figures are
    #: lower bounds); "below": none did (extrapolated below the first client count)
    reached: Literal["within", "beyond", "below"]
    knee: int | None = None  # the client count after which throughput stops rising while p95 climbs


#: the capacity metrics, in the order verdicts list them
CAPACITY_METRICS = ("capacity_clients", "capacity_qps")


def reached_counts(curves: Sequence[SweepCurve]) -> Counter[str]:
    """How many of these curves reached the SLO within the sweep, met it everywhere, or missed it everywhere."""
    return Counter(c.reached for c in curves)


def mark(curves: Sequence[SweepCurve]) -> str:
    """What one side's median capacity figure is, from how its sweeps reached the SLO: "" (measured within
    every sweep), ``extrapolated`` (every sweep missed the SLO at its first client count: the figure lies
    below the measured range), ``at least`` (every sweep met it everywhere: a lower bound at the sweep's
    top), or the counts when the sweeps differ (``extrapolated in 3 of 11 sweeps``)."""
    seen, n = reached_counts(curves), len(curves)
    if not n or seen["within"] == n:
        return ""
    if seen["below"] == n:
        return "extrapolated"
    if seen["beyond"] == n:
        return "at least"
    parts = [
        f"extrapolated in {seen['below']}" if seen["below"] else "",
        f"at least in {seen['beyond']}" if seen["beyond"] else "",
    ]
    return f"{', '.join(p for p in parts if p)} of {n} sweeps"


def count_offset(metric: str, min_effect: float) -> float:
    """What a count per transaction is tested with added (its floor over its minimum effect, so the test's
    threshold is ``min_effect x base + floor``: docs/work-vector.md); 0 for every other metric."""
    work = WORK.get(metric)
    return work.floor / min_effect if work is not None and min_effect > 0 else 0.0


def per_txn_below(metric: str) -> float:
    """The base under which a count's change is shown per transaction, not in %: its floor (the least change
    worth a verdict), as a percent of a base smaller than that says more about the base than the change."""
    work = WORK.get(metric)
    return work.floor if work is not None else 0.0


@dataclass(frozen=True)
class ShownChange:
    """A change as reports show it: the estimate and its interval, in % of the base or per transaction."""

    value: float | None
    low: float | None
    high: float | None
    unit: Literal["%", "/txn"] = "%"


@dataclass(frozen=True)
class ReadBack:
    """A setting a side's server did not run with as asked (it clamped, rounded or ignored it), read back
    after it started: what the runs measured is ``effective``."""

    side: Literal["base", "head"]
    name: str
    requested: str
    effective: str


@dataclass(frozen=True)
class MetricVerdict:
    """The judgement of one metric of one scenario x threads comparison.

    ``reason`` is the full sentence, ``summary`` the short clause tables show, ``cause`` the
    machine-readable why (see :mod:`harness.judge.classify`); ``estimate_pct`` is the test's estimate
    of the change (Hodges-Lehmann for rank tests, the ratio of geometric means for cost tests), which
    can differ from the ratio of the medians when runs are spread; the interval has ``confidence``.
    """

    metric: str
    higher_is_worse: bool
    outcome: VerdictOutcome
    reason: str
    summary: str = ""
    cause: str = ""
    method: str = ""  # signed-rank, rank-sum or cost (t-test)
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
    repetitions_needed: int | None = None  # pairs (A/B) or candidate runs (baseline) that would likely decide
    seconds_needed: float | None = None  # the wall time those repetitions take
    gating: bool = True
    confidence: float | None = None  # achieved confidence of the interval (exact rank intervals come in steps)
    family_size: int = 0  # gating tests in the multiplicity family (Holm) this one was adjusted within
    backend: str = ""  # for instructions: "callgrind" (cost runs) or "perf" (counters in timing runs)
    #: the confidence the interval was asked for: 95 %, or ``1 - alpha / family size`` where the judge widened
    #: it (:func:`harness.judge.gate.decide`); ``confidence`` is what the exact interval really reaches
    level: float = 0.95

    def interval_level(self) -> float | None:
        """The level to label the interval with: the one asked for, or the lower one the repetitions allow."""
        if self.ci_low_pct is None or self.ci_high_pct is None:
            return None
        if self.confidence is not None and self.confidence < self.level - 1e-9:
            return self.confidence
        return self.level

    def shown_change(self) -> ShownChange:
        """The change as a report shows it: the test's estimate and interval, except for a count per
        transaction, whose test ran on the count plus an offset (:func:`count_offset`): its change is
        rescaled to the count itself at the base's median, in % of the base, or per transaction where the
        base is below the count's floor (:func:`per_txn_below`: 0 -> 1 fsync/txn is ``+1.00 /txn``, and
        0.009 -> 1 is too, never ``+11011.9 %``; docs/work-vector.md)."""
        offset = count_offset(self.metric, (self.bound_pct or 0.0) / 100.0)
        base = self.base_median
        if not offset or base is None or base < 0:
            return ShownChange(self.estimate_pct, self.ci_low_pct, self.ci_high_pct)
        # a change of x % of (count + offset) is x % of (base + offset) per transaction
        per_txn = base <= 0 or base < per_txn_below(self.metric)
        scale = (base + offset) / 100.0 if per_txn else (base + offset) / base

        def scaled(value: float | None) -> float | None:
            return None if value is None else value * scale

        unit: Literal["%", "/txn"] = "/txn" if per_txn else "%"
        return ShownChange(scaled(self.estimate_pct), scaled(self.ci_low_pct), scaled(self.ci_high_pct), unit)


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
    kind: Kind = "time"
    explanation: tuple[FunctionDelta, ...] = ()  # cost comparisons: where the instructions went
    #: capacity at a latency SLO (timing A/B over a thread sweep): every pair's curves, both sides;
    #: ``threads`` is then the sweep's highest client count and ``slo_p95_ms`` the objective
    curves: tuple[SweepCurve, ...] = ()
    slo_p95_ms: float | None = None
    #: cost comparisons: the single-client time this work forecasts with the testbed's calibration (never a
    #: measurement; it decides nothing unless the forecast-gate setting is on: docs/forecast.md)
    forecast: Forecast | None = None
    #: settings a side's server did not take as asked: its label says ``requested→effective``
    read_back: tuple[ReadBack, ...] = ()

    def side_label(self, side: Literal["base", "head"]) -> str:
        """A side's label with each setting its server did not take as asked as ``name=requested→effective``
        (``mariadb-local+table_open_cache=1→10``), so a verdict never names a value the server did not run."""
        label = self.base if side == "base" else self.head
        for item in (r for r in self.read_back if r.side == side):
            asked = f"{item.name}={item.requested}"
            if asked in label:
                label = label.replace(asked, f"{asked}→{item.effective}", 1)
            else:
                label += f" ({item.name}: {item.requested}→{item.effective})"
        return label

    @property
    def threads_label(self) -> str:
        """The client count the verdict is about, or the sweep's range for a capacity verdict ("16-1024")."""
        if self.curves:
            counts = [p.threads for c in self.curves for p in c.points]
            return f"{min(counts)}-{max(counts)}"
        return str(self.threads)

    @property
    def outcome(self) -> VerdictOutcome:
        # failed and no-baseline describe the whole comparison; other outcomes count when they gate
        outcomes = {m.outcome for m in self.metrics if m.gating or m.outcome in {"failed", "no_baseline"}}
        order: tuple[VerdictOutcome, ...] = ("failed", "regression", "no_baseline", "inconclusive", "improvement")
        for o in order:
            if o in outcomes:
                return o
        return "pass"
