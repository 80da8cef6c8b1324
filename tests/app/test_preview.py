"""Quick metric previews (labeler_app.preview): the numbers equal pytrec_eval's on the same rankings."""
from __future__ import annotations

import math
import random

import pytest
from browser_support import app_home, open_app, sample_embeddings  # noqa: F401 - fixtures

from labeler.candidates import Candidate
from labeler_app.preview import preview_line, question_preview, ranked_lists, set_preview

pytrec_eval = pytest.importorskip("pytrec_eval")


def trec_run(query_id: str, ranked: list[str]) -> dict:
    return {query_id: {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}


def pool(dense: list[str], bm25: list[str]) -> list[Candidate]:
    found: dict[str, dict[str, int]] = {}
    for name, ranked in (("dense", dense), ("bm25", bm25)):
        for rank, doc_id in enumerate(ranked, start=1):
            found.setdefault(doc_id, {})[name] = rank
    return [Candidate(d, f) for d, f in found.items()]


def test_preview_question_scores_by_hand():
    # dense ranks d1 d2 d3; BM25 ranks d3 d4. Judged: d2 = 2, d3 = 0, d4 = 1 (2 relevant).
    # dense: first relevant d2 at #2; recall@10 = 1/2; DCG = 2/log2(3) = 1.2619, ideal = 2 + 1/log2(3) = 2.6309,
    #   nDCG@10 = 0.4797; judged@10 = 2 judged of the 3 it returned = 0.67 (labeler.metrics.judged: of those returned).
    # BM25: first relevant d4 at #2; recall 1/2; nDCG = (1/log2(3)) / 2.6309 = 0.2398; judged@10 = 2 of 2 = 1.
    previews = question_preview("q1", {"d2": 2, "d3": 0, "d4": 1}, pool(["d1", "d2", "d3"], ["d3", "d4"]),
                                ["dense", "bm25"])
    dense, bm25 = previews
    assert (dense.system, dense.first_relevant, dense.recall) == ("dense", 2, 0.5)
    assert dense.ndcg == pytest.approx((2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert (bm25.system, bm25.first_relevant, bm25.recall) == ("BM25", 2, 0.5)
    assert bm25.ndcg == pytest.approx((1 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert preview_line(previews) == ("Preview on the grades so far (dense, BM25): first relevant #2, #2 · recall@10 "
                                      "0.50, 0.50 · nDCG@10 0.48, 0.24 · judged@10 0.67, 1.00")


def test_preview_question_waits_for_a_relevant_document():
    # Only grade 0 so far: every measure would read 0, which says nothing about either retriever.
    assert question_preview("q1", {"d1": 0}, pool(["d1"], ["d2"]), ["dense", "bm25"]) == []
    none_found = question_preview("q1", {"d9": 3}, pool(["d1"], ["d2"]), ["dense"])[0]
    assert none_found.first_relevant is None and "first relevant none" in preview_line([none_found])
    assert preview_line([]) == ""


def test_preview_question_matches_pytrec_eval_on_random_pools():
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(30)]
    for _ in range(200):
        dense, bm25 = rng.sample(docs, 10), rng.sample(docs, rng.randint(1, 10))
        grades = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, 15))}
        previews = {p.system: p for p in question_preview("q", grades, pool(dense, bm25), ["dense", "bm25"])}
        if not any(g >= 1 for g in grades.values()):
            assert previews == {}
            continue
        for name, ranked in (("dense", dense), ("BM25", bm25)):
            theirs = pytrec_eval.RelevanceEvaluator({"q": grades}, {"recall.10", "ndcg_cut.10", "recip_rank"}
                                                    ).evaluate(trec_run("q", ranked))["q"]
            ours = previews[name]
            assert ours.recall == pytest.approx(theirs["recall_10"], abs=1e-12)
            assert ours.ndcg == pytest.approx(theirs["ndcg_cut_10"], abs=1e-12)
            first = next((i for i, d in enumerate(ranked, start=1) if grades.get(d, 0) >= 1), None)
            assert ours.first_relevant == first
            assert (1 / first if first else 0.0) == pytest.approx(theirs["recip_rank"], abs=1e-12)


def test_preview_set_means_match_pytrec_eval_and_skip_unanswerable():
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(25)]
    qrels = {f"q{i}": {d: rng.choice([0, 1, 2, 3]) for d in rng.sample(docs, 6)} for i in range(12)}
    qrels["q-none"] = {"d1": 0}  # unanswerable: left out of the means
    rankings = {"dense": {q: rng.sample(docs, 10) for q in qrels}, "bm25": {q: rng.sample(docs, 10) for q in qrels}}
    del rankings["bm25"]["q3"]  # no ranking for a question: it scores 0, as trec_eval -c
    previews = {p.system: p for p in set_preview(qrels, ["q-none"], rankings)}
    answerable = {q: g for q, g in qrels.items() if q != "q-none"}
    for name, system in (("dense", "dense"), ("bm25", "BM25")):
        run = {}
        for q in answerable:
            run.update(trec_run(q, rankings[name].get(q, [])))
        theirs = pytrec_eval.RelevanceEvaluator(answerable, {"recall.10", "ndcg_cut.10", "recip_rank"}).evaluate(run)
        for q in answerable:
            theirs.setdefault(q, {"recall_10": 0.0, "ndcg_cut_10": 0.0, "recip_rank": 0.0})
        mean = lambda m: sum(theirs[q][m] for q in answerable) / len(answerable)  # noqa: E731
        got = previews[system]
        assert got.n_questions == 12
        assert got.means["recall@10"] == pytest.approx(mean("recall_10"), abs=1e-12)
        assert got.means["ndcg@10"] == pytest.approx(mean("ndcg_cut_10"), abs=1e-12)
        assert got.means["mrr@10"] == pytest.approx(mean("recip_rank"), abs=1e-12)  # every ranking is 10 deep
        assert 0 < got.means["judged@10"] <= 1


