"""Calibration statistics against scikit-learn, scipy and independent oracles, on generated cases."""
from __future__ import annotations

import itertools
import math

import krippendorff
import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from labeler.errors import InputError
from labeler.judges.calibration import calibrate
from labeler.judges.stats import kendall_tau_b, tau_ap
from labeler.metrics import calc_aggregate, nDCG


def alpha_oracle(a, b) -> float:
    """Krippendorff's ordinal alpha written from the definition, pair by pair (no matrices):
    alpha = 1 - D_o / D_e, D_o = mean over pairable values of the ordinal distance within a unit,
    D_e = mean distance over all pairs of values, distance from the ranks of all values."""
    values = list(a) + list(b)
    counts = {g: values.count(g) for g in set(values)}

    def d2(c, k):
        lo, hi = min(c, k), max(c, k)
        return (sum(n for g, n in counts.items() if lo <= g <= hi) - (counts[c] + counts[k]) / 2) ** 2

    n = len(values)
    d_o = sum(2 * d2(x, y) for x, y in zip(a, b)) / n  # each unit: two ordered pairs, m_u - 1 = 1
    # every ordered pair of two different values' places: n_c * n_k pairs (n_c * (n_c - 1) when c == k)
    d_e = sum(counts[c] * (counts[k] - (c == k)) * d2(c, k) for c in counts for k in counts) / (n * (n - 1))
    return 1 - d_o / d_e


def tau_ap_oracle(reference: dict, estimate: dict) -> float:
    """tau_AP from Yilmaz et al. (2008), eq. 3, written over names: for each item i of the estimated
    ranking after the first, the share of the items above it there that the reference ranks above it."""
    order = sorted(estimate, key=lambda name: -estimate[name])  # stable: ties keep the given order
    truth = sorted(reference, key=lambda name: -reference[name])
    total = 0.0
    for i in range(1, len(order)):
        total += sum(truth.index(above) < truth.index(order[i]) for above in order[:i]) / i
    return 2 / (len(order) - 1) * total - 1


def generated(seed: int, n: int = 120, noise: float = 0.6):
    rng = np.random.default_rng(seed)
    human = {(f"q{i % 9}", f"d{i}"): int(rng.integers(0, 4)) for i in range(n)}
    machine = {k: int(np.clip(round(v + rng.normal(0, noise)), 0, 3)) for k, v in human.items()}
    return human, machine


@pytest.mark.parametrize("seed", range(40))
def test_calibrate_label_statistics_equal_sklearn_and_oracle(seed):
    human, machine = generated(seed, n=30 + seed * 7, noise=0.3 + seed / 20)
    got = calibrate(human, machine, bootstrap=0)
    keys = sorted(human)
    a, b = [human[k] for k in keys], [machine[k] for k in keys]
    assert got.pairs == len(keys)
    assert got.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert got.kappa_quadratic == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]), abs=1e-12)
    for t in (1, 2):
        assert got.kappa_binary[t] == pytest.approx(
            cohen_kappa_score([x >= t for x in a], [y >= t for y in b]), abs=1e-12)
    assert got.alpha == pytest.approx(alpha_oracle(a, b), abs=1e-12)
    assert got.alpha == pytest.approx(krippendorff.alpha(reliability_data=[a, b], level_of_measurement="ordinal",
                                                         value_domain=[0, 1, 2, 3]), abs=1e-9)
    assert got.bias == pytest.approx(np.mean(np.array(b) - np.array(a)))
    confusion = np.zeros((4, 4), int)
    for x, y in zip(a, b):
        confusion[x, y] += 1
    assert [list(r) for r in got.confusion] == confusion.tolist()


def test_calibrate_quadratic_kappa_keeps_unused_grades_on_the_scale():
    # grades 0, 2, 3 only: sklearn without labels would put 2 next to 0 (index 1); the scale is 0-3
    human = {("q", f"d{i}"): g for i, g in enumerate([0, 0, 2, 3, 3, 2])}
    machine = {("q", f"d{i}"): g for i, g in enumerate([0, 2, 2, 3, 2, 3])}
    a, b = list(human.values()), list(machine.values())
    got = calibrate(human, machine, bootstrap=0).kappa_quadratic
    assert got == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]))
    assert got != pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))


@pytest.mark.parametrize("seed", range(60))
def test_kendall_tau_b_and_tau_ap_equal_scipy_and_oracle(seed):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(2, 9))
    x = rng.integers(0, 5, r).astype(float) if seed % 3 == 0 else rng.random(r)  # every third: ties
    y = x + rng.normal(0, 0.3, r) if seed % 2 else rng.random(r)
    expected = kendalltau(x, y).statistic
    got = float(kendall_tau_b(x, y))
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    names = [f"run{i}" for i in range(r)]
    assert float(tau_ap(x, y)) == pytest.approx(tau_ap_oracle(dict(zip(names, x)), dict(zip(names, y))), abs=1e-12)


def test_tau_ap_weighs_swaps_at_the_top_more():
    truth = np.array([3.0, 2.0, 1.0])  # A > B > C
    # swap of the top two (B, A, C): i=2: A, B above it is below A in truth -> 0/1; i=3: C, both above -> 2/2
    # tau_AP = 2/2 * (0 + 1) - 1 = 0; Kendall tau = (2 - 1)/3 = 1/3
    assert float(tau_ap(truth, np.array([2.0, 3.0, 1.0]))) == pytest.approx(0.0)
    # swap of the bottom two (A, C, B): i=2: C, A above -> 1/1; i=3: B, A right, C wrong -> 1/2; 2/2 * 1.5 - 1
    assert float(tau_ap(truth, np.array([3.0, 1.0, 2.0]))) == pytest.approx(0.5)
    assert float(kendall_tau_b(truth, np.array([2.0, 3.0, 1.0]))) == pytest.approx(1 / 3)


