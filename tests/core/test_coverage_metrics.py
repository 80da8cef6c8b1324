"""judged@k and ndcg_condensed@k equal ir_measures' Judged@k and nDCG(judged_only=True)@k on
thousands of generated questions, and judged@k is reported beside every cutoff of a report.

Generated: graded labels -1..3 (grade 0 and negatives judged too) and binary ones, heavy score
ties, doc ids whose string order differs from their numeric order, runs shorter than k, empty
runs, questions missing from the run, questions with judgments but nothing relevant, run queries
without judgments, and many unjudged documents.

Ordering: ir_measures computes nDCG(judged_only=True) through pytrec_eval, whose order is
trec_eval's (score descending, ties by doc id descending), so it is compared on the raw run.
Its Judged is its own Python code, which breaks ties by doc id ascending; judged@k keeps the top
k of every other metric (trec_eval's), so Judged is compared on the same run re-scored without
ties in trec_eval's order, and `test_judged_ties_follow_trec_eval_not_ir_measures` pins the
difference on the raw run.
"""
from __future__ import annotations

import math

import pytest

ir_measures = pytest.importorskip("ir_measures")

from generated_cases import COVERAGE, random_collection  # noqa: E402
from labeler.errors import ConfigError  # noqa: E402
from labeler.evaluation import evaluate  # noqa: E402
from labeler.metrics import (  # noqa: E402
    Judged, Measure, calc_per_query, coverage_measure, nDCGCondensed, parse_measure, standard_measures, trec_ranked,
    with_coverage,
)

CUTOFFS = (1, 2, 3, 5, 10, 20)


def trec_order_without_ties(run: dict) -> dict:
    """The same rankings with distinct scores in trec_eval's order (so every tie rule agrees)."""
    return {q: {d: float(len(docs) - r) for r, (d, _) in enumerate(trec_ranked(docs))} for q, docs in run.items()}


