"""Each metric and edge case on hand-computed examples (arithmetic in the comments)."""
from __future__ import annotations

import copy
import math
import subprocess
import sys

import pytest

from labeler.errors import ConfigError
from labeler.metrics import (
    MAP, MRR, Hit, Measure, P, Recall, RPrec, calc_aggregate, calc_per_query, judge_run, nDCG,
    parse_measure, parse_measures, standard_measures, trec_ranked,
)

# The seed example: three questions, one relevant document each.
SEED_QRELS = {"vacation": {"d1": 1}, "hotel": {"d6": 1}, "laptop": {"d10": 1}}
SEED_RUN = {
    "vacation": {"d2": 0.9, "d1": 0.8, "d9": 0.7},
    "hotel": {"d6": 0.9, "d5": 0.8, "d7": 0.7},
    "laptop": {"d3": 0.9, "d4": 0.8, "d8": 0.7},
}


def one(measure, qrels_row, run_row, **kw) -> float:
    """The value of one measure for a single question "q"."""
    return calc_per_query([measure], {"q": qrels_row}, {"q": run_row}, **kw)["q"][str(parse_measure(measure))]


def test_metrics_seed_example_recall_and_mrr():
    means = calc_aggregate([Recall @ 1, Recall @ 3, MRR], SEED_QRELS, SEED_RUN)
    # recall@1: only "hotel" has its doc at rank 1 -> (0 + 1 + 0) / 3
    assert means["recall@1"] == pytest.approx(1 / 3)
    # recall@3: vacation (rank 2) and hotel (rank 1) -> (1 + 1 + 0) / 3
    assert means["recall@3"] == pytest.approx(2 / 3)
    # MRR: (1/2 + 1/1 + 0) / 3 = 0.5
    assert means["mrr"] == pytest.approx(0.5)


def test_recall_counts_relevant_not_retrieved_in_denominator():
    # relevant a, b, c; top 2 = x, a -> 1 / 3
    assert one("recall@2", {"a": 1, "b": 2, "c": 1}, {"x": 3, "a": 2, "b": 1}) == pytest.approx(1 / 3)


def test_recall_zero_when_no_relevant_document():
    # judged but all grade 0: trec_eval evaluates the question and gives 0 (no division by zero)
    assert one("recall@5", {"a": 0}, {"a": 1.0}) == 0.0


def test_recall_run_shorter_than_k():
    # 2 docs returned, 1 of 2 relevant found -> 1/2 at any k >= 2
    assert one("recall@100", {"a": 1, "b": 1}, {"a": 2.0, "x": 1.0}) == pytest.approx(0.5)


def test_precision_divides_by_k_even_when_fewer_returned():
    # 2 docs returned, 1 relevant: P@5 = 1 / 5
    assert one("precision@5", {"a": 1}, {"a": 2.0, "x": 1.0}) == pytest.approx(0.2)


def test_precision_counts_min_grade():
    # grades 1 and 3 in the top 2; with min_grade 2 only the 3 counts -> 1 / 2
    assert one("precision@2", {"a": 1, "b": 3}, {"a": 2.0, "b": 1.0}, min_grade=2) == pytest.approx(0.5)


def test_mrr_uncut_sees_the_whole_run():
    # first relevant at rank 3 -> 1/3
    assert one("mrr", {"c": 1}, {"a": 3.0, "b": 2.0, "c": 1.0}) == pytest.approx(1 / 3)


def test_mrr_at_k_zero_when_first_relevant_beyond_k():
    # first relevant at rank 3 > k = 2 -> 0; at k = 3 -> 1/3
    assert one("mrr@2", {"c": 1}, {"a": 3.0, "b": 2.0, "c": 1.0}) == 0.0
    assert one("mrr@3", {"c": 1}, {"a": 3.0, "b": 2.0, "c": 1.0}) == pytest.approx(1 / 3)


def test_ndcg_linear_gain_ideal_from_all_judged_docs():
    # qrels a=3, b=1, c=2 (c never retrieved); run: b, x, a
    # DCG@3  = 1/log2(2) + 0/log2(3) + 3/log2(4) = 1 + 0 + 1.5 = 2.5
    # IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.2618595 + 0.5 = 4.7618595
    expected = 2.5 / (3 + 2 / math.log2(3) + 0.5)
    assert one("ndcg@3", {"a": 3, "b": 1, "c": 2}, {"b": 3.0, "x": 2.0, "a": 1.0}) == pytest.approx(expected, abs=1e-12)


