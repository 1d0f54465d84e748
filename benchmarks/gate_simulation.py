"""Simulate the A/B gate on seeded synthetic comparisons, to choose how many pairs a scenario needs.

Run as ``python benchmarks/gate_simulation.py [--experiments N] [--seed S] [--alpha A]``.

Each simulated comparison is what ``dbperf`` does for a pull request: ``pairs`` interleaved base/head
repetitions in ABBA order, each a fresh server, six metrics per repetition, then per metric
:func:`harness.stats.paired_test`, :func:`harness.stats.holm` across the six p-values and
:func:`harness.stats.classify`. Three scenarios are simulated for every profile and pair count:

* A/A (head identical to base): the rate of a false REGRESSION on any metric, and of an overall
  INCONCLUSIVE (no metric regressed, at least one undecided);
* QPS down 10 % (only QPS changes): how often QPS is called a REGRESSION;
* instructions per transaction up 3 % (only that metric changes): how often it is called a REGRESSION.

Noise is fitted to docs FACTS.md "Noise on these machines": per fresh-server repetition of an 8 s run,
QPS and CPU per transaction vary 5-11 % and instructions per transaction 0.4-0.9 %; repeated 3 s runs
vary about 30 % in QPS, 10 % in CPU per query and 1.3 % in instructions. The latency percentiles were
not measured there; they are assumed as noisy as QPS (p50) and 1.2x / 1.5x that (p95 / p99). Noise is
multiplicative, Student-t with 5 degrees of freedom on the log scale (heavier tails than lognormal),
independent across metrics (the least favourable case for Holm's false-alarm rate), plus a slow
linear drift of the machine over the session, which the ABBA order cancels.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from harness.stats import Classification, classify, holm, paired_test


@dataclass(frozen=True)
class MetricModel:
    """One judged metric: its direction, the scenario's minimum effect, and its noise per profile."""

    name: str
    higher_is_worse: bool
    min_effect: float
    cv: dict[str, float]


@dataclass(frozen=True)
class Profile:
    """A way of running each repetition: measured seconds plus restore, start and warm-up overhead."""

    name: str
    run_seconds: float
    overhead_seconds: float

    def bench_seconds(self, pairs: int) -> float:
        """Wall-clock seconds to measure ``pairs`` pairs (two repetitions each)."""
        return 2 * pairs * (self.run_seconds + self.overhead_seconds)


@dataclass(frozen=True)
class Rate:
    """A binomial proportion with its Wilson (1927) 95 % score interval."""

    successes: int
    trials: int

    @property
    def value(self) -> float:
        return self.successes / self.trials

    @property
    def interval(self) -> tuple[float, float]:
        z, n, p = 1.959963984540054, self.trials, self.successes / self.trials
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.value * 100:5.1f} % [{low * 100:4.1f}, {high * 100:5.1f}]"


@dataclass(frozen=True)
class SimulationRow:
    """The gate's behaviour for one profile and pair count."""

    profile: str
    pairs: int
    bench_seconds: float
    false_regression: Rate
    qps_detection: Rate
    instructions_detection: Rate
    inconclusive: Rate
    inconclusive_by_metric: tuple[tuple[str, Rate], ...]


METRICS = (
    MetricModel("qps", False, 0.03, {"8s": 0.10, "3s": 0.30}),
    MetricModel("latency_p50", True, 0.05, {"8s": 0.10, "3s": 0.30}),
    MetricModel("latency_p95", True, 0.05, {"8s": 0.12, "3s": 0.36}),
    MetricModel("latency_p99", True, 0.10, {"8s": 0.15, "3s": 0.45}),
    MetricModel("cpu_per_txn", True, 0.05, {"8s": 0.10, "3s": 0.10}),
    MetricModel("instructions_per_txn", True, 0.02, {"8s": 0.009, "3s": 0.013}),
)
PROFILES = (Profile("8s", 8.0, 6.0), Profile("3s", 3.0, 6.0))
PAIRS = (6, 8, 10, 12, 16, 20)
SCENARIOS = {"A/A": {}, "QPS -10 %": {"qps": 0.90}, "instructions +3 %": {"instructions_per_txn": 1.03}}


