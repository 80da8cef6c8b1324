"""The gain curve's stopping bound: a falling rate of relevant documents along the judged order,
bounded over its likelihood region; checked on generated orders whose truth is known."""
from __future__ import annotations

import numpy as np

from labeler.judging.gain_curve import curve_remaining, largest_mean


def _generated(rng, total=600):
    """One question's relevant flags along a ranking of `total`: an exponentially falling rate."""
    a, b = rng.uniform(0.3, 0.9), rng.uniform(0.02, 0.15)
    rate = np.minimum(1.0, a * np.exp(-b * np.arange(1, total + 1)))
    return rng.random(total) < rate


def _judged_to_knee(flags, patience=10, extra=70):
    """Judge down the ranking until `patience` in a row are not relevant, then `extra` more."""
    last, n = -1, 0
    for n, r in enumerate(flags, start=1):
        last = n if r else last
        if n - max(last, 0) >= patience and n >= patience:
            break
    return min(len(flags), n + extra)


def test_gain_curve_covers_and_its_done_claims_hold_on_generated_orders():
    """Where the assumption holds (rate falling as an exponential), the bound covers the truth at
    least 90% of the time and at least 90% of the "<= 1 left" claims are true, and it does claim."""
    rng = np.random.default_rng(3)
    covered = done = held = trials = 0
    for _ in range(30):
        flags = _generated(rng)
        n = _judged_to_knee(flags)
        est = curve_remaining(flags[:n].tolist(), len(flags) - n)
        left = int(flags[n:].sum())
        trials += 1
        covered += left <= est.upper
        if est.done:
            done += 1
            held += left <= 1
    assert covered / trials >= 0.9, (covered, trials)
    assert done >= 5 and held / done >= 0.9, (done, held)


def test_gain_curve_bounds_nothing_without_a_relevant_document():
    est = curve_remaining([False] * 40, 1400)
    assert not est.done and est.upper > 50  # nothing found: no curve, only "most of the rest"


def test_gain_curve_is_not_done_while_relevant_documents_keep_coming():
    flags = ([True, False] * 15) + [False] * 10
    est = curve_remaining(flags, 1400)
    assert not est.done and est.upper > 1


def test_gain_curve_says_done_after_a_long_run_past_the_last_relevant():
    flags = [True, True, False, True] + [False] * 60
    est = curve_remaining(flags, 1400)
    assert est.done and est.uppers["exponential"] <= 1
    assert est.uppers["power"] > 1  # the heavy-tailed shape is reported, and is far more cautious


def test_gain_curve_is_vetoed_by_a_relevant_document_in_the_random_sample():
    flags = [True, True, False, True] + [False] * 60
    assert not curve_remaining(flags, 1400, sample_relevant=1).done


def test_gain_curve_largest_mean_by_hand():
    # Nothing relevant in n judged: the region is a <= chi2(0.95, 2) / 2 / S_n(b); at b = 0 (a flat
    # rate) the mean left is 2.996 * (N - n) / n, the largest over b.
    assert abs(largest_mean("exponential", [], 100, 1100) - 2.9957 * 1000 / 100) < 0.05
    assert largest_mean("power", [1], 10, 10) == 0.0  # nothing left to bound
