"""The stopping estimate: an exact one-sided hypergeometric bound from a random sample of the remainder."""
from __future__ import annotations

import random

import pytest
from scipy.stats import hypergeom

from labeler.judging.stopping import StoppingRule, draw_sample, estimate_remaining, hypergeometric_upper


def test_stopping_upper_by_hand():
    # N=100, n=50, nothing found: P(X=0 | R) = C(100-R, 50) / C(100, 50) = prod_{i<R} (50-i)/(100-i).
    # R=4: 50*49*48*47 / (100*99*98*97) = 0.0587 > 0.05; R=5: 0.0587 * 46/96 = 0.0281 < 0.05 -> bound 4.
    assert hypergeometric_upper(100, 50, 0) == 4


@pytest.mark.parametrize("population,sample,found", [(30, 5, 0), (30, 5, 2), (200, 20, 1), (57, 57, 3), (10, 1, 1)])
def test_stopping_upper_is_the_last_r_above_five_percent(population, sample, found):
    upper = hypergeometric_upper(population, sample, found)
    assert hypergeom.cdf(found, population, upper, sample) > 0.05
    if upper < population - (sample - found):
        assert hypergeom.cdf(found, population, upper + 1, sample) <= 0.05


def test_stopping_estimate_counts_what_is_left_after_the_sample():
    # 1,400 unjudged, 20 sampled, none relevant: the bound on the remainder is the R above (the
    # sample itself holds none of them); the point estimate is 0.
    est = estimate_remaining(1400, [0] * 20)
    assert (est.estimate, est.upper) == (0.0, hypergeometric_upper(1400, 20, 0))
    assert est.upper == 193 and not est.done  # the README's example
    # 2 of 10 relevant in a remainder of 50: 2/10 * 50 = 10 expected in all, 8 left after the sample.
    est = estimate_remaining(50, [1, 0, 2, 0, 0, 0, 0, 0, 0, 0])
    assert est.estimate == pytest.approx(8.0)
    assert est.upper == hypergeometric_upper(50, 10, 2) - 2


def test_stopping_bound_holds_in_at_least_95_percent_of_samples():
    rng = random.Random(3)
    for relevant in (0, 1, 3, 12):
        held = 0
        trials = 400
        for t in range(trials):
            remainder = ["r"] * relevant + ["n"] * (80 - relevant)
            sample = draw_sample(remainder, 25, seed=f"{relevant}-{t}-{rng.random()}")
            est = estimate_remaining(80, [int(d == "r") for d in sample])
            held += relevant - sum(d == "r" for d in sample) <= est.upper
        assert held / trials >= 0.95, (relevant, held)


def test_stopping_small_remainder_can_say_done():
    # Everything left sampled and nothing relevant: nothing is left, at any confidence.
    assert estimate_remaining(12, [0] * 12).done
    assert not estimate_remaining(12, [0] * 3).done


def test_stopping_knee_waits_for_patience():
    rule = StoppingRule(patience=3)
    assert not rule.knee([True, False, False])
    assert rule.knee([True, False, False, False])
    assert not rule.knee([False] * 5) and rule.knee([False] * 6)
