"""Consensus grades and inter-annotator agreement, against hand-computed and published values."""
from __future__ import annotations

import pytest

from labeler.agreement import (
    agreement, cohen_kappa, consensus, consensus_grade, fleiss_kappa, krippendorff_alpha, unanswerable_consensus,
)


@pytest.mark.parametrize("grades, expected", [
    ([2], 2),
    ([1, 2], 1),        # median 1.5, rounded down
    ([0, 3], 1),        # median 1.5, rounded down
    ([0, 2, 3], 2),     # middle value
    ([3, 3, 0, 0], 1),  # (0, 0, 3, 3): median 1.5 -> 1
    ([-1, 0], -1),      # keep_scale grades: floor(-0.5) = -1
])
def test_consensus_grade_is_median_rounded_down(grades, expected):
    assert consensus_grade(grades) == expected


def test_consensus_grade_of_nothing_is_a_bug():
    with pytest.raises(ValueError):
        consensus_grade([])


def test_consensus_lists_disagreements_largest_spread_first():
    ratings = {
        ("q1", "d1"): {"asha": 2, "ben": 2},
        ("q1", "d2"): {"asha": 1, "ben": 2},
        ("q2", "d1"): {"asha": 0, "ben": 3, "cy": 3},
    }
    result = consensus(ratings)
    assert result.qrels == {"q1": {"d1": 2, "d2": 1}, "q2": {"d1": 3}}
    assert [(d.query_id, d.doc_id) for d in result.disagreements] == [("q2", "d1"), ("q1", "d2")]
    worst = result.disagreements[0]
    assert worst.spread == 3 and worst.splits_relevance and worst.consensus == 3
    assert not result.disagreements[1].splits_relevance


def test_cohen_kappa_hand_computed():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15.
    # p_o = 35/50 = 0.7; P_A(yes) = 25/50, P_B(yes) = 30/50 -> p_e = 0.5*0.6 + 0.5*0.4 = 0.5
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_kappa_undefined_cases():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([2, 2], [2, 2]) is None  # p_e = 1
    assert cohen_kappa([0, 1], [0, 1]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 2])


def test_fleiss_kappa_published_example():
    # Fleiss (1971) via the standard worked example: 10 subjects, 14 raters, 5 categories;
    # P_bar = 0.378, P_e = 0.213 -> kappa = 0.210.
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    items = [[category for category, n in enumerate(row) for _ in range(n)] for row in table]
    assert fleiss_kappa(items) == pytest.approx(0.2099, abs=1e-4)


def test_fleiss_kappa_hand_computed_small():
    # 3 raters, 2 items: (1,1,1) and (0,0,1).
    # P_1 = (9 - 3)/6 = 1; P_2 = (4 + 1 - 3)/6 = 1/3; P_bar = 2/3.
    # p_1 = 4/6, p_0 = 2/6 -> P_e = 16/36 + 4/36 = 5/9. kappa = (2/3 - 5/9)/(4/9) = 0.25
    assert fleiss_kappa([[1, 1, 1], [0, 0, 1]]) == pytest.approx(0.25)


def test_krippendorff_alpha_hand_computed_nominal():
    # Units (0,0), (1,1), (0,1). Coincidences: o00 = 2, o11 = 2, o01 = o10 = 1; n0 = n1 = 3, n = 6.
    # alpha = 1 - (n-1) * (o01 + o10) / (n0*n1 + n1*n0) = 1 - 5 * 2 / 18 = 4/9
    assert krippendorff_alpha([[0, 0], [1, 1], [0, 1]], "nominal") == pytest.approx(4 / 9)


def test_krippendorff_alpha_hand_computed_interval_with_missing_value():
    # Units (0,2), (2,2), (1) -- the lone grade is unpairable and ignored.
    # o02 = o20 = 1, o22 = 2; n0 = 1, n2 = 3, n = 4. Observed: 2 * (0-2)^2 = 8.
    # Expected: 2 * n0*n2 * 4 = 24. alpha = 1 - 3 * 8 / 24 = 0
    assert krippendorff_alpha([[0, 2], [2, 2], [1]], "interval") == pytest.approx(0.0)


@pytest.mark.parametrize("level, expected", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_published_example(level, expected):
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units,
    # values 1-5 with missing data (None); published alphas 0.743 / 0.815 / 0.849.
    n = None
    rows = [[1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
            [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]]
    units = [[row[i] for row in rows if row[i] is not None] for i in range(12)]
    assert krippendorff_alpha(units, level) == pytest.approx(expected, abs=5e-4)


def test_krippendorff_alpha_undefined_when_one_value():
    assert krippendorff_alpha([[1, 1], [1, 1]], "nominal") is None
    assert krippendorff_alpha([[1]], "nominal") is None


def test_agreement_report_pairs_fleiss_and_alpha_excluding_pseudo_annotator():
    # asha/ben agree on d1, d2 and disagree on d3; cy judged only d1; "(import)" is not a person.
    ratings = {
        ("q1", "d1"): {"asha": 2, "ben": 2, "cy": 2, "(import)": 0},
        ("q1", "d2"): {"asha": 0, "ben": 0},
        ("q1", "d3"): {"asha": 1, "ben": 3},
    }
    report = agreement(ratings, exclude=("(import)",))
    assert report.annotators == ("asha", "ben", "cy")
    pairs = {(p.annotator_a, p.annotator_b): p for p in report.pairs}
    # asha vs ben over 3 items: p_o = 2/3; asha (2,0,1), ben (2,0,3): p_e = 1/9 + 1/9 = 2/9
    # kappa = (2/3 - 2/9) / (7/9) = 4/7
    assert pairs["asha", "ben"].n_items == 3 and pairs["asha", "ben"].kappa == pytest.approx(4 / 7)
    assert pairs["asha", "cy"].n_items == 1 and pairs["asha", "cy"].kappa is None
    assert report.n_items == 3 and report.n_items_all == 1
    assert report.fleiss_kappa is None  # one item, all grades equal: P_e = 1
    assert report.krippendorff_alpha is not None


def test_consensus_counts_a_source_only_where_no_person_graded_and_one_apart_nowhere():
    # Two files' grades, "(a)" counted and "(b)" kept apart, beside asha's.
    ratings = {
        ("q1", "d1"): {"asha": 0, "(a)": 3, "(b)": 3},  # asha graded: only her 0 counts
        ("q1", "d2"): {"(a)": 2, "(b)": 0},             # no person: "(a)" alone, "(b)" is apart
        ("q1", "d3"): {"(b)": 3},                       # only the source apart: not judged at all
    }
    result = consensus(ratings, stand_in=lambda a: a.startswith("("), apart={"(b)"})
    assert result.qrels == {"q1": {"d1": 0, "d2": 2}} and result.disagreements == ()
    # A vote of the source apart does not make the question unanswerable either.
    assert not unanswerable_consensus({"(b)"}, {"d3": {"(b)": 0}}, stand_in=lambda a: a.startswith("("),
                                      apart={"(b)"})
    assert unanswerable_consensus({"(a)"}, {"d3": {"(b)": 3}}, apart={"(b)"})