def test_ndcg_ignores_min_grade_like_trec_eval():
    # trec_eval's ndcg_cut uses every grade > 0 as gain whatever the relevance level:
    # a grade-1 doc at rank 1, a grade-2 doc not retrieved -> 1 / (2 + 1/log2(3))
    expected = 1 / (2 + 1 / math.log2(3))
    assert one("ndcg@10", {"a": 1, "b": 2}, {"a": 1.0}, min_grade=2) == pytest.approx(expected)


def test_ndcg_negative_grade_gives_no_gain():
    # a = -1 (Cranfield "no interest") at rank 1, b = 2 at rank 2: DCG = 2/log2(3); IDCG = 2
    assert one("ndcg@2", {"a": -1, "b": 2}, {"a": 2.0, "b": 1.0}) == pytest.approx(1 / math.log2(3))


def test_ndcg_zero_when_no_positive_grade():
    assert one("ndcg@10", {"a": 0, "b": -1}, {"a": 2.0, "b": 1.0}) == 0.0


def test_hit_one_if_any_relevant_in_top_k():
    assert one("hit@2", {"b": 1}, {"a": 2.0, "b": 1.0}) == 1.0
    assert one("hit@1", {"b": 1}, {"a": 2.0, "b": 1.0}) == 0.0


def test_map_sums_precision_at_each_relevant_rank():
    # relevant a, c, z (z never retrieved); run a, b, c:
    # AP = (P@1 + P@3) / 3 = (1 + 2/3) / 3 = 0.5556
    assert one("map", {"a": 1, "c": 1, "z": 1}, {"a": 3.0, "b": 2.0, "c": 1.0}) == pytest.approx((1 + 2 / 3) / 3)


def test_map_at_k_keeps_all_relevant_in_denominator():
    # same question, cut at 2: only rank 1 counts -> 1 / 3
    assert one("map@2", {"a": 1, "c": 1, "z": 1}, {"a": 3.0, "b": 2.0, "c": 1.0}) == pytest.approx(1 / 3)


def test_r_precision_precision_at_number_of_relevant():
    # R = 2; top 2 = a (rel), b -> 1 / 2
    assert one("r_precision", {"a": 1, "c": 1}, {"a": 3.0, "b": 2.0, "c": 1.0}) == pytest.approx(0.5)


def test_r_precision_run_shorter_than_r():
    # R = 3, run returns one relevant doc only -> 1 / 3
    assert one("r_precision", {"a": 1, "b": 1, "c": 1}, {"a": 1.0}) == pytest.approx(1 / 3)


def test_metrics_ties_broken_by_doc_id_descending():
    # Equal scores: trec_eval puts "d9" before "d10" (string compare, descending), so d10 is rank 2.
    assert one("mrr", {"d10": 1}, {"d10": 1.0, "d9": 1.0}) == pytest.approx(0.5)
    assert trec_ranked({"d10": 1.0, "d9": 1.0, "d2": 5.0}) == [("d2", 5.0), ("d9", 1.0), ("d10", 1.0)]


def test_metrics_real_minus_infinity_scores_rank_before_nothing():
    # x and y both -inf: tie -> "y" before "x"; x is rank 3 -> 1/3
    assert one("mrr", {"x": 1}, {"x": -math.inf, "y": -math.inf, "z": 3.0}) == pytest.approx(1 / 3)


def test_metrics_question_missing_from_run_scores_zero():
    # trec_eval -c: "laptop" absent from the run counts 0; mean recall@3 = (1 + 1 + 0) / 3
    run = {q: docs for q, docs in SEED_RUN.items() if q != "laptop"}
    run["hotel"] = {"d6": 1.0}
    assert calc_per_query(["recall@3"], SEED_QRELS, run)["laptop"]["recall@3"] == 0.0
    assert calc_aggregate(["recall@3"], SEED_QRELS, run)["recall@3"] == pytest.approx(2 / 3)


def test_metrics_question_without_judgments_not_evaluated():
    # An empty qrels entry is unknown to trec_eval: not averaged in.
    values = calc_per_query(["mrr"], {"a": {"d1": 1}, "b": {}}, {"a": {"d1": 1.0}, "b": {"d1": 1.0}})
    assert list(values) == ["a"]


def test_metrics_run_queries_without_qrels_ignored():
    assert calc_aggregate(["mrr"], {"a": {"d1": 1}}, {"a": {"d1": 1.0}, "zzz": {"d1": 1.0}}) == {"mrr": 1.0}