def test_preview_ranked_lists_read_pool_ranks():
    assert ranked_lists(pool(["a", "b"], ["b", "c"]), ["dense", "bm25", "absent"]) == {
        "dense": ["a", "b"], "bm25": ["b", "c"]}


def test_preview_golden_set_equals_an_evaluate_run_of_the_same_retriever(tmp_path):
    # The demo golden set (62 questions) over the sample corpus, BM25 only: the preview from the Label
    # page's pools (top 10) gives the means an Evaluate run of BM25 prints at cutoff 10.
    from labeler_app.preview import golden_preview, preview_rows
    from conftest import import_demo
    from labeler.candidates import pool_candidates
    from labeler.config import RunConfig
    from labeler.corpus import load_corpus
    from labeler.paths import SAMPLE_CORPUS
    from labeler.retrieval import Retriever
    from labeler_app.runs import evaluate_retriever
    from labeler_storage import open_store

    corpus = load_corpus(SAMPLE_CORPUS)
    store = open_store(f"sqlite:///{tmp_path / 'labeler.db'}")
    import_demo(store)
    config = RunConfig(mode="bm25")
    retriever = Retriever(corpus, config.build()).prepare("bm25")
    asked = []
    previews = golden_preview(store, lambda q: asked.append(q) or pool_candidates(retriever, q, k_dense=0), ("bm25",))
    _, report = evaluate_retriever(store.golden.export(), retriever, config)
    [bm25] = previews
    assert bm25.system == "BM25" and bm25.n_questions == report.counts["answerable"] == len(asked)
    for measure in ("recall@10", "mrr@10", "ndcg@10", "judged@10"):
        assert bm25.means[measure] == pytest.approx(report.metrics[measure], abs=1e-12), measure
    assert preview_rows(previews)[0]["ndcg@10"] == round(report.metrics["ndcg@10"], 4)


def test_preview_golden_set_page_shows_dense_and_bm25_and_links_to_evaluate(app_home):
    import time

    at = open_app(annotator="asha")
    at.button(key="load-demo").click().run()
    at.switch_page("../pages/golden_set.py").run()
    assert not at.exception, at.exception
    assert not [d for d in at.dataframe if "judged@10" in d.value.columns]  # asked for, not computed on every visit
    t0 = time.perf_counter()
    at.button(key="set-preview-run").click().run()
    took = time.perf_counter() - t0
    assert not at.exception, at.exception
    [table] = [d for d in at.dataframe if "judged@10" in d.value.columns]
    rows = table.value.to_dict("records")
    assert [r["system"] for r in rows] == ["dense", "BM25"] and {r["questions"] for r in rows} == {53}  # 62 less 9 unanswerable
    assert all(0 < r["ndcg@10"] <= 1 and 0 < r["judged@10"] <= 1 for r in rows)
    assert took < 60, f"the preview took {took:.1f} s"  # seconds idle; generous for a loaded machine
    assert any("Evaluate" in link.proto.label for link in at.get("page_link"))