def _noise(rng: np.random.Generator, cv: float, shape: tuple[int, ...], df: float) -> NDArray[np.float64]:
    """Multiplicative noise with coefficient of variation about ``cv``: Student-t on the log scale."""
    sigma = math.sqrt(math.log1p(cv * cv))
    return np.exp(sigma * rng.standard_t(df, shape) * math.sqrt((df - 2) / df))


def _abba(pairs: int) -> NDArray[np.float64]:
    """Session position of (base, head) for each pair: AB BA AB BA ..."""
    return np.array([(2 * i, 2 * i + 1) if i % 2 == 0 else (2 * i + 1, 2 * i) for i in range(pairs)])


def judge(
    base: NDArray[np.float64],
    head: NDArray[np.float64],
    metrics: Sequence[MetricModel],
    *,
    alpha: float,
    confidence: float,
) -> list[Classification]:
    """Classify every metric of one comparison (``base``, ``head``: pairs x metrics), Holm across them."""
    estimates = [paired_test(base[:, k], head[:, k], confidence=confidence) for k in range(len(metrics))]
    adjusted = holm([e.p_value for e in estimates])
    return [
        classify(
            e.estimate,
            e.low,
            e.high,
            p,
            alpha=alpha,
            min_effect=m.min_effect,
            higher_is_worse=m.higher_is_worse,
            achieved_confidence=e.confidence,
            required_confidence=confidence,
        )
        for e, p, m in zip(estimates, adjusted, metrics, strict=True)
    ]


def simulate(
    *,
    experiments: int = 2000,
    seed: int = 0,
    pairs: Sequence[int] = PAIRS,
    profiles: Sequence[Profile] = PROFILES,
    metrics: Sequence[MetricModel] = METRICS,
    alpha: float = 0.05,
    confidence: float = 0.95,
    tail_df: float = 5.0,
    drift_per_run: float = 0.002,
) -> tuple[SimulationRow, ...]:
    """Run ``experiments`` seeded comparisons per scenario, profile and pair count; one row for each."""
    names = [m.name for m in metrics]
    qps, instr = names.index("qps"), names.index("instructions_per_txn")
    rows = []
    for p_index, profile in enumerate(profiles):
        for n in pairs:
            rng = np.random.default_rng([seed, p_index, n])
            order = _abba(n)
            drift = np.exp(drift_per_run * np.arange(2 * n))[:, None] ** np.array(
                [1.0 if m.higher_is_worse else -1.0 for m in metrics]
            )
            counts = {"false": 0, "qps": 0, "instr": 0, "inconclusive": 0}
            per_metric = [0] * len(metrics)
            for scenario, effects in SCENARIOS.items():
                factor = np.array([effects.get(name, 1.0) for name in names])
                for _ in range(experiments):
                    runs = (
                        np.column_stack([_noise(rng, m.cv[profile.name], (2 * n,), tail_df) for m in metrics])
                        * drift
                    )
                    base, head = runs[order[:, 0]], runs[order[:, 1]] * factor
                    outcomes = [
                        c.outcome for c in judge(base, head, metrics, alpha=alpha, confidence=confidence)
                    ]
                    if scenario == "A/A":
                        counts["false"] += "regression" in outcomes
                        counts["inconclusive"] += "regression" not in outcomes and "inconclusive" in outcomes
                        for k, outcome in enumerate(outcomes):
                            per_metric[k] += outcome == "inconclusive"
                    elif scenario == "QPS -10 %":
                        counts["qps"] += outcomes[qps] == "regression"
                    else:
                        counts["instr"] += outcomes[instr] == "regression"
            rows.append(
                SimulationRow(
                    profile=profile.name,
                    pairs=n,
                    bench_seconds=profile.bench_seconds(n),
                    false_regression=Rate(counts["false"], experiments),
                    qps_detection=Rate(counts["qps"], experiments),
                    instructions_detection=Rate(counts["instr"], experiments),
                    inconclusive=Rate(counts["inconclusive"], experiments),
                    inconclusive_by_metric=tuple(
                        (name, Rate(c, experiments)) for name, c in zip(names, per_metric, strict=True)
                    ),
                )
            )
    return tuple(rows)


