"""Can this design fail? Attainable p-values, the repetitions a design needs, and power.

A gate whose smallest reachable adjusted p-value is above alpha can never say REGRESSION. The
functions here let ``gate``, ``compare``, ``ci plan``, ``ci run`` and the pytest plugin find that out
*before* they spend any runner time, and either choose a design that can decide (more repetitions)
or refuse in one line.

Exact attainable p-values (no ties; ties and zero differences can only raise them):

* signed-rank (A/B pairs, :func:`harness.judge.ranktests.paired_test`): ``2 / 2**n`` (all ``n`` pairs
  one way: one of the ``2**n`` sign patterns);
* rank-sum (baseline mode, :func:`harness.judge.ranktests.two_sample_test`): ``2 / C(m + n, n)`` (every
  candidate beyond every baseline run);
* cost (:func:`harness.judge.stats.cost_test`): 0 with two or more runs a side (the t statistic grows
  without bound with the change); 1 with a single run on a side, where the test refuses.

**Holm across every gating test.** Holm's adjusted p-values never fall when a raw p-value rises, so the
smallest adjusted p-value a test can reach *on its own* (every other test at p = 1: a p95-only
regression) is ``N * min_p`` for ``N`` gating tests. A design can fail a build on every gating metric
only when that is below alpha for every gating test.

Why more repetitions and not a smarter family: any procedure that controls the family-wise error
under arbitrary dependence and is built from weighted Bonferroni tests (Holm, fallback, gatekeeping,
any graph of Bretz et al. 2009) can reject a test on its own only when ``p <= alpha * w`` with weights
summing to at most 1; with equal ``min_p`` for all ``N`` tests, requiring every test to be able to
fail forces ``min_p <= alpha / N``, which is flat Holm's own condition. Serial gatekeeping (Dmitrienko
& Tamhane 2007) does worse: with no primary rejected, a secondary (a p95-only regression) can never be
flagged. A family structure only decides where surplus alpha goes once the repetitions allow it;
repetitions are the lever, and dbperf keeps flat Holm, with one weighting: the components of a cost
comparison's work vector (system calls by kind, server counters; :mod:`harness.model.work`) share the
weight of one test, so the vector adds one test to the family, not fourteen (weighted Holm, Holm 1979).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.judge import ranktests, stats
from harness.model.verdict import TestMethod

Kind = TestMethod


# --------------------------------------------------------------------------------------------------
# attainable raw p-values


def min_p_signed_rank(n: int) -> float:
    """Smallest exact two-sided Wilcoxon signed-rank p-value with ``n`` untied non-zero pairs: ``2 / 2**n``.

    Above :data:`ranktests.EXACT_MAX_N` pairs the value of :func:`stats.paired_test`'s normal approximation
    at the extreme statistic (far below any alpha).
    """
    if n < 1:
        raise ValueError("need at least one pair")
    if n <= ranktests.EXACT_MAX_N:
        return min(1.0, 2.0 ** (1 - n))
    mean, var = n * (n + 1) / 4.0, n * (n + 1) * (2 * n + 1) / 24.0
    return ranktests.normal_two_sided(n * (n + 1) / 2.0, mean, var, 0.5)


def min_p_rank_sum(m: int, n: int) -> float:
    """Smallest exact two-sided Mann-Whitney p-value for samples of ``m`` and ``n``: ``2 / C(m + n, n)``."""
    if m < 1 or n < 1:
        raise ValueError("need at least one value on each side")
    if m * n <= ranktests.EXACT_MAX_MN:
        return min(1.0, 2.0 / math.comb(m + n, n))
    return ranktests.normal_two_sided(m * n, m * n / 2.0, m * n * (m + n + 1) / 12.0, 0.5)


def min_p_cost(n_base: int, n_head: int) -> float:
    """Smallest p-value of :func:`cost_test`: 0 (an infimum) with two or more runs a side, else 1.

    With one run on a side the test refuses (p = 1, INCONCLUSIVE): it cannot see that side's noise,
    and a cost metric is only trusted once its runs are shown to agree.
    """
    if n_base < 1 or n_head < 1:
        raise ValueError("need at least one value on each side")
    return 0.0 if min(n_base, n_head) >= 2 else 1.0


@dataclass(frozen=True)
class TestDesign:
    """One gating test of a planned invocation.

    ``n_base``/``n_head``: pairs on both sides for ``signed-rank``; baseline and candidate counts for
    ``rank-sum``; runs per side for ``cost``. ``comparison`` and ``metric`` name it in messages.
    ``weight`` is the test's share in the weighted Holm family (1; a cost comparison's gated work-vector
    components share 1 between them, :func:`harness.judge.stats.weighted_holm`).
    """

    __test__ = False  # not a pytest class

    kind: Kind
    n_base: int
    n_head: int
    comparison: str = ""
    metric: str = ""
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.n_base < 1 or self.n_head < 1:
            raise ValueError(f"{self.label}: need at least one repetition on each side")
        if self.kind == "signed-rank" and self.n_base != self.n_head:
            raise ValueError(f"{self.label}: a paired test has as many base as head runs")

    @property
    def label(self) -> str:
        return " ".join(x for x in (self.comparison, self.metric) if x) or self.kind

    @property
    def repetitions(self) -> str:
        if self.kind == "signed-rank":
            return f"{self.n_base} pairs"
        return f"{self.n_base} + {self.n_head}"


def min_p(test: TestDesign) -> float:
    """The smallest raw p-value ``test`` can produce."""
    if test.kind == "signed-rank":
        return min_p_signed_rank(test.n_base)
    if test.kind == "rank-sum":
        return min_p_rank_sum(test.n_base, test.n_head)
    return min_p_cost(test.n_base, test.n_head)


@dataclass(frozen=True)
class Attainable:
    """What one gating test can reach under Holm: its smallest raw p-value; adjusted, at best (every
    test at its extreme) and on its own (every other test at p = 1, e.g. a p95-only regression)."""

    test: TestDesign
    min_p: float
    best: float
    alone: float


@dataclass(frozen=True)
class DesignCheck:
    """The attainability of every gating test of a design under Holm at ``alpha``."""

    alpha: float
    tests: tuple[Attainable, ...] = ()

    @property
    def ok(self) -> bool:
        return all(a.alone < self.alpha for a in self.tests)

    @property
    def worst(self) -> Attainable | None:
        return max(self.tests, key=lambda a: a.alone, default=None)

    @property
    def level(self) -> float:
        """The raw p-value a test of weight 1 needs on its own: ``alpha / W`` (``alpha / N`` unweighted)."""
        return self.alpha / max(1.0, sum(a.test.weight for a in self.tests))

    def problem(self) -> str | None:
        """Why the design cannot fail (one clause), or None when every gating test can."""
        worst = self.worst
        if self.ok or worst is None:
            return None
        t = worst.test
        what = t.label or t.kind
        if t.kind == "cost":
            return f"{what} has a single cost run on a side, and a cost metric needs 2 to show its runs agree"
        return (
            f"{len(self.tests)} gating test(s) need p < {self.level:.2g} each under Holm at alpha "
            f"{self.alpha:g}, but {what} ({t.kind}, {t.repetitions}) reaches at best p = {worst.min_p:.2g}"
        )


def attainable(tests: Sequence[TestDesign], alpha: float) -> DesignCheck:
    """The smallest adjusted p-value each gating test can reach on its own under Holm."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be between 0 and 1")
    total = sum(t.weight for t in tests)
    mins = [min_p(t) for t in tests]
    best = stats.weighted_holm(mins, [t.weight for t in tests]) if tests else []
    found = (Attainable(t, m, b, min(1.0, m * total / t.weight)) for t, m, b in zip(tests, mins, best, strict=True))
    return DesignCheck(alpha, tuple(found))


def with_repetitions(tests: Sequence[TestDesign], n: int) -> list[TestDesign]:
    """The same design with ``n`` pairs for every A/B test and ``n`` candidates for every baseline test.

    Cost tests keep their own run counts (they are separate runs under valgrind).
    """
    out = []
    for t in tests:
        if t.kind == "signed-rank":
            out.append(TestDesign(t.kind, n, n, t.comparison, t.metric, t.weight))
        elif t.kind == "rank-sum":
            out.append(TestDesign(t.kind, t.n_base, n, t.comparison, t.metric, t.weight))
        else:
            out.append(t)
    return out


def repetitions_needed(tests: Sequence[TestDesign], alpha: float, *, limit: int = 1000) -> int | None:
    """Smallest pairs (A/B) or candidate runs (baseline, for the stored baseline counts) at which every
    gating test can reject on its own; None if not even ``limit`` do (a one-run baseline, or a cost
    test with a single run on a side)."""
    if any(t.kind == "cost" and min(t.n_base, t.n_head) < 2 for t in tests):
        return None
    for n in range(2, limit + 1):
        if attainable(with_repetitions(tests, n), alpha).ok:
            return n
    return None
