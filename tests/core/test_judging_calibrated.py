"""The calibrated model's stopping estimate: Platt scaling on held-out scores, a Poisson bound."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import poisson

from labeler.judging.calibrated import CLAIM_CONFIDENCE, calibrated_remaining, platt_fit, poisson_mixture_upper, sigmoid
from labeler.judging.stopping import estimate_remaining


def test_calibrated_platt_fit_recovers_a_known_curve():
    rng = np.random.default_rng(0)
    s = rng.normal(0, 2, 20000)
    y = (rng.random(len(s)) < sigmoid(1.5 * s - 2.0)).astype(int)
    a, b = platt_fit(s, y)
    assert a == pytest.approx(1.5, abs=0.08) and b == pytest.approx(-2.0, abs=0.08)


def test_calibrated_platt_fit_stays_finite_when_the_labels_separate():
    a, b = platt_fit([3.0, 2.5, -1.0, -2.0, -3.0], [1, 1, 0, 0, 0])
    assert np.isfinite(a) and np.isfinite(b) and a > 0


def test_calibrated_poisson_upper_by_hand():
    # P(Poisson(0.355) <= 1) = e^-0.355 * 1.355 = 0.9506; at 0.36 it is 0.9488 < 0.95.
    assert poisson_mixture_upper([0.355]) == 1
    assert poisson_mixture_upper([0.36]) == 2
    # A mixture: half the curves say 0 expected, half say 3 -> mean CDF at m: (1 + P(Poisson(3) <= m)) / 2.
    m = poisson_mixture_upper([0.0, 3.0])
    assert (1 + poisson.cdf(m, 3.0)) / 2 >= 0.95 > (1 + poisson.cdf(m - 1, 3.0)) / 2


def _separable(rng, unjudged=1380):
    """A question whose relevant documents the model scores far above the rest: 5 found among 40
    judged by rank, 20 drawn at random from the remainder, none relevant there."""
    held = np.concatenate([rng.normal(3, 0.5, 5), rng.normal(-1, 1, 35), rng.normal(-3, 1, 20)])
    labels = [1] * 5 + [0] * 55
    return rng.normal(-3, 1, unjudged), held, labels


def test_calibrated_says_done_where_the_random_sample_cannot():
    rest, held, labels = _separable(np.random.default_rng(1))
    model = calibrated_remaining(rest, held, labels, bootstrap=50)
    sample = estimate_remaining(len(rest) + 20, [0] * 20)
    assert model.done and model.expected < 0.5
    assert not sample.done and sample.upper == 193  # the assumption-free bound: 20 of 1,400 allow 193


def test_calibrated_is_not_done_when_the_sample_finds_relevant_documents_the_model_scores_low():
    rest, held, labels = _separable(np.random.default_rng(2))
    labels[-2:] = [1, 1]  # two of the random sample, scored like the remainder, were relevant
    model = calibrated_remaining(rest, held, labels, bootstrap=50)
    assert not model.done and model.upper > 20


def test_calibrated_done_claims_hold_on_generated_questions():
    """About six relevant documents a question, scored N(3, 1) against the rest's N(-2, 1); the top 30
    and a random 20 judged, their held-out scores seen with noise: of the questions it calls done at
    the claim's confidence, at least 90% truly have at most one relevant document left."""
    rng = np.random.default_rng(7)
    done = held = 0
    for _ in range(40):
        r = rng.poisson(6)
        s = np.concatenate([rng.normal(3, 1, r), rng.normal(-2, 1, 1400 - r)])
        relevant = np.arange(len(s)) < r
        order = np.argsort(-s)
        judged = np.concatenate([order[:30], rng.choice(order[30:], 20, replace=False)])
        rest = np.ones(len(s), dtype=bool)
        rest[judged] = False
        est = calibrated_remaining(s[rest], s[judged] + rng.normal(0, 0.3, len(judged)),
                                   relevant[judged].astype(int), bootstrap=50, seed=int(rng.integers(1 << 30)),
                                   confidence=CLAIM_CONFIDENCE)
        if est.done:
            done += 1
            held += relevant[rest].sum() <= 1
    assert done >= 3 and held / done >= 0.9, (done, held)


def test_calibrated_bounds_nothing_with_too_few_relevant_grades():
    # Nothing relevant among 40 judged: a curve fitted to all-zero labels would call the rest empty.
    est = calibrated_remaining(np.linspace(-3, 0, 1400), np.linspace(-1, 2, 40), [0] * 40)
    assert not est.done and est.upper == 1400