def test_metrics_do_not_mutate_inputs():
    qrels, run = copy.deepcopy(SEED_QRELS), copy.deepcopy(SEED_RUN)
    calc_per_query(standard_measures(), qrels, run)
    assert qrels == SEED_QRELS and run == SEED_RUN
    assert [list(d) for d in run.values()] == [list(d) for d in SEED_RUN.values()]


def test_metrics_nan_score_refused():
    with pytest.raises(ValueError, match="NaN"):
        calc_aggregate(["mrr"], {"q": {"a": 1}}, {"q": {"a": float("nan")}})


def test_metrics_min_grade_below_one_refused():
    with pytest.raises(ConfigError, match="min"):
        calc_aggregate(["mrr"], {"q": {"a": 1}}, {"q": {"a": 1.0}}, min_grade=0)


def test_metrics_empty_query_set_gives_nan_mean():
    assert math.isnan(calc_aggregate(["mrr"], {}, {})["mrr"])


def test_judge_run_matrix_in_trec_order():
    rankings = judge_run({"q": {"a": 2, "c": 1}}, {"q": {"a": 1.0, "b": 3.0, "c": 1.0}})
    # order: b (3.0), then the 1.0 tie c, a (doc id descending)
    assert rankings.grades.tolist() == [[0, 1, 2]]
    assert rankings.doc_order.tolist() == [[1, 2, 0]]
    assert rankings.ranked_scores.tolist() == [[3.0, 1.0, 1.0]]
    assert rankings.first_relevant_rank.tolist() == [2]


def test_measure_objects_read_like_the_math():
    assert str(nDCG @ 10) == "ndcg@10"
    assert [str(m) for m in (Recall @ 5, P @ 1, Hit @ 3, MRR, MRR @ 10, MAP, MAP @ 100, RPrec)] == [
        "recall@5", "precision@1", "hit@3", "mrr", "mrr@10", "map", "map@100", "r_precision"]


def test_parse_measure_accepts_common_spellings():
    spellings = {"nDCG@10": "ndcg@10", "ndcg_cut_10": "ndcg@10", "P@5": "precision@5", "P_5": "precision@5",
                 "recall.100": "recall@100", "RR@10": "mrr@10", "recip_rank": "mrr", "success@1": "hit@1",
                 "map_cut_10": "map@10", "Rprec": "r_precision", "r-precision": "r_precision"}
    assert {s: str(parse_measure(s)) for s in spellings} == spellings


@pytest.mark.parametrize("bad", ["ndcg", "ndcg@0", "r_precision@5", "bleu@4", "", "@10"])
def test_parse_measure_refuses_bad_names_with_hint(bad):
    with pytest.raises(ConfigError) as info:
        parse_measure(bad)
    assert "Hint:" in str(info.value)


def test_measure_constructor_refuses_missing_cutoff():
    with pytest.raises(ValueError, match="cutoff"):
        Measure("recall")


def test_parse_measures_drops_repeats_keeps_order():
    assert [str(m) for m in parse_measures(["mrr", "ndcg@10", "nDCG@10", "mrr"])] == ["mrr", "ndcg@10"]


def test_standard_measures_every_family_at_every_cutoff():
    names = [str(m) for m in standard_measures((10, 1))]
    assert names == ["recall@1", "recall@10", "precision@1", "precision@10", "mrr@1", "mrr@10",
                     "ndcg@1", "ndcg@10", "hit@1", "hit@10", "mrr", "map", "r_precision", "judged@1", "judged@10"]


def test_metrics_import_without_heavy_libraries():
    code = ("import sys, labeler.metrics, labeler.runfile, labeler.evaluation; "
            "heavy = [m for m in ('torch', 'faiss', 'streamlit', 'sentence_transformers') if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("measure", [str(m) for m in standard_measures((1, 5))] + ["map@5"])
def test_metrics_empty_run_scores_zero(measure):
    # returned nothing: every metric 0 (pytrec_eval agrees; the random test checks it too)
    assert one(measure, {"a": 1, "b": 3}, {}) == 0.0


def test_ndcg_run_shorter_than_k_adds_nothing_beyond_its_end():
    # one doc returned (grade 1, rank 1); judged a=1, b=1: DCG@10 = 1, IDCG@10 = 1 + 1/log2(3)
    assert one("ndcg@10", {"a": 1, "b": 1}, {"a": 0.3}) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_r_precision_zero_when_no_relevant_document():
    assert one("r_precision", {"a": 0}, {"a": 1.0}) == 0.0
