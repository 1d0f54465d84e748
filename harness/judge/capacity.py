"""Capacity at a latency SLO, from thread sweeps in timing A/B comparisons.

Concurrency changes (a thread pool instead of one thread per connection, ``innodb_thread_concurrency``,
lock contention) barely move a one-client measurement and may not move QPS at any single client count
either: a closed-loop benchmark's latency grows with its clients (Little's law), so what a change buys
is how many clients a server serves *within a latency objective*. This is the view people draw by hand
from sysbench sweeps, p95 against throughput, one curve per server.

For one side of one pair (the runs of one repetition, one per client count, in ascending order):

- **clients at the SLO**: where p95 reaches the scenario's ``slo_p95_ms``, interpolated on log scales
  between the highest client count whose p95 is within the SLO and the next one (latency grows about
  geometrically with clients past the knee). When every client count of the sweep meets the SLO the
  figure is the sweep's highest count, a lower bound ("beyond"); when none does, it is extrapolated
  below the first count in proportion (``clients x SLO / p95``, "below").
- **QPS at the SLO**: the throughput at that point, interpolated linearly between the same two runs
  (the highest QPS of the sweep when every count met the SLO; the first run's QPS scaled the same way
  when none did).
- **the knee**: the client count after which the next step adds less than :data:`KNEE_GAIN` throughput
  while p95 rises by more than :data:`KNEE_P95_RISE` (information, not judged).

Both figures are judged like any A/B metric: per-pair log ratios, a Hodges-Lehmann estimate with an
exact Wilcoxon signed-rank interval, Holm across the invocation's gating tests (the caller does it),
and the scenario's minimum effect. A censored figure ("beyond" on both sides of every pair) gives no
change, which is what the sweep can say: both served every client count within the objective.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.judge import steady
from harness.model import RunResult, Scenario, SweepCurve, SweepPoint
from harness.model.verdict import mark, reached_counts

KNEE_GAIN = 0.05
KNEE_P95_RISE = 0.25

Side = Literal["base", "head"]


def judged(scenario: Scenario) -> bool:
    """Whether timing A/B comparisons of this scenario judge capacity: an SLO and a sweep of 2+ counts."""
    return scenario.slo_p95_ms is not None and len(set(scenario.threads)) >= 2


def points(runs: Sequence[RunResult]) -> tuple[SweepPoint, ...] | None:
    """One side's sweep from its runs (one per client count); None when a run lacks QPS or p95."""
    out = []
    for run in sorted(runs, key=lambda r: r.threads):
        qps, p95 = run.metrics.qps, run.metrics.p95_ms
        if not run.ok or qps is None or p95 is None or qps <= 0 or p95 <= 0:
            return None
        out.append(SweepPoint(run.threads, float(qps), float(p95)))
    return tuple(out)


def knee(sweep: Sequence[SweepPoint]) -> int | None:
    """The client count after which throughput stops rising while p95 climbs, or None within the sweep."""
    for a, b in itertools.pairwise(sweep):
        if b.qps < a.qps * (1.0 + KNEE_GAIN) and b.p95_ms > a.p95_ms * (1.0 + KNEE_P95_RISE):
            return a.threads
    return None


def curve(side: Side, pair: int, sweep: Sequence[SweepPoint], slo_ms: float) -> SweepCurve:
    """One side's capacity at ``slo_ms`` (see the module's docstring for the rule)."""
    if not sweep:
        raise ValueError("a sweep needs at least one point")
    if slo_ms <= 0:
        raise ValueError(f"the SLO must be above 0 ms, got {slo_ms}")
    first = sweep[0]
    reached: Literal["within", "beyond", "below"]
    if first.p95_ms > slo_ms:
        share = slo_ms / first.p95_ms
        clients, qps, reached = first.threads * share, first.qps * share, "below"
    else:
        over = next((i for i, p in enumerate(sweep) if p.p95_ms > slo_ms), None)
        if over is None:
            clients, qps, reached = float(sweep[-1].threads), max(p.qps for p in sweep), "beyond"
        else:
            a, b = sweep[over - 1], sweep[over]
            f = (math.log(slo_ms) - math.log(a.p95_ms)) / (math.log(b.p95_ms) - math.log(a.p95_ms))
            clients = math.exp(math.log(a.threads) + f * (math.log(b.threads) - math.log(a.threads)))
            qps, reached = a.qps + f * (b.qps - a.qps), "within"
    return SweepCurve(side, pair, tuple(sweep), clients, qps, reached, knee(sweep))