def oracle(measures, qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    """ir_measures per query: {qid: {str(measure): value}}; missing questions score 0, as in ir_measures.

    Empty rankings are left out of ir_measures' input: a TREC run cannot hold one, and its Judged
    would divide by zero; left out, the question is missing and scores 0.
    """
    present = {q: docs for q, docs in run.items() if docs}
    out: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(measures, qrels, present):
        out.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    return out


def ours(names, qrels: dict, run: dict) -> dict[str, dict[str, float]]:
    return calc_per_query(names, qrels, run)


def judged_pairs():
    return [(f"judged@{k}", ir_measures.Judged @ k) for k in CUTOFFS] + [("judged", ir_measures.Judged)]


def condensed_pairs():
    return [(f"ndcg_condensed@{k}", ir_measures.nDCG(judged_only=True) @ k) for k in CUTOFFS]


def assert_equal_per_query(pairs, qrels: dict, run_ours: dict, run_oracle: dict) -> int:
    mine = ours([name for name, _ in pairs], qrels, run_ours)
    theirs = oracle([m for _, m in pairs], qrels, run_oracle)
    judged_queries = {q for q, j in qrels.items() if j}
    assert set(mine) == judged_queries
    checked = 0
    for qid in judged_queries:
        for name, measure in pairs:
            expected = theirs.get(qid, {}).get(str(measure), 0.0)
            assert mine[qid][name] == pytest.approx(expected, abs=1e-9), (qid, name, run_ours.get(qid), qrels[qid])
            checked += 1
    return checked


@pytest.mark.parametrize("seed, binary", [(1, False), (2, False), (3, True)])
def test_judged_matches_ir_measures_on_generated_questions(seed, binary):
    qrels, run = random_collection(seed, 1500, binary=binary, shape=COVERAGE)
    tie_free = trec_order_without_ties(run)
    # Our value on the raw run equals ir_measures' on the same ranking written without ties.
    checked = assert_equal_per_query(judged_pairs(), qrels, run, tie_free)
    assert checked > 9000


@pytest.mark.parametrize("seed, binary", [(4, False), (5, False), (6, True)])
def test_ndcg_condensed_matches_ir_measures_on_generated_questions(seed, binary):
    qrels, run = random_collection(seed, 1500, binary=binary, shape=COVERAGE)
    checked = assert_equal_per_query(condensed_pairs(), qrels, run, run)
    assert checked > 8000


def test_generated_cases_cover_the_edges():
    # the comparisons above would not catch much if the generator missed the hard cases
    qrels, run = random_collection(1, 1500, shape=COVERAGE)
    ranked = {q: trec_ranked(d) for q, d in run.items() if q in qrels}
    assert sum(1 for q in qrels if qrels[q] and q not in run) > 50                        # missing from the run
    assert sum(1 for q, d in run.items() if not d) > 30                                   # empty runs
    assert sum(1 for q, j in qrels.items() if not j) > 30                                 # nothing judged
    assert sum(1 for q, r in ranked.items() if 0 < len(r) < 10) > 200                     # shorter than k
    ties_at_cut = 0
    for q, r in ranked.items():
        for k in CUTOFFS:
            if k < len(r) and r[k - 1][1] == r[k][1] and (r[k - 1][0] in qrels[q]) != (r[k][0] in qrels[q]):
                ties_at_cut += 1                       # a judged and an unjudged doc tied across rank k
    assert ties_at_cut > 300
    grades = [g for j in qrels.values() for g in j.values()]
    assert min(grades) == -1 and grades.count(0) > 1000
    negative_retrieved = sum(1 for q, r in ranked.items() for d, _ in r if qrels[q].get(d, 0) < 0)
    assert negative_retrieved > 500


def test_judged_ties_follow_trec_eval_not_ir_measures():
    # "a" (judged) and "z" (unjudged) tie at 1.0; trec_eval order: "z" before "a" (doc id descending)
    qrels, run = {"q": {"a": 0}}, {"q": {"a": 1.0, "z": 1.0}}
    assert ours(["judged@1", "ndcg@1"], qrels, run)["q"]["judged@1"] == 0.0
    # ir_measures' Judged sorts ties by doc id ascending and sees "a" first
    assert oracle([ir_measures.Judged @ 1], qrels, run)["q"]["Judged@1"] == 1.0
    assert oracle([ir_measures.Judged @ 1], qrels, trec_order_without_ties(run))["q"]["Judged@1"] == 0.0


def test_judged_short_run_divides_by_what_was_returned():
    # 3 returned, 2 judged (grade 0 counts): judged@10 = 2 / min(10, 3); precision@10 keeps k
    qrels, run = {"q": {"a": 0, "b": 2}}, {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    values = ours(["judged@10", "judged@2", "judged", "precision@10"], qrels, run)["q"]
    assert values["judged@10"] == pytest.approx(2 / 3)
    assert values["judged@2"] == 1.0
    assert values["judged"] == pytest.approx(2 / 3)
    assert values["precision@10"] == pytest.approx(1 / 10)


def test_judged_counts_negative_grades_as_judged():
    # "a" is graded -1: judged, though not relevant (as ir_measures' Judged)
    assert ours(["judged@1"], {"q": {"a": -1, "b": 1}}, {"q": {"a": 1.0}})["q"]["judged@1"] == 1.0


@pytest.mark.parametrize("run", [{}, {"q": {}}], ids=["missing", "empty"])
def test_coverage_metrics_missing_or_empty_run_score_zero(run):
    values = ours(["judged@5", "judged", "ndcg_condensed@5"], {"q": {"a": 2}}, run)["q"]
    assert values == {"judged@5": 0.0, "judged": 0.0, "ndcg_condensed@5": 0.0}


def test_ndcg_condensed_skips_unjudged_and_negative_documents():
    # run order x (unjudged), n (-1), a (1), d (3); condensed run: a, d
    # DCG@2 = 1/log2(2) + 3/log2(3); ideal (3, 1): 3 + 1/log2(3)
    qrels, run = {"q": {"a": 1, "n": -1, "d": 3}}, {"q": {"x": 4.0, "n": 3.0, "a": 2.0, "d": 1.0}}
    values = ours(["ndcg_condensed@2", "ndcg@2"], qrels, run)["q"]
    assert values["ndcg_condensed@2"] == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert values["ndcg@2"] == 0.0


def test_ndcg_condensed_keeps_grade_zero_in_place():
    # z (grade 0) stays at rank 1 of the condensed run: DCG@2 = 0 + 1/log2(3); ideal = 1
    values = ours(["ndcg_condensed@2"], {"q": {"z": 0, "a": 1}}, {"q": {"z": 2.0, "x": 1.5, "a": 1.0}})["q"]
    assert values["ndcg_condensed@2"] == pytest.approx(1 / math.log2(3))


def test_ndcg_condensed_zero_when_nothing_relevant_is_judged():
    assert ours(["ndcg_condensed@3"], {"q": {"a": 0}}, {"q": {"a": 1.0}})["q"]["ndcg_condensed@3"] == 0.0


@pytest.mark.parametrize("text, expected", [
    ("judged@10", Measure("judged", 10)), ("Judged@5", Measure("judged", 5)), ("judged", Measure("judged")),
    ("ndcg_condensed@10", Measure("ndcg_condensed", 10)), ("condensed_ndcg_3", Measure("ndcg_condensed", 3)),
])
def test_coverage_measure_names_parse(text, expected):
    assert parse_measure(text) == expected
    assert Judged @ 10 == Measure("judged", 10) and str(nDCGCondensed @ 5) == "ndcg_condensed@5"


def test_ndcg_condensed_needs_a_cutoff():
    with pytest.raises(ConfigError, match="needs a cutoff"):
        parse_measure("ndcg_condensed")


def test_coverage_measures_have_no_plain_trec_eval_name():
    with pytest.raises(ValueError, match="ir_measures"):
        Measure("judged", 10).trec_name
    with pytest.raises(ValueError, match="-J"):
        Measure("ndcg_condensed", 10).trec_name


def test_standard_measures_add_judged_at_every_cutoff():
    names = [str(m) for m in standard_measures((10, 3))]
    assert names[-2:] == ["judged@3", "judged@10"]
    assert names.count("judged@10") == 1
    assert str(coverage_measure("ndcg@10")) == "judged@10" and coverage_measure("mrr") is None


def test_with_coverage_adds_judged_for_every_cutoff_once():
    assert [str(m) for m in with_coverage(["ndcg@20", "mrr", "judged@5", "recall@5"])] == [
        "ndcg@20", "mrr", "judged@5", "recall@5", "judged@20"]


def test_report_has_judged_beside_every_cutoff_in_json():
    # q1: top 3 = d2 (unjudged), d1 (1), d9 (0) -> judged@1 = 0, judged@3 = 2/3
    # q2: top 2 = d6 (1), d5 (unjudged) -> judged@1 = 1, judged@3 = 1/2 (two returned)
    qrels = {"q1": {"d1": 1, "d9": 0}, "q2": {"d6": 1}}
    run = {"q1": {"d2": 0.9, "d1": 0.8, "d9": 0.7}, "q2": {"d6": 0.9, "d5": 0.8}}
    report = evaluate(qrels, run, cutoffs=(1, 3), ci_resamples=50)
    data = report.to_dict()
    assert data["metrics"]["judged@1"] == pytest.approx(0.5)
    assert data["metrics"]["judged@3"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert data["per_query"]["q1"]["judged@3"] == pytest.approx(2 / 3)
    assert data["ci95"]["judged@3"][0] <= data["metrics"]["judged@3"] <= data["ci95"]["judged@3"][1]
    assert report.coverage("ndcg@3") == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert report.coverage("mrr") is None


def test_cli_score_shows_judged_beside_each_metric(tmp_path):
    from click.testing import CliRunner

    from labeler_edge.cli import cli

    golden, run = tmp_path / "g.jsonl", tmp_path / "r.trec"
    golden.write_text('{"query_id": "q1", "question": "a?", "relevance": {"d1": 1, "d9": 0}}\n'
                      '{"query_id": "q2", "question": "b?", "relevance": {"d6": 1}}\n', encoding="utf-8")
    run.write_text("q1 Q0 d2 1 0.9 s\nq1 Q0 d1 2 0.8 s\nq1 Q0 d9 3 0.7 s\nq2 Q0 d6 1 0.9 s\nq2 Q0 d5 2 0.8 s\n",
                   encoding="utf-8")
    table = CliRunner().invoke(cli, ["score", str(golden), str(run), "--cutoffs", "1,3"])
    assert table.exit_code == 0, table.output
    rows = {line.split()[0]: line.split() for line in table.output.splitlines() if line.strip()}
    assert rows["metric"][-1] == "judged@k"
    # judged@3 = (2/3 + 1/2) / 2 = 0.583 beside every metric cut at 3; judged@1 = (0 + 1) / 2
    assert rows["ndcg@3"][-1] == "0.583" and rows["recall@1"][-1] == "0.500"
    assert rows["mrr"][-1] == "1.000]"                       # uncut: no judged@k cell
    assert "judged@1" not in rows and "judged@3" not in rows  # shown as the column, not as rows
    assert "first relevant rank  judged@3  question" in table.output
    data = CliRunner().invoke(cli, ["score", str(golden), str(run), "--cutoffs", "1,3", "--json",
                                    "-m", "ndcg_condensed@3", "--fail-under", "ndcg@20=0"]).stdout
    data = __import__("json").loads(data)
    assert {"judged@1", "judged@3", "judged@20", "ndcg_condensed@3", "ndcg@3"} <= set(data["metrics"])
    assert data["per_query"]["q2"]["judged@3"] == 0.5
    # q1 condensed: d1 (1), d9 (0) -> DCG@3 = 1; IDCG = 1 -> 1.0; q2: d6 first -> 1.0
    assert data["metrics"]["ndcg_condensed@3"] == 1.0
