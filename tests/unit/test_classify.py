"""harness.judge.classify: every outcome names its real cause, and the sentence agrees with the numbers."""

from __future__ import annotations

import math

import pytest

from harness.judge.classify import Evidence, classify
from harness.model.time_estimate import duration

LOG = math.log


def ev(est: float, low: float, high: float, p: float, *, kind="signed-rank", conf=0.95, noise=0.05, n=10, **kw):
    """Evidence from ratios (0.9 = a 10 % drop)."""
    return Evidence(kind, LOG(est), LOG(low), LOG(high), conf, p, noise, n, n, **kw)


def decide(e: Evidence, p_adjusted: float, *, higher_is_worse=False, min_effect=0.05, family=1, alpha=0.02, **kw):
    return classify(
        e,
        label="QPS",
        p_adjusted=p_adjusted,
        family_size=family,
        alpha=alpha,
        min_effect=min_effect,
        higher_is_worse=higher_is_worse,
        **kw,
    )


def test_regression_needs_significance_a_harmful_interval_and_size():
    r = decide(ev(0.90, 0.86, 0.94, 0.001), 0.003, family=3)
    assert (r.outcome, r.cause) == ("regression", "regression")
    assert r.reason.startswith("Regression: QPS -10.0 % (95 % interval -14.0 % to -6.0 %, adjusted p = 0.003)")
    assert "beyond the minimum effect of 5 %" in r.reason
    up = decide(ev(1.10, 1.05, 1.15, 0.001), 0.001, higher_is_worse=True)
    assert up.outcome == "regression" and "a rise beyond" in up.reason
    better = decide(ev(1.10, 1.07, 1.15, 0.001), 0.001)
    assert (better.outcome, better.cause) == ("improvement", "improvement")


def test_the_multiplicity_adjustment_is_named_when_it_is_the_cause():
    """QPS -35.5 % [-47.4, -3.0]: the interval excludes no change but not the minimum effect, and only
    Holm keeps it from a regression."""
    r = decide(ev(0.645, 0.526, 0.97, 0.0079), 0.024, family=3, seconds_per_repetition=12.0)
    assert (r.outcome, r.cause) == ("inconclusive", "multiplicity")
    assert "-35.5 %" in r.reason and "-47.4 %" in r.reason and "-3.0 %" in r.reason
    assert "adjusted for 3 gating tests (Holm) p = 0.024, not below alpha 0.02" in r.reason
    assert "cannot rule out" not in r.reason


def test_an_interval_wholly_beyond_the_minimum_effect_is_never_inconclusive():
    """The earlier multiplicity case, QPS -35.5 % [-47.4, -8.4] at adjusted p = 0.024: its reason said
    inconclusive while its interval lay wholly beyond the 5 % minimum effect. Decided on that interval
    it is a regression; the gate widens such an interval to the family's confidence first, and the
    wider interval, reaching inside the minimum effect, leaves it inconclusive and says why."""
    r = decide(ev(0.645, 0.526, 0.916, 0.0079), 0.024, family=3)
    assert (r.outcome, r.cause) == ("regression", "regression")
    assert "the whole interval lies beyond it" in r.reason
    wide = decide(ev(0.645, 0.49, 1.02, 0.0079, conf=0.9933), 0.024, family=3, required_confidence=0.9933, widened=True)
    assert (wide.outcome, wide.cause) == ("inconclusive", "noise")  # the wider interval reaches past no change
    assert (
        "99.3 % interval -51.0 % to +2.0 %, widened to the confidence alpha 0.02 over 3 gating tests needs"
        in wide.reason
    )
    better = decide(ev(1.30, 1.08, 1.55, 0.03), 0.03)
    assert (better.outcome, better.cause) == ("improvement", "improvement")


def test_an_interval_that_excludes_zero_at_95_percent_but_not_at_alpha():
    r = decide(ev(0.90, 0.82, 0.99, 0.03), 0.03)
    assert (r.outcome, r.cause) == ("inconclusive", "significance")
    assert "p = 0.03 is not below alpha 0.02" in r.reason


def test_a_real_change_smaller_than_the_minimum_effect():
    small = decide(ev(0.99, 0.985, 0.995, 0.001), 0.001)
    assert (small.outcome, small.cause) == ("pass", "pass")
    assert "a real drop but smaller than the minimum effect of 5 %" in small.reason
    edge = decide(ev(0.98, 0.93, 0.995, 0.001), 0.001)
    assert (edge.outcome, edge.cause) == ("inconclusive", "small")
    assert "inside the 5 % minimum effect" in edge.reason