@dataclass(frozen=True)
class SweepComparison:
    """Both sides' curves for every complete pair of one scenario's thread sweep, ready to judge."""

    scenario: Scenario
    base: str
    head: str
    curves: tuple[SweepCurve, ...]
    base_version: str = ""
    head_version: str = ""
    #: (side, pair, client count) of every run whose window was not a steady state for its p95
    unsteady: tuple[tuple[Side, int, int], ...] = ()

    @property
    def top_threads(self) -> int:
        return max(p.threads for c in self.curves for p in c.points)

    def values(self, metric: str, side: Side) -> list[float]:
        """Per pair, in pair order: clients or QPS at the SLO of one side."""
        chosen = sorted((c for c in self.curves if c.side == side), key=lambda c: c.pair)
        return [c.clients_at_slo if metric == "capacity_clients" else c.qps_at_slo for c in chosen]

    def notes(self) -> list[str]:
        """What the sweep showed, in words counted over the sweeps (never "every" unless every one did):
        each side's median capacity and what it is (measured, a lower bound, extrapolated), its knee,
        and the client counts whose window was not a steady state (:mod:`harness.judge.steady`)."""
        slo = self.scenario.slo_p95_ms
        out = []
        for side, name in (("base", self.base), ("head", self.head)):
            mine = [c for c in self.curves if c.side == side]
            clients = statistics.median(c.clients_at_slo for c in mine)
            qps = statistics.median(c.qps_at_slo for c in mine)
            counts = ",".join(str(p.threads) for p in mine[0].points)
            seen = reached_counts(mine)
            n = len(mine)
            found = [
                f"{words} in {seen[kind]} of {n} sweeps"
                for kind, words in (
                    ("within", f"reached p95 {slo:g} ms within the sweep"),
                    ("beyond", f"met p95 ≤ {slo:g} ms at every client count"),
                    ("below", f"missed p95 ≤ {slo:g} ms already at {mine[0].points[0].threads} clients"),
                )
                if seen[kind]
            ]
            knees = [c.knee for c in mine if c.knee is not None]
            bend = f"; throughput stops rising past {statistics.median(knees):g} clients" if knees else ""
            figure = mark(mine)
            out.append(
                f"capacity of {name} ({side}) over {counts} clients: {'; '.join(found)}; median "
                f"{_fmt(clients)} clients and {qps:,.0f} QPS{f' ({figure})' if figure else ''}{bend}"
            )
        out += self.unsteady_notes()
        return out

    def unsteady_notes(self) -> list[str]:
        """Per side, the client counts whose window was shorter than a steady state allows, and whether
        the capacity figures rest on them."""
        out = []
        for side in ("base", "head"):
            short = [(pair, threads) for s, pair, threads in self.unsteady if s == side]
            if not short:
                continue
            at = sorted({t for _, t in short})
            used = sum(
                1 for c in self.curves if c.side == side and any(t in rested_on(c) for p, t in short if p == c.pair)
            )
            total = len({c.pair for c in self.curves if c.side == side})
            rests = (
                f"the capacity figures rest on such a run in {used} of {total} sweeps"
                if used
                else "the capacity figures do not rest on those runs"
            )
            out.append(
                f"{side}: the measured window was shorter than {steady.STEADY_FACTOR:g} x p95 (not a steady "
                f"state) at {', '.join(map(str, at))} clients in {len(short)} run(s): {rests}"
            )
        return out

    def unsteady_reason(self) -> str:
        """Why the capacity verdict is not decided, or "": its figures rest on a run whose window was not a
        steady state in at least one sweep (a latency figure, held like p95: :mod:`harness.judge.steady`)."""
        return "; ".join(n for n in self.unsteady_notes() if "rest on such a run" in n)


def sweep_comparisons(
    scenario: Scenario, base: str, head: str, by_threads: dict[int, Sequence[tuple[RunResult, RunResult]]]
) -> SweepComparison | None:
    """The pairs of a sweep (pair i = the i-th pair at every client count), if 2+ pairs are complete."""
    slo = scenario.slo_p95_ms
    if slo is None or len(by_threads) < 2:
        return None
    counts = sorted(by_threads)
    n = min(len(by_threads[t]) for t in counts)
    curves: list[SweepCurve] = []
    short: list[tuple[Side, int, int]] = []
    versions = ("", "")
    for i in range(n):
        pairs = [by_threads[t][i] for t in counts]
        base_sweep, head_sweep = points([b for b, _ in pairs]), points([h for _, h in pairs])
        if base_sweep is None or head_sweep is None:
            continue
        curves += [curve("base", i + 1, base_sweep, slo), curve("head", i + 1, head_sweep, slo)]
        versions = (pairs[0][0].server_version, pairs[0][1].server_version)
        short += [("base", i + 1, b.threads) for b, _ in pairs if steady.unsteady(b)]
        short += [("head", i + 1, h.threads) for _, h in pairs if steady.unsteady(h)]
    if len(curves) < 4:
        return None
    return SweepComparison(scenario, base, head, tuple(curves), *versions, unsteady=tuple(short))


def _fmt(value: float) -> str:
    """``4.82``, ``42.2``, ``1,024``: three significant digits below 100, whole numbers above."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def rested_on(c: SweepCurve) -> set[int]:
    """The client counts a curve's capacity figures were computed from (:func:`curve`'s rule)."""
    if c.reached == "below":
        return {c.points[0].threads}
    if c.reached == "beyond":
        return {p.threads for p in c.points}
    inside = [p.threads for p in c.points if p.threads <= c.clients_at_slo]
    above = [p.threads for p in c.points if p.threads > c.clients_at_slo]
    return {*inside[-1:], *above[:1]}
