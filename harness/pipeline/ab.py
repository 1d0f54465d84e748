"""A/B comparisons: base and head servers interleaved in a randomised balanced order.

Each pair runs base and head back to back, in an order drawn so that half the pairs are AB and half
BA (then shuffled with a seeded generator), and every run is a fresh server from the dataset
snapshot. Drift within a session (a neighbour's job, thermal state) hits both sides alike and
cancels in the per-pair log ratios.

When a gating metric is still INCONCLUSIVE after the planned pairs, the comparison may extend in
batches up to ``max_pairs``. Each look spends part of the error budget (Lan-DeMets alpha spending,
:func:`harness.judge.stats.alpha_spending`), so the overall false-alarm rate stays at ``alpha`` however
many looks are taken.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from harness.judge import stats
from harness.judge.gate import DEFAULT_ALPHA, PairedCase, judge_pairs
from harness.measure.context import RunContext
from harness.measure.cost_slots import run_side_by_side
from harness.measure.session import Session, new_group_id
from harness.measure.timing import run_once
from harness.model import Kind, RunResult, Scenario, Server, Verdict


@dataclass(frozen=True)
class ComparisonSpec:
    """One base-vs-head comparison of a scenario (every thread count of it)."""

    base: Server
    head: Server
    scenario: Scenario
    base_scenario: Scenario | None = None  # a changed scenario compares its old definition with the new
    #: what this comparison measures (``dbperf ci``'s scope decides it per comparison); the run's
    #: kinds still bound it: a comparison runs the kinds in both
    kinds: tuple[Kind, ...] = ("time", "cost")

    @property
    def base_side(self) -> Scenario:
        return self.base_scenario or self.scenario

    def runs(self, kind: Kind, kinds: Sequence[Kind]) -> bool:
        """Whether this comparison makes runs of ``kind`` in an invocation that measures ``kinds``."""
        return kind in kinds and kind in self.kinds


@dataclass(frozen=True)
class ComparisonResult:
    verdicts: tuple[Verdict, ...]
    runs: tuple[RunResult, ...]
    pairs: int
    looks: int
    group_id: str
    seed: int


def balanced_orders(pairs: int, rng: random.Random) -> list[bool]:
    """True means base first. Half AB, half BA (one extra AB when odd), shuffled."""
    orders = [True] * math.ceil(pairs / 2) + [False] * (pairs // 2)
    rng.shuffle(orders)
    return orders


def run_comparisons(
    session: Session,
    specs: Sequence[ComparisonSpec],
    *,
    pairs: int,
    kinds: Sequence[Kind] = ("time",),
    max_pairs: int | None = None,
    seed: int | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> ComparisonResult:
    """Run and judge every comparison together (Holm across all of them, timing and cost alike).

    Cost pairs (their count from each scenario's cost settings) run in the first look only: a
    deterministic count decides at once, and later looks judge the same cost runs again.
    """
    if pairs < 2 and any(s.runs("time", kinds) for s in specs):
        raise ValueError("an A/B comparison needs at least 2 pairs")
    cap = max(pairs, max_pairs or pairs)
    max_looks = math.ceil(cap / pairs) if any(s.runs("time", kinds) for s in specs) else 1
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)  # noqa: S311 - a reproducible run order, not a secret
    group = new_group_id()
    try:
        return _interleaved(session, specs, pairs, kinds, cap, max_looks, seed, rng, group, alpha)
    except KeyboardInterrupt as exc:  # between runs: still mark the group as incomplete
        spec = specs[0]
        ctx = RunContext(spec.head, spec.scenario, spec.scenario.threads[0], 1, session.testbed, session.git_sha, group)
        session.mark_interrupted(ctx, datetime.now(UTC), exc)
        raise


def _interleaved(
    session: Session,
    specs: Sequence[ComparisonSpec],
    pairs: int,
    kinds: Sequence[Kind],
    cap: int,
    max_looks: int,
    seed: int,
    rng: random.Random,
    group: str,
    alpha: float,
) -> ComparisonResult:
    collected: dict[tuple[int, int, Kind], list[tuple[RunResult, RunResult]]] = {}
    runs: list[RunResult] = []
    verdicts: list[Verdict] = []
    done = 0
    look = 0
    if "cost" in kinds:
        for index, spec in enumerate(specs):
            if not spec.runs("cost", kinds):
                continue
            reps = spec.scenario.cost.repetitions
            session.reporter.phase(f"cost: {reps} pair(s) of callgrind runs of {spec.scenario.name} (seed {seed})")
            planned = [
                (threads, number, first_base)
                for number, first_base in enumerate(balanced_orders(reps, rng), 1)
                for threads in spec.scenario.cost.threads
            ]
            # counts depend on neither load nor core: a pair's two runs go side by side, in the balanced order
            contexts = [
                ctx
                for threads, number, first_base in planned
                for ctx in _pair_contexts(session, spec, threads, number, first_base, group, "cost")
            ]
            done_runs = run_side_by_side(session, contexts)
            for (threads, _number, first_base), (one, two) in zip(
                planned, zip(done_runs[::2], done_runs[1::2], strict=True), strict=True
            ):
                pair = (one, two) if first_base else (two, one)
                runs.extend(pair)
                collected.setdefault((index, threads, "cost"), []).append(pair)
    timed = any(spec.runs("time", kinds) for spec in specs)
    while timed and done < cap:
        look += 1
        batch = min(pairs, cap - done)
        session.reporter.phase(
            f"A/B look {look}/{max_looks}: pairs {done + 1}-{done + batch} ({len(specs)} comparison(s), seed {seed})"
        )
        for first_base in balanced_orders(batch, rng):
            done += 1
            for index, spec in enumerate(specs):
                if not spec.runs("time", kinds):
                    continue
                for threads in spec.scenario.threads:
                    pair = _run_pair(session, spec, threads, done, first_base, group, "time")
                    runs.extend(pair)
                    collected.setdefault((index, threads, "time"), []).append(pair)
        verdicts = _judge(specs, collected, stats.alpha_spending(alpha, look, max_looks) if max_looks > 1 else alpha)
        undecided = any(m.outcome == "inconclusive" and m.gating for v in verdicts for m in v.metrics)
        if not undecided or any(v.outcome == "failed" for v in verdicts):
            break
    if not timed:
        verdicts = _judge(specs, collected, alpha)
        done, look = max((s.scenario.cost.repetitions for s in specs if s.runs("cost", kinds)), default=0), 1
    return ComparisonResult(tuple(verdicts), tuple(runs), done, look, group, seed)


def _judge(
    specs: Sequence[ComparisonSpec],
    collected: dict[tuple[int, int, Kind], list[tuple[RunResult, RunResult]]],
    alpha: float,
) -> list[Verdict]:
    cases = [
        PairedCase(spec.scenario, threads, spec.base.name, spec.head.name, pairs, kind)
        for (index, threads, kind), pairs in collected.items()
        for spec in (specs[index],)
    ]
    return judge_pairs(cases, alpha=alpha)


def _pair_contexts(
    session: Session, spec: ComparisonSpec, threads: int, number: int, base_first: bool, group: str, kind: Kind
) -> tuple[RunContext, RunContext]:
    """A pair's two runs in the order they start (``base_first``: base, then head)."""

    def one(server: Server, scenario: Scenario, label: str) -> RunContext:
        return RunContext(server, scenario, threads, number, session.testbed, session.git_sha, group, label, kind)

    base = one(spec.base, spec.base_side, "base")
    head = one(spec.head, spec.scenario, "head")
    return (base, head) if base_first else (head, base)


def _run_pair(
    session: Session, spec: ComparisonSpec, threads: int, number: int, base_first: bool, group: str, kind: Kind
) -> tuple[RunResult, RunResult]:
    first, second = (
        run_once(session, ctx) for ctx in _pair_contexts(session, spec, threads, number, base_first, group, kind)
    )
    return (first, second) if base_first else (second, first)