def runs_for(human, seed, n_runs=5):
    rng = np.random.default_rng(seed)
    docs = sorted({d for _, d in human})
    questions = sorted({q for q, _ in human})
    return {f"r{j}": {q: {d: float(rng.random()) for d in docs} for q in questions} for j in range(n_runs)}


@pytest.mark.parametrize("seed", range(10))
def test_calibrate_tau_orders_runs_by_core_ndcg(seed):
    human, machine = generated(seed, n=150, noise=0.8)
    runs = runs_for(human, seed)
    got = calibrate(human, machine, runs, bootstrap=0)
    qh, qm = {}, {}
    for (q, d), g in human.items():
        qh.setdefault(q, {})[d] = g
        qm.setdefault(q, {})[d] = machine[q, d]
    h = [calc_aggregate([nDCG @ 10], qh, run)["ndcg@10"] for run in runs.values()]
    m = [calc_aggregate([nDCG @ 10], qm, run)["ndcg@10"] for run in runs.values()]
    assert [got.run_scores[r]["human"] for r in runs] == pytest.approx(h)
    assert got.kendall_tau == pytest.approx(kendalltau(h, m).statistic, abs=1e-12)
    assert got.tau_ap == pytest.approx(tau_ap_oracle(dict(zip(runs, h)), dict(zip(runs, m))), abs=1e-12)


def test_calibrate_filled_holes_change_only_the_filled_tau():
    human = {("q1", "a"): 3, ("q1", "b"): 0, ("q2", "c"): 2, ("q2", "d"): 0}
    # the judge agrees on every human pair and grades two holes (e, f) relevant
    machine = {**human, ("q1", "e"): 3, ("q2", "f"): 3}
    runs = {"finds-holes": {"q1": {"e": 2, "a": 1}, "q2": {"f": 2, "c": 1}},
            "human-top": {"q1": {"a": 2, "e": 1}, "q2": {"c": 2, "f": 1}},
            "misses": {"q1": {"b": 2}, "q2": {"d": 2}}}
    got = calibrate(human, machine, runs, bootstrap=200)
    assert got.kendall_tau == 1.0 and got.tau_ap == 1.0  # same pairs, same grades
    # human only: human-top (1.0) > finds-holes (< 1) > misses (0); filled: finds-holes ranks first
    assert got.run_scores["finds-holes"]["filled"] > got.run_scores["human-top"]["filled"]
    assert got.kendall_tau_filled == pytest.approx(1 / 3) and got.tau_ap_filled == pytest.approx(0.0)
    assert set(got.ci95) >= {"kendall_tau", "tau_ap", "kendall_tau_filled", "tau_ap_filled"}


def test_calibrate_intervals_are_seeded_and_hold_the_value():
    human, machine = generated(3, n=300)
    runs = runs_for(human, 3)
    a = calibrate(human, machine, runs, bootstrap=300, seed=7)
    b = calibrate(human, machine, runs, bootstrap=300, seed=7)
    c = calibrate(human, machine, runs, bootstrap=300, seed=8)
    assert a.ci95 == b.ci95 and a.ci95 != c.ci95
    for stat in ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias"):
        lo, hi = a.ci95[stat]
        assert lo <= a.value(stat) <= hi and hi - lo < 0.3


def test_calibrate_to_dict_has_the_issue_keys():
    human, machine = generated(1)
    d = calibrate(human, machine, runs_for(human, 1), bootstrap=50).to_dict()
    assert {"pairs", "kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "confusion", "bias",
            "kendall_tau", "tau_ap", "ci95"} <= set(d)
    assert all(isinstance(d[k], float) for k in ("kappa", "alpha", "bias", "kendall_tau", "tau_ap"))
    assert len(d["confusion"]) == 4 and all(len(row) == 4 for row in d["confusion"])
    assert all(len(v) == 2 for v in d["ci95"].values()) and "kappa_binary@1" in d["ci95"]


def test_calibrate_undefined_statistics_are_none():
    same = {("q", f"d{i}"): 2 for i in range(5)}  # one grade only: chance agreement is 1
    got = calibrate(same, same, {"only": {"q": {"d1": 1.0}}}, bootstrap=20)
    assert got.kappa is None and got.alpha is None and got.kappa_quadratic is None
    assert got.kendall_tau is None and got.bias == 0.0  # one run: no ranking to compare
    assert got.to_dict()["ci95"]["kappa"] == [None, None]
    assert calibrate({("q", "a"): 1}, {("q", "b"): 1}, bootstrap=10).pairs == 0


def test_calibrate_refuses_grades_off_the_scale():
    with pytest.raises(InputError, match="grade 4"):
        calibrate({("q", "a"): 4}, {("q", "a"): 1})


def test_kendall_tau_b_batches_match_one_by_one():
    rng = np.random.default_rng(0)
    x, y = rng.random((50, 6)), rng.random((50, 6))
    batch = kendall_tau_b(x, y)
    assert batch == pytest.approx([kendalltau(a, b).statistic for a, b in zip(x, y)])
    assert tau_ap(x, y) == pytest.approx([tau_ap_oracle(dict(zip("abcdef", a)), dict(zip("abcdef", b)))
                                          for a, b in zip(x, y)])


def test_tau_ap_oracle_by_permutations_of_four():
    truth = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}
    for perm in itertools.permutations("abcd"):
        estimate = {name: float(4 - perm.index(name)) for name in "abcd"}
        value = float(tau_ap(np.array(list(truth.values())), np.array([estimate[n] for n in truth])))
        assert value == pytest.approx(tau_ap_oracle(truth, estimate))
        assert (value == 1.0) == (perm == tuple("abcd")) and (value == -1.0) == (perm == tuple("dcba"))