def meets(row: SimulationRow, *, max_false: float = 0.01, min_detection: float = 0.90) -> bool:
    """Whether a row demonstrably meets the targets: the Wilson bounds, not just the point estimates."""
    return (
        row.false_regression.interval[1] <= max_false
        and row.qps_detection.interval[0] >= min_detection
        and row.instructions_detection.interval[0] >= min_detection
    )


def recommend(rows: Sequence[SimulationRow], **targets: float) -> dict[str, int | None]:
    """The fewest pairs meeting the targets, per profile (None when no simulated count does)."""
    best: dict[str, int | None] = {}
    for row in rows:
        best.setdefault(row.profile, None)
        current = best[row.profile]
        if meets(row, **targets) and (current is None or row.pairs < current):
            best[row.profile] = row.pairs
    return best


def format_table(rows: Sequence[SimulationRow]) -> str:
    """The results as a fixed-width text table, Wilson 95 % intervals in brackets."""
    head = (
        f"{'profile':7} {'pairs':>5} {'bench s':>7}  {'A/A false REGRESSION':<22} "
        f"{'QPS -10 % detected':<22} {'instr +3 % detected':<22} {'A/A INCONCLUSIVE':<22}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.profile:7} {r.pairs:5d} {r.bench_seconds:7.0f}  {r.false_regression!s:<22} "
            f"{r.qps_detection!s:<22} {r.instructions_detection!s:<22} {r.inconclusive!s:<22}"
        )
    lines.append("")
    names = [name for name, _ in rows[0].inconclusive_by_metric]
    lines.append(
        f"A/A INCONCLUSIVE by metric (%):  {'profile':7} {'pairs':>5} " + " ".join(f"{n:>20}" for n in names)
    )
    for r in rows:
        cells = " ".join(f"{rate.value * 100:20.1f}" for _, rate in r.inconclusive_by_metric)
        lines.append(f"{'':33}{r.profile:7} {r.pairs:5d} {cells}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=2000, help="comparisons per scenario and row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--alpha", type=float, default=0.05, help="family-wise alpha across the 6 metrics")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the intervals")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = simulate(
        experiments=args.experiments, seed=args.seed, alpha=args.alpha, confidence=args.confidence
    )
    elapsed = time.perf_counter() - start
    print(
        f"{args.experiments} seeded comparisons per scenario and row, seed {args.seed}, Holm across "
        f"{len(METRICS)} metrics at alpha {args.alpha:g}, {args.confidence:.0%} intervals; "
        "bench s = wall-clock to measure the pairs (each run plus 6 s restore, start and warm-up)."
    )
    print("minimum effects: " + ", ".join(f"{m.name} {m.min_effect:.0%}" for m in METRICS))
    print()
    print(format_table(rows))
    print()
    for profile, pairs in recommend(rows).items():
        if pairs is None:
            print(
                f"{profile} runs: no simulated pair count meets A/A false alarm <= 1 %, QPS -10 % detection "
                ">= 90 % and instructions +3 % detection >= 90 % (judged on the Wilson 95 % bounds)."
            )
        else:
            row = next(r for r in rows if r.profile == profile and r.pairs == pairs)
            print(
                f"{profile} runs: recommend at least {pairs} pairs "
                f"({row.bench_seconds:.0f} s of benchmarking): "
                "the fewest meeting A/A false alarm <= 1 %, QPS -10 % detection >= 90 % and "
                "instructions +3 % detection >= 90 % (judged on the Wilson 95 % bounds)."
            )
    print(f"\nsimulated in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
