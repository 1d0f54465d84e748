"""Change points in a stored series (QPS per commit, p95 per nightly run): E-divisive means.

The method is E-divisive (Matteson & James 2014, "A Nonparametric Approach for Multiple Change Point
Analysis of Multivariate Data", JASA 109(505)), in the form MongoDB uses for performance history
(Daly et al. 2020, "Change Point Detection in Software Performance Testing", ICPE; the
``signal-processing-algorithms`` package) and Apache Otava (Hunter) builds on:

* the divergence between the segment before and after a candidate split ``tau`` of a segment of
  length ``L`` (``m = tau``, ``n = L - tau``, distance exponent 1) is
  ``Q(tau) = m n / (m + n) * (2/(m n) sum|X_i - Y_j| - 1/C(m,2) sum|X_i - X_k| - 1/C(n,2) sum|Y_j - Y_k|)``
  (an energy distance, Szekely & Rizzo 2005), maximised over ``tau`` with both sides at least
  ``min_size`` long;
* significance by a permutation test: the observations of every current segment are shuffled within
  their segment, ``permutations`` times, with a seeded :class:`numpy.random.Generator`; the p-value is
  ``(1 + #{permuted maximum >= observed maximum}) / (1 + permutations)`` over the maximum across all
  segments, as in Matteson & James section 3.2;
* recursive bisection: the most significant split of all current segments is accepted while its
  p-value is at most ``alpha``, and the search repeats on the new segments.

Speed: each segment's sums come from one ``L x L`` distance matrix and cumulative sums, so all ``tau``
cost ``O(L^2)`` in numpy. A segment's permutation maxima depend only on the segment and the seed, so
they are cached across bisection steps and drawn lazily; a step that cannot reach ``alpha`` any more
stops early (Besag & Clifford 1991, sequential Monte Carlo p-values). A 1000-point series takes well
under a second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.floating[Any]]
_CHUNK = 16  # permutations drawn at a time (early stopping granularity)
_MAX_BLOCK = 1 << 20  # largest batch x blocks x length table built at once


@dataclass(frozen=True)
class ChangePoint:
    """A change of regime starting at ``index`` (the first point of the new segment).

    ``before_mean`` and ``after_mean`` are the means of the neighbouring segments (bounded by the other
    change points), ``change_pct`` is ``after_mean / before_mean - 1`` in percent, ``p_value`` is the
    permutation p-value of the split and ``confidence`` is ``1 - p_value``.
    """

    index: int
    before_mean: float
    after_mean: float
    change_pct: float
    p_value: float
    confidence: float


def _before_sums(y: FloatArray, ranks: NDArray[np.intp]) -> FloatArray:
    """``out[b, k] = sum_{j < k} |y[b, k] - y[b, j]|`` for every row, in ``O(L^1.5)`` per row.

    The time axis is cut into blocks of about ``sqrt(L)``: pairs inside a block come from a small
    distance tensor; pairs with an earlier block from the count ``c`` and sum ``s`` of the earlier,
    smaller values (``|y_k - y_j|`` summed = ``y_k (2c - k') + P - 2s``, with ``k'`` earlier values
    summing to ``P``), read off a table cumulated over blocks and ranks.
    """
    batch, length = y.shape
    c = max(1, math.isqrt(length))
    nb = -(-length // c)
    size = nb * c
    yp = np.pad(y, ((0, 0), (0, size - length)))
    flat_ranks = np.pad(ranks, ((0, 0), (0, size - length)), constant_values=length).ravel()
    yb = yp.reshape(batch, nb, c)
    near = np.einsum("bkij,ij->bki", np.abs(yb[..., :, None] - yb[..., None, :]), np.tri(c, c, -1))
    rows = np.repeat(np.arange(batch), size)
    blocks = np.tile(np.repeat(np.arange(nb), c), batch)
    table = np.zeros((2, batch, nb + 1, length + 2))  # [count | sum][b, blocks before, ranks below]
    table[0, rows, blocks + 1, flat_ranks + 1] = 1.0
    table[1, rows, blocks + 1, flat_ranks + 1] = yp.ravel()
    for beta in range(1, nb + 1):  # a loop over blocks is far faster than cumsum on a middle axis
        table[:, :, beta] += table[:, :, beta - 1]
    table = np.cumsum(table.reshape(-1, length + 2), axis=1).reshape(table.shape)
    count = table[0, rows, blocks, flat_ranks].reshape(batch, size)
    total = table[1, rows, blocks, flat_ranks].reshape(batch, size)
    earlier = (np.arange(size) // c * c).astype(np.float64)
    block_sums = np.concatenate([np.zeros((batch, 1)), np.cumsum(yb.sum(axis=2), axis=1)], axis=1)
    prefix = np.repeat(block_sums[:, :nb], c, axis=1)
    far = yp * (2.0 * count - earlier) + prefix - 2.0 * total
    result: FloatArray = (far + near.reshape(batch, size))[:, :length]
    return result


def _row_sums(x: FloatArray) -> FloatArray:
    """``sum_j |x_i - x_j|`` for every ``i``, from the sorted values in ``O(L log L)``."""
    order = np.argsort(x, kind="stable")
    v = x[order]
    below = np.concatenate([[0.0], np.cumsum(v)[:-1]])
    i = np.arange(v.size)
    sums = v * i - below + (v.sum() - below - v) - v * (v.size - 1 - i)
    out = np.empty_like(x)
    out[order] = sums
    return out


def _q_values(y: FloatArray, row_sums: FloatArray, ranks: NDArray[np.intp], min_size: int) -> FloatArray:
    """``Q(tau)`` for ``tau = min_size .. L - min_size`` for every row of ``y`` (shape batch x L).

    ``row_sums[b, i]`` is ``sum_j |y[b, i] - y[b, j]|`` over the whole segment and ``ranks[b, i]`` the
    rank of ``y[b, i]`` in it (0-based, ties broken by position); both only depend on the value, so
    permuted rows reuse the unpermuted ones.
    """
    batch, length = y.shape
    before = np.empty((batch, length))  # before[b, k] = sum_{j < k} |y_k - y_j|
    step = max(1, _MAX_BLOCK // (length * (math.isqrt(length) + 2)))
    for start in range(0, batch, step):
        before[start : start + step] = _before_sums(y[start : start + step], ranks[start : start + step])
    after = row_sums - before  # sum_{j > k} |y_k - y_j|
    zero = np.zeros((batch, 1))
    within_left = np.concatenate([zero, np.cumsum(before, axis=1)], axis=1)  # pairs inside [0, tau)
    within_right = np.concatenate([np.cumsum(after[:, ::-1], axis=1)[:, ::-1], zero], axis=1)  # [tau, L)
    taus = np.arange(min_size, length - min_size + 1)
    a, b = within_left[:, taus], within_right[:, taus]
    cross = within_left[:, -1:] - a - b
    m = taus.astype(np.float64)
    n = length - m
    energy = 2.0 * cross / (m * n) - 2.0 * a / (m * (m - 1.0)) - 2.0 * b / (n * (n - 1.0))
    result: FloatArray = m * n / (m + n) * energy
    return result


@dataclass
class _Segment:
    """One segment of the bisection: its best split and its lazily drawn permutation maxima."""

    start: int
    end: int
    tau: int = -1
    q: float = -math.inf
    null: list[float] = field(default_factory=list)
    values: FloatArray | None = None
    row_sums: FloatArray | None = None
    ranks: NDArray[np.intp] | None = None
    rng: np.random.Generator | None = None

    def prepare(self, x: FloatArray, min_size: int, seed: int) -> None:
        if self.end - self.start < 2 * min_size:
            return
        self.values = x[self.start : self.end]
        self.row_sums = _row_sums(self.values)
        self.ranks = np.argsort(np.argsort(self.values, kind="stable"))
        q = _q_values(self.values[None, :], self.row_sums[None, :], self.ranks[None, :], min_size)[0]
        best = int(np.argmax(q))
        self.tau, self.q = min_size + best, float(q[best])
        self.rng = np.random.default_rng([seed, self.start, self.end])

    def draw(self, count: int, min_size: int) -> None:
        """Extend the cached permutation maxima to ``count`` draws."""
        if self.values is None or self.row_sums is None or self.ranks is None or self.rng is None:
            return
        need = count - len(self.null)
        if need <= 0:
            return
        perms = np.argsort(self.rng.random((need, self.values.size)), axis=1)
        q = _q_values(self.values[perms], self.row_sums[perms], self.ranks[perms], min_size)
        self.null.extend(float(v) for v in q.max(axis=1))

    def null_at(self, count: int) -> FloatArray:
        if self.values is None:
            return np.full(count, -math.inf)
        return np.asarray(self.null[:count])


def detect_change_points(
    values: Sequence[float] | FloatArray,
    *,
    alpha: float = 0.01,
    permutations: int = 199,
    min_size: int = 3,
    seed: int = 0,
) -> tuple[ChangePoint, ...]:
    """Change points of ``values`` by E-divisive means with a permutation test, in index order.

    ``alpha`` is the significance each accepted split must reach, ``permutations`` the number of
    shuffles per test (with 199 the smallest p-value is 0.005), ``min_size`` the shortest segment
    allowed (at least 2), and ``seed`` makes the result reproducible.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or not bool(np.all(np.isfinite(x))):
        raise ValueError("values must be a one-dimensional sequence of finite numbers")
    if min_size < 2 or not 0.0 < alpha < 1.0:
        raise ValueError("need min_size >= 2 and 0 < alpha < 1")
    # a permutation test can only reject when at most this many shuffles reach the observed value
    allowed = math.floor(alpha * (permutations + 1) + 1e-9) - 1
    if allowed < 0:
        raise ValueError(
            f"{permutations} permutations cannot reach alpha={alpha}: use at least {math.ceil(1 / alpha) - 1}"
        )
    work = x - float(np.median(x)) if x.size else x  # centred: the statistic is shift-invariant
    segments = [_Segment(0, x.size)]
    segments[0].prepare(work, min_size, seed)
    found: list[tuple[int, float]] = []
    while True:
        best = max(segments, key=lambda s: s.q)
        if best.q == -math.inf:
            break
        tolerance = 1e-9 * max(1.0, abs(best.q))
        exceed, drawn = 0, 0
        while drawn < permutations and exceed <= allowed:
            drawn = min(permutations, drawn + _CHUNK)
            for s in segments:
                s.draw(drawn, min_size)
            null = np.max([s.null_at(drawn) for s in segments], axis=0)
            exceed = int(np.count_nonzero(null >= best.q - tolerance))
        if exceed > allowed:
            break
        split = best.start + best.tau
        found.append((split, (1 + exceed) / (1 + permutations)))
        segments.remove(best)
        for part in (_Segment(best.start, split), _Segment(split, best.end)):
            part.prepare(work, min_size, seed)
            segments.append(part)
        segments.sort(key=lambda s: s.start)

    found.sort()
    bounds = [0, *(i for i, _ in found), x.size]
    result = []
    for k, (index, p) in enumerate(found):
        before = float(x[bounds[k] : index].mean())
        after = float(x[index : bounds[k + 2]].mean())
        change = (after / before - 1.0) * 100.0 if before != 0.0 else math.nan
        result.append(ChangePoint(index, before, after, change, p, 1.0 - p))
    return tuple(result)
