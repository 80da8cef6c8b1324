"""`labeler eval --mode bm25` is the live pipeline end to end with no embedding: on the shared
collections it must reproduce the BM25 oracle runs' metrics (bm25s Lucene k1=0.9 b=0.4, English
stop words and stemmer, title + " " + text, top 100) — retrieval and scoring both exact."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import need_datasets
from labeler_edge.cli import cli

OURS = {"P_10": "precision@10", "map": "map", "map_cut_10": "map@10", "ndcg_cut_10": "ndcg@10",
        "ndcg_cut_100": "ndcg@100", "recall_10": "recall@10", "recall_100": "recall@100", "recip_rank": "mrr"}


@pytest.mark.parametrize("name, extra", [("scifact", []), ("cisi", []), ("cranfield", ["--keep-scale"])])
def test_cli_eval_bm25_reproduces_the_oracle_run_metrics(name, extra):
    folder = need_datasets() / name
    oracle = json.loads((folder / "runs" / "bm25s.top100.metrics.json").read_text())["results"]["test.tsv"]
    result = CliRunner().invoke(cli, ["eval", str(folder), str(folder), "--mode", "bm25", "-k", "100",
                                      "--cutoffs", "10,100", "--fail-under", "map@10=0", "--json", *extra])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["config"]["mode"] == "bm25" and report["config"]["k"] == 100
    assert report["counts"]["answerable"] == oracle["queries_evaluated"]
    for theirs, ours in OURS.items():
        assert report["metrics"][ours] == pytest.approx(oracle["mean_over_judged_queries"][theirs], abs=1e-6), ours
    per_query = {q: v["ndcg@10"] for q, v in report["per_query"].items()}
    mismatched = [q for q, v in oracle["per_query_ndcg_cut_10"].items() if abs(per_query[q] - v) > 1e-6]
    assert mismatched == []
