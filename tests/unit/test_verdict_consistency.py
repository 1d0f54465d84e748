"""A reason never contradicts its interval, for every outcome and cause (harness.judge.classify, gate).

An interval (at the confidence asked for or more) wholly beyond the minimum effect is a regression or
an improvement; one wholly inside it is a pass; an INCONCLUSIVE verdict's interval is neither. A sweep
of seeded evidence over every kind of test, p-value, noise and refusal checks the rule and that every
cause is reached; the judge's widening (gate.decide) and the release comparison's numbers from issue 25
are checked with the real tests.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import get_args

import numpy as np
import pytest

from harness.judge import gate, stats
from harness.judge.classify import Cause, Evidence, classify

ALPHA = 0.02


def _sweep(seed: int = 7, n: int = 6000) -> list[tuple[Evidence, float, float, bool, int]]:
    """(evidence, adjusted p, minimum effect, higher is worse, family size) drawn over every region."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        kind = rng.choice(["signed-rank", "rank-sum", "cost"])
        min_effect = float(rng.choice([0.005, 0.05, 0.15]))
        t = math.log1p(min_effect)
        centre = float(rng.normal(0.0, 3 * t))
        half = float(rng.uniform(0.05, 3.0) * t)
        low, high = centre - half * rng.uniform(0.2, 1.0), centre + half * rng.uniform(0.2, 1.0)
        p = float(rng.choice([rng.uniform(0, 0.05), rng.uniform(0, 1)]))
        family = int(rng.integers(1, 5))
        p_adj = min(1.0, p * float(rng.choice([1, family])))
        conf = float(rng.choice([0.95, 0.9501, 0.97, 0.875, 0.99]))
        noisy = kind == "cost" and bool(rng.random() < 0.3)
        refusal = "repetitions" if kind == "cost" and rng.random() < 0.05 else None
        if refusal:
            low, high, p, p_adj = -math.inf, math.inf, 1.0, 1.0
        n_runs = int(rng.integers(1 if refusal else 2, 12))
        ev = Evidence(
            kind, float(rng.uniform(low, high)) if not refusal else 0.0, low, high, conf, p,
            float(rng.uniform(0.0001, 0.05)), n_runs, n_runs, refusal=refusal,
            ceiling_cv=min_effect / 4 if kind == "cost" else None, noisy=noisy,
        )  # fmt: skip
        out.append((ev, p_adj, min_effect, bool(rng.random() < 0.5), family))
    return out


def _regions(ev: Evidence, min_effect: float, higher_is_worse: bool) -> tuple[bool, bool, bool]:
    """(wholly beyond on the harmful side, wholly beyond on the beneficial side, wholly inside)."""
    t = math.log1p(min_effect)
    sign = 1.0 if higher_is_worse else -1.0
    lo, hi = sorted((sign * ev.low, sign * ev.high))
    return lo > t, hi < -t, -t < lo and hi < t


def test_no_reason_contradicts_its_interval_for_any_outcome_or_cause():
    causes: Counter[str] = Counter()
    for ev, p_adj, min_effect, worse, family in _sweep():
        r = classify(
            ev, label="m", p_adjusted=p_adj, family_size=family, alpha=ALPHA, min_effect=min_effect,
            higher_is_worse=worse,
        )  # fmt: skip
        causes[r.cause] += 1
        harmful, beneficial, inside = _regions(ev, min_effect, worse)
        full = ev.confidence >= 0.95 - 1e-9 and ev.refusal is None
        where = f"{r.reason} [{ev}]"
        if full and harmful:
            assert r.outcome == "regression", where
        if full and beneficial:
            assert r.outcome == "improvement", where
        if full and inside:
            assert r.outcome == "pass", where
        if r.outcome == "inconclusive" and full:
            assert not (harmful or beneficial or inside), where
        if r.outcome == "regression":
            assert not beneficial and not inside, where
        if r.outcome == "improvement":
            assert not harmful and not inside, where
        if r.outcome == "pass":
            assert not harmful, where
        if ev.noisy and ev.refusal is None:
            assert "a deterministic count may vary" in r.reason, where
    assert set(causes) == set(get_args(Cause)), causes  # every cause was reached and checked


