"""The BM25 runs shipped with ../shared/datasets reproduce their pytrec_eval metrics files.

Means to the file's 6 decimals and every question's nDCG@10, on SciFact (ties, short runs),
Cranfield (grades -1..4, both qrels files) and CISI (run queries without qrels, skipped).
"""
from __future__ import annotations

import json

import pytest

from conftest import need_datasets
from labeler.metrics import calc_per_query, judge_run
from labeler.runfile import read_run

# metrics-file key -> our name
MEASURES = {"P_10": "precision@10", "map": "map", "map_cut_10": "map@10", "ndcg_cut_10": "ndcg@10",
            "ndcg_cut_100": "ndcg@100", "recall_10": "recall@10", "recall_100": "recall@100", "recip_rank": "mrr"}
CASES = [("scifact", "test.tsv"), ("cranfield", "test.tsv"), ("cranfield", "test_gain_inverted.tsv"),
         ("cisi", "test.tsv")]


def read_qrels_tsv(path) -> dict[str, dict[str, int]]:
    """BEIR qrels: header `query-id corpus-id score`, then one judgment per line."""
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            query_id, doc_id, grade = line.split("\t")
            qrels.setdefault(query_id, {})[doc_id] = int(grade)
    return qrels


@pytest.mark.parametrize("collection, qrels_file", CASES)
def test_metrics_reproduce_shared_bm25_metrics_files(collection, qrels_file):
    folder = need_datasets() / collection
    expected = json.loads((folder / "runs" / "bm25s.top100.metrics.json").read_text())["results"][qrels_file]
    qrels = read_qrels_tsv(folder / "qrels" / qrels_file)
    run = read_run(folder / "runs" / "bm25s.top100.trec")

    per_query = calc_per_query(list(MEASURES.values()), qrels, run)

    assert len(per_query) == expected["queries_evaluated"]
    assert len(run) == expected["queries_in_run"]
    # every judged question is in the run, so trec_eval with or without -c agrees here
    assert all(q in run for q in per_query)
    for trec_name, ours in MEASURES.items():
        mean = sum(v[ours] for v in per_query.values()) / len(per_query)
        assert mean == pytest.approx(expected["mean_over_judged_queries"][trec_name], abs=5.1e-7), trec_name
    for query_id, value in expected["per_query_ndcg_cut_10"].items():
        assert per_query[query_id]["ndcg@10"] == pytest.approx(value, abs=5.1e-7), query_id


def test_metrics_shared_runs_have_the_ties_they_promise():
    # README: SciFact has 139 tied entries in 60 queries; the trec order must decide them.
    run = read_run(need_datasets() / "scifact" / "runs" / "bm25s.top100.trec")
    rankings = judge_run({q: {"-": 1} for q in run}, run)
    scores = rankings.ranked_scores
    tied_rows = ((scores[:, 1:] == scores[:, :-1]) & (scores[:, 1:] > float("-inf"))).any(axis=1)
    assert int(tied_rows.sum()) == 60
    assert int(rankings.num_ret.min()) == 66
