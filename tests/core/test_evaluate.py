"""EvalReport: which questions count, per question/type, worst, abstention, CIs, comparison."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

from labeler.errors import ConfigError, InputError
from labeler.evaluation import (
    EvalReport, abstention_at, abstention_sweep, bootstrap_ci, compare, compare_reports, evaluate,
    evaluate_golden, paired_randomization_test, parse_report_json, read_report,
)
from labeler.golden import parse_golden_jsonl

GOLDEN_JSONL = "\n".join(json.dumps(q) for q in [
    {"query_id": "vacation", "question": "How many vacation days?", "query_type": "policy", "relevance": {"d1": 1}},
    {"query_id": "hotel", "question": "Hotel limit?", "query_type": "travel", "relevance": {"d6": 2, "d5": 0}},
    {"query_id": "laptop", "question": "Stolen laptop?", "query_type": "policy", "relevance": {"d10": 1}},
    {"query_id": "pets", "question": "Can I bring my dog?", "query_type": "policy", "unanswerable": True},
    {"query_id": "parking", "question": "Where do I park?", "query_type": "travel"},
]) + "\n"
RUN = {
    "vacation": {"d2": 0.9, "d1": 0.8, "d9": 0.7},
    "hotel": {"d6": 0.95, "d5": 0.8, "d7": 0.7},
    "laptop": {"d3": 0.6, "d4": 0.5, "d8": 0.4},
    "pets": {"d3": 0.3},
    "ghost": {"d1": 1.0},
}


@pytest.fixture
def report() -> EvalReport:
    return evaluate_golden(parse_golden_jsonl(GOLDEN_JSONL), RUN, cutoffs=(1, 3))


def test_evaluate_means_over_answerable_questions_only(report):
    # scored: vacation, hotel, laptop (pets unanswerable, parking unjudged)
    # recall@1 = (0 + 1 + 0) / 3; recall@3 = (1 + 1 + 0) / 3; mrr = (1/2 + 1 + 0) / 3 = 0.5
    assert report.metrics["recall@1"] == pytest.approx(1 / 3)
    assert report.metrics["recall@3"] == pytest.approx(2 / 3)
    assert report.metrics["mrr"] == pytest.approx(0.5)


def test_evaluate_counts(report):
    assert dict(report.counts) == {"questions": 5, "answerable": 3, "unanswerable": 1, "unjudged": 1,
                                   "no_relevant": 0, "missing_from_run": 0, "extra_in_run": 1}


def test_evaluate_missing_question_scores_zero_and_is_counted():
    run = {q: d for q, d in RUN.items() if q != "laptop"}
    run["hotel"] = {"d5": 1.0}
    report = evaluate({"vacation": {"d1": 1}, "hotel": {"d6": 1}, "laptop": {"d10": 1}}, run, ["recall@3"])
    # vacation 1, hotel 0 (d6 not retrieved), laptop 0 (absent) -> 1/3
    assert report.metrics["recall@3"] == pytest.approx(1 / 3)
    assert report.counts["missing_from_run"] == 1
    assert report.per_query["laptop"].in_run is False and report.per_query["laptop"].metrics["recall@3"] == 0.0


def test_evaluate_judged_without_relevant_scores_zero_and_is_counted():
    # "hotel" judged, only grade 0: evaluated as trec_eval does (all metrics 0)
    report = evaluate({"vacation": {"d1": 1}, "hotel": {"d5": 0}}, RUN, ["mrr"])
    assert report.metrics["mrr"] == pytest.approx((0.5 + 0) / 2)
    assert report.counts["no_relevant"] == 1


def test_evaluate_per_query_first_relevant_rank_beyond_k_and_top_k_with_grades():
    ranking = {f"x{i:02d}": 1.0 - i / 100 for i in range(20)}     # x00 best ... x19 worst
    report = evaluate({"q": {"x14": 2, "x01": 0}}, {"q": ranking}, ["mrr@10", "mrr"], top_k=3)
    result = report.per_query["q"]
    # x14 is rank 15: outside the top 10 (mrr@10 = 0), uncut mrr = 1/15
    assert result.first_relevant_rank == 15
    assert result.metrics["mrr@10"] == 0.0 and result.metrics["mrr"] == pytest.approx(1 / 15)
    assert [(d.doc_id, d.grade) for d in result.top_k] == [("x00", None), ("x01", 0), ("x02", None)]
    assert result.top_score == 1.0 and result.num_relevant == 1


def test_evaluate_per_query_statuses(report):
    status = {q: r.status for q, r in report.per_query.items()}
    assert status == {"vacation": "scored", "hotel": "scored", "laptop": "scored", "pets": "unanswerable",
                      "parking": "unjudged"}
    assert dict(report.per_query["pets"].metrics) == {}
    assert report.per_query["laptop"].first_relevant_rank is None


def test_evaluate_per_type_means(report):
    # policy: vacation (mrr 1/2) and laptop (0) -> 0.25; travel: hotel (1)
    assert report.per_type["policy"]["mrr"] == pytest.approx(0.25)
    assert report.per_type["travel"]["mrr"] == pytest.approx(1.0)
    assert dict(report.type_counts) == {"policy": 2, "travel": 1}


def test_evaluate_untyped_questions_grouped():
    report = evaluate({"a": {"d": 1}, "b": {"d": 1}}, {"a": {"d": 1.0}}, ["mrr"], query_types={"a": "x"})
    assert dict(report.type_counts) == {"(untyped)": 1, "x": 1}


def test_evaluate_worst_lowest_first_ties_by_query_id(report):
    # ndcg@3: laptop 0, vacation 1/log2(3) = 0.63, hotel 1
    assert [r.query_id for r in report.worst("ndcg@3", 2)] == ["laptop", "vacation"]
    tied = evaluate({"b": {"x": 1}, "a": {"x": 1}, "c": {"d": 1}}, {"c": {"d": 1.0}}, ["mrr"])
    assert [r.query_id for r in tied.worst("mrr", 5)] == ["a", "b", "c"]


def test_evaluate_worst_unknown_metric_refused(report):
    with pytest.raises(ConfigError, match="ndcg@10 was not computed"):
        report.worst("ndcg@10")


def test_evaluate_ci_reproducible_and_brackets_mean(report):
    again = evaluate_golden(parse_golden_jsonl(GOLDEN_JSONL), RUN, cutoffs=(1, 3))
    assert dict(report.ci95) == dict(again.ci95)
    for metric, (lo, hi) in report.ci95.items():
        assert lo <= report.metrics[metric] <= hi


def test_evaluate_does_not_mutate_inputs():
    qrels = {"a": {"d1": 1}, "b": {"d2": 2}}
    run = {"a": {"d2": 1.0, "d1": 0.5}, "b": {"d2": 1.0}}
    before = (copy.deepcopy(qrels), copy.deepcopy(run))
    evaluate(qrels, run, unanswerable={"c"}, query_types={"a": "t"})
    assert (qrels, run) == before


def test_evaluate_report_to_dict_is_strict_json_and_round_trips(report):
    data = report.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert set(data) >= {"metrics", "ci95", "per_type", "per_query", "counts"}
    assert data["per_query"]["hotel"]["recall@1"] == 1.0
    again = parse_report_json(text)
    assert again.measures == report.measures
    assert dict(again.metrics) == dict(report.metrics)
    assert again.per_query["vacation"] == report.per_query["vacation"]


def test_evaluate_no_answerable_questions_gives_null_means():
    report = evaluate({}, {"u": {"d": 0.2}}, ["mrr"], unanswerable={"u"})
    assert math.isnan(report.metrics["mrr"])
    assert report.to_dict()["metrics"] == {"mrr": None}


def test_bootstrap_ci_constant_values_is_a_point():
    assert bootstrap_ci(np.array([[0.5, 0.5, 0.5]])).tolist() == [[0.5, 0.5]]


def test_bootstrap_ci_two_values_spans_extremes():
    # values 0 and 1, 2,000 resamples of size 2: means 0, 0.5, 1 with prob 1/4, 1/2, 1/4,
    # so the 2.5th and 97.5th percentiles are 0 and 1
    assert bootstrap_ci(np.array([[0.0, 1.0]])).tolist() == [[0.0, 1.0]]


def test_bootstrap_ci_empty_is_nan():
    assert np.isnan(bootstrap_ci(np.zeros((2, 0)))).all()


def test_abstention_at_threshold_hand_computed():
    # answerable tops 0.9, 0.6, 0.4; unanswerable tops 0.5, 0.3, none retrieved
    # tau 0.5: unanswerable abstained = {0.3, none} = 2/3; answerable abstained = {0.4} = 1/3
    point = abstention_at([0.9, 0.6, 0.4], [0.5, 0.3, None], 0.5)
    assert point.unanswerable_abstained == pytest.approx(2 / 3)
    assert point.answerable_abstained == pytest.approx(1 / 3)
    assert point.balanced_accuracy == pytest.approx((2 / 3 + 2 / 3) / 2)


def test_abstention_sweep_suggests_best_balanced_accuracy_lowest_tau():
    # balanced accuracy (U abstained + A answered) / 2 per tau:
    #   0.3: (1/3 + 1)/2 = .667   0.4: (2/3 + 1)/2 = .833   0.5: (2/3 + 2/3)/2 = .667
    #   0.6: (1 + 2/3)/2 = .833   0.9: (1 + 1/3)/2 = .667   -> best .833 at 0.4 and 0.6: lowest = 0.4
    sweep = abstention_sweep([0.9, 0.6, 0.4], [0.5, 0.3, None], threshold=0.5)
    assert [p.threshold for p in sweep.sweep] == [0.3, 0.4, 0.5, 0.6, 0.9]
    assert sweep.suggested.threshold == 0.4
    assert sweep.at_threshold.threshold == 0.5
    assert "balanced accuracy" in sweep.rule


def test_abstention_sweep_without_unanswerable_suggests_nothing():
    sweep = abstention_sweep([0.9, 0.4], [], threshold=0.5)
    assert sweep.suggested is None
    assert sweep.at_threshold.answerable_abstained == 0.5 and sweep.at_threshold.unanswerable_abstained is None


def test_evaluate_reports_abstention_for_unanswerable(report):
    # answerable tops 0.9, 0.95, 0.6; unanswerable "pets" top 0.3 -> tau 0.6 abstains on pets only
    assert report.abstention.unanswerable == 1 and report.abstention.answerable == 3
    assert report.abstention.suggested.threshold == 0.6
    assert report.abstention.suggested.balanced_accuracy == 1.0


def test_paired_randomization_test_all_same_sign():
    # 5 differences of +1: only the all-plus and all-minus sign patterns reach |mean| = 1,
    # probability 2 / 2^5 = 0.0625
    assert paired_randomization_test([1, 1, 1, 1, 1]) == pytest.approx(0.0625, abs=0.01)


def test_paired_randomization_test_no_difference_is_one():
    assert paired_randomization_test([0.0, 0.0, 0.0]) == 1.0
    assert paired_randomization_test([]) == 1.0


def test_paired_randomization_test_reproducible():
    d = np.random.default_rng(0).normal(0.1, 1, 50)
    assert paired_randomization_test(d, seed=3) == paired_randomization_test(d, seed=3)


def test_compare_wins_ties_losses_and_mean_difference():
    a = {"q1": {"mrr": 0.5}, "q2": {"mrr": 1.0}, "q3": {"mrr": 0.0}, "q4": {"mrr": 0.2}}
    b = {"q1": {"mrr": 1.0}, "q2": {"mrr": 1.0}, "q3": {"mrr": 0.25}, "q5": {"mrr": 1.0}}
    result = compare(a, b)
    m = result.metrics["mrr"]
    # shared q1..q3: differences +0.5, 0, +0.25 -> mean 0.25; 2 wins, 1 tie, 0 losses
    assert (m.wins, m.ties, m.losses, m.n) == (2, 1, 0, 3)
    assert m.mean_difference == pytest.approx(0.25)
    assert m.mean_a == pytest.approx(0.5) and m.mean_b == pytest.approx(0.75)
    assert m.ci95[0] <= 0.25 <= m.ci95[1]
    assert result.only_in_a == ("q4",) and result.only_in_b == ("q5",)
    assert dict(result.per_query["q3"]) == {"mrr": 0.25}


def test_compare_reports_same_run_no_difference(report):
    result = compare_reports(report, report)
    assert all(c.p_value == 1.0 and c.ties == 3 for c in result.metrics.values())


def test_compare_metric_missing_in_one_run_refused():
    with pytest.raises(ConfigError, match="no ndcg@10"):
        compare({"q": {"mrr": 1.0}}, {"q": {"mrr": 1.0}}, ["ndcg@10"])


def test_read_report_refuses_non_report_json(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a saved evaluation report"):
        read_report(path)
    path.write_text("{oops")
    with pytest.raises(InputError, match="not JSON"):
        read_report(path)


def test_abstention_suggestion_entered_as_shown_gives_the_suggested_accuracy():
    # The case from the Evaluate page: an answerable question's own top score (0.53857...) is the
    # best cut. Shown rounded to 0.539 it abstained on that question too (50% wrongly empty).
    import random

    from labeler.evaluation.abstention import abstention_at, shortest_cut

    answerable = [0.5385714286, 0.71, 0.8812]
    unanswerable = [0.5312, 0.41]
    sweep = abstention_sweep(answerable, unanswerable)
    assert sweep.suggested.threshold == 0.538 and sweep.suggested.balanced_accuracy == 1.0
    rng = random.Random(7)
    for _ in range(300):  # ties, near-ties and negative scores
        a = [round(rng.uniform(-1, 1), rng.choice([2, 4, 9])) for _ in range(rng.randint(1, 8))]
        u = [rng.choice(a) if rng.random() < .3 else round(rng.uniform(-1, 1), 5) for _ in range(rng.randint(1, 5))]
        s = abstention_sweep(a, u)
        shown = float(repr(s.suggested.threshold))  # what a person reads and types back
        assert abstention_at(a, u, shown) == s.suggested
        raw = sorted(set(a + u))
        for point, score, low in zip(s.sweep, raw, [None] + raw):
            assert (low is None or point.threshold > low) and point.threshold <= score
            at_score = abstention_at(a, u, score)
            assert (at_score.unanswerable_abstained, at_score.answerable_abstained) == (
                point.unanswerable_abstained, point.answerable_abstained)
    assert shortest_cut(0.5312, 0.5385714286) == 0.538 and shortest_cut(0.5, 0.5) == 0.5