def test_the_release_comparisons_noisy_counts_decide_and_name_the_noise():
    """Issue 25: instructions/txn of oltp_update_non_index, MariaDB 10.11 -> 11.8 containers, 3 runs a side."""
    base, head = [62_223.0, 62_045.0, 61_508.0], [70_062.0, 69_412.0, 69_412.0]
    est = stats.cost_test(base, head, min_effect=0.005)
    assert est.noisy
    ev = Evidence(
        "cost", est.estimate, est.low, est.high, est.confidence, est.p_value, est.noise_sd, est.n_base, est.n_head,
        ceiling_cv=est.ceiling_cv, noisy=est.noisy,
    )  # fmt: skip
    shown, r = gate.decide(
        ev, base, head, kind="cost", mode="ab", metric="instr_per_txn", min_effect=0.005,
        p_adjusted=min(1.0, est.p_value * 4), family_size=4, alpha=ALPHA,
    )  # fmt: skip
    assert (r.outcome, r.cause) == ("regression", "regression")
    assert stats.percent(shown.low) > 10.0  # the whole interval lies far beyond the 0.5 % minimum effect
    assert "+12.4 %" in r.reason
    assert "the runs disagree by 0.5" in r.reason and "x the 0.125 % a deterministic count may vary" in r.reason


def test_an_aa_pair_of_noisy_sides_is_not_a_regression():
    rng = np.random.default_rng(25)
    regressions = 0
    for _ in range(500):
        base, head = list(62_000 * np.exp(rng.normal(0, 0.006, 3))), list(62_000 * np.exp(rng.normal(0, 0.006, 3)))
        est = stats.cost_test(base, head, min_effect=0.005)
        ev = Evidence(
            "cost", est.estimate, est.low, est.high, est.confidence, est.p_value, est.noise_sd, 3, 3,
            ceiling_cv=est.ceiling_cv, noisy=est.noisy,
        )  # fmt: skip
        _, r = gate.decide(
            ev, base, head, kind="cost", mode="ab", metric="instr_per_txn", min_effect=0.005,
            p_adjusted=est.p_value, family_size=1, alpha=ALPHA,
        )  # fmt: skip
        regressions += r.outcome == "regression"
    assert regressions <= ALPHA * 500  # the t-test's own false-alarm rate, one-sided: measured 3 of 500


@pytest.mark.parametrize("kind", ["rank-sum", "cost"])
def test_the_judge_widens_an_interval_beyond_the_minimum_effect_that_holm_did_not_keep(kind):
    """A 95 % interval wholly beyond the minimum effect with an adjusted p at or above alpha is shown and
    decided at the family's confidence: never an INCONCLUSIVE reason beside an interval beyond."""
    rng = np.random.default_rng(3)
    family, min_effect, seen = 4, 0.05 if kind == "rank-sum" else 0.005, 0
    for _ in range(4000):
        noise = 0.08 if kind == "rank-sum" else 0.004
        base = list(np.exp(rng.normal(0, noise, 8 if kind == "rank-sum" else 3)))
        head = list(np.exp(rng.normal(math.log1p(3 * min_effect), noise, 5 if kind == "rank-sum" else 3)))
        ev = gate._evidence(kind, "baseline", base, head, min_effect=min_effect)
        p_adj = min(1.0, ev.p_value * family)
        if not (p_adj >= ALPHA and gate._beyond(ev, min_effect)):
            continue
        seen += 1
        shown, r = gate.decide(
            ev, base, head, kind=kind, mode="baseline", metric="instr_per_txn" if kind == "cost" else "p95_ms",
            min_effect=min_effect, p_adjusted=p_adj, family_size=family, alpha=ALPHA,
        )  # fmt: skip
        assert shown.confidence > 0.99 and shown.high - shown.low > ev.high - ev.low
        assert f"widened to the confidence alpha {ALPHA:g} over {family} gating tests needs" in r.reason
        harmful, _, _ = _regions(shown, min_effect, True)
        assert (r.outcome == "regression") == harmful, r.reason
    assert seen >= 5  # the case is common enough to have been checked
