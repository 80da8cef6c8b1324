"""SciFact end to end with the real model (minutes: marked slow, run with `make test-slow`).

The published MTEB figure for all-MiniLM-L6-v2 on SciFact test is nDCG@10 = 0.64508 and
recall@100 = 0.92500 (../shared/datasets/REFERENCE_SCORES.md); exact search with our
defaults must reproduce it when the ranking is scored by pytrec_eval.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import need_datasets

pytestmark = pytest.mark.slow


def test_scifact_dense_flat_reproduces_mteb_ndcg_at_10(tmp_path):
    import pytrec_eval

    from labeler.config import RunConfig
    from labeler.retrieval import retrieve_run

    folder = need_datasets() / "scifact"
    # Reuse a developer's cache when asked to (BENCH_HOME); CI embeds from scratch.
    home = os.environ.get("BENCH_HOME")
    cache_root = Path(home) / "cache" if home else None
    queries = {json.loads(l)["_id"]: json.loads(l)["text"]
               for l in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()}
    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(grade)
    queries = {q: t for q, t in queries.items() if q in qrels}

    from labeler.corpus import load_corpus
    from labeler.retrieval import open_retriever

    retriever = open_retriever(load_corpus(folder), RunConfig(k=100), cache_root=cache_root)
    run = retrieve_run(retriever, queries, RunConfig(k=100).search_params())
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    ndcg10 = sum(s["ndcg_cut_10"] for s in scores.values()) / len(qrels)
    recall100 = sum(s["recall_100"] for s in scores.values()) / len(qrels)
    assert ndcg10 == pytest.approx(0.645, abs=0.001)
    assert recall100 == pytest.approx(0.925, abs=0.002)