def test_pass_rules_out_the_harmful_change():
    ok = decide(ev(1.01, 0.99, 1.02, 0.4), 0.4, higher_is_worse=True)
    assert (ok.outcome, ok.cause) == ("pass", "pass")
    assert ok.summary == "rules out a rise of 5 % or more"


def test_too_noisy_says_what_would_decide_and_how_long_it_takes():
    wide = decide(ev(1.0, 0.9, 1.1, 0.9, noise=0.1), 0.9, higher_is_worse=True, seconds_per_repetition=30.0)
    assert (wide.outcome, wide.cause) == ("inconclusive", "noise")
    assert "the interval reaches +10.0 %" in wide.reason
    assert "the noise is 10.0 % SD" in wide.reason
    assert wide.repetitions_needed is not None and wide.repetitions_needed > 10
    assert wide.seconds_needed == wide.repetitions_needed * 30.0
    assert f"about {wide.repetitions_needed} pairs ({duration(wide.seconds_needed)}) would likely decide" in wide.reason


def test_too_few_pairs_for_a_95_percent_interval():
    short = decide(ev(1.0, 0.995, 1.005, 1.0, conf=0.75, n=3), 1.0, higher_is_worse=True)
    assert (short.outcome, short.cause) == ("inconclusive", "repetitions")
    assert "3 pairs give at most a 75 % interval, short of the 95 % asked for" in short.reason
    assert "6 or more give a full 95 % interval" in short.reason


def test_baseline_mode_advice_counts_candidate_runs():
    e = Evidence("rank-sum", 0.0, LOG(0.9), LOG(1.1), 0.95, 0.9, 0.08, 6, 6)
    r = decide(e, 0.9, seconds_per_repetition=5.0)
    assert "candidate runs" in r.reason


def test_a_single_cost_run_a_side_is_inconclusive_with_its_cause():
    e = Evidence("cost", 0.0, -math.inf, math.inf, 0.95, 1.0, math.nan, 1, 3, refusal="repetitions", ceiling_cv=0.0025)
    r = decide(e, 1.0, higher_is_worse=True, min_effect=0.01)
    assert (r.outcome, r.cause) == ("inconclusive", "one-run")
    assert "needs at least 2 runs a side" in r.reason


def test_noisy_cost_runs_are_judged_on_their_spread_and_say_so():
    # an A/A pair of sides that disagree 0.8 % (SD), 3.2x the ceiling: undecided, and not deterministic
    aa = Evidence("cost", LOG(1.001), LOG(0.985), LOG(1.017), 0.95, 0.9, 0.008, 3, 3, ceiling_cv=0.0025, noisy=True)
    r = decide(aa, 0.9, higher_is_worse=True, min_effect=0.01)
    assert (r.outcome, r.cause) == ("inconclusive", "not-deterministic")
    assert "the runs disagree by 0.8 % (SD), 3.2x the 0.25 % a deterministic count may vary" in r.reason
    assert "not deterministic" in r.reason
    # an effect far beyond that spread is decided, and the excess noise is still named
    far = Evidence("cost", LOG(1.124), LOG(1.110), LOG(1.139), 0.95, 1e-5, 0.0057, 3, 3, ceiling_cv=0.00125, noisy=True)
    r = decide(far, 1e-5, higher_is_worse=True, min_effect=0.005)
    assert (r.outcome, r.cause) == ("regression", "regression")
    assert "judged on that spread, since the runs disagree by 0.57 % (SD), 4.6x the 0.125 %" in r.reason


def test_cost_regression_wording():
    e = Evidence("cost", LOG(1.012), LOG(1.0115), LOG(1.0125), 0.95, 1e-9, 0.0002, 3, 3)
    r = decide(e, 4e-9, higher_is_worse=True, min_effect=0.005, family=4)
    assert r.outcome == "regression"
    assert "+1.2 %" in r.reason


@pytest.mark.parametrize(
    ("seconds", "text"), [(40, "~40 s"), (720, "~12 min"), (3 * 3600 + 1800, "~3.5 h"), (3 * 86400, "~3.0 days")]
)
def test_duration(seconds: float, text: str):
    assert duration(seconds) == text
