"""ActiveOrder: one model for the candidates' order and for "find more", refitted on each grade."""
from __future__ import annotations

import numpy as np

from judging_support import VOCABULARY, write_collection
from labeler.judging import ActiveOrder
from labeler.judging.collection import open_collection
from labeler.judging.features import RRF_K, rank_of


def _collection(tmp_path, fake_encoder_factory):
    folder = tmp_path / "tiny"
    write_collection(folder)
    return open_collection(folder, embedder=fake_encoder_factory(VOCABULARY))


def test_active_order_of_candidates_is_the_corpus_order_restricted(tmp_path, fake_encoder_factory):
    col = _collection(tmp_path, fake_encoder_factory)
    model = ActiveOrder(col.features("q1"), seed="q1")
    judged = {"vol-00": 2, "gla-00": 0}
    whole = model.order(judged)
    pool = col.pools["q1"]
    assert model.order(judged, pool) == [d for d in whole if d in pool]
    assert not set(judged) & set(whole) and len(whole) == len(col.text.doc_ids) - 2
    more = model.find_more(judged, pool, n=5)
    assert more == [d for d in whole if d not in pool][:5]


def test_active_order_learns_from_a_grade(tmp_path, fake_encoder_factory):
    # vol-04..11 share none of the question's words ("lava and magma"), only "eruption crater";
    # once vol-04 is graded relevant, the other documents with those words come first. Text alone
    # (dense_weight 0): the fake encoder's vectors are mostly the filler words every topic shares.
    col = _collection(tmp_path, fake_encoder_factory)
    model = ActiveOrder(col.features("q1"), seed="q1", dense_weight=0.0)
    judged = {f"vol-0{i}": 2 if i < 2 else 1 for i in range(4)}
    before = model.order(judged)[:8]
    after = model.order({**judged, "vol-04": 1})[:7]
    deep = {f"vol-{i:02d}" for i in range(5, 12)}
    assert len(deep & set(before)) <= 2 and len(deep & set(after)) >= 6, (before, after)


def test_active_order_follows_the_retrievers_until_a_grade_says_relevant(tmp_path, fake_encoder_factory):
    # Before any relevant grade the order is reciprocal-rank fusion of dense and BM25:
    # sum over retrievers of 1 / (60 + rank), ties in corpus order.
    col = _collection(tmp_path, fake_encoder_factory)
    features = col.features("q1")
    scores = features.scores
    fused = sum(1.0 / (RRF_K + rank_of(np.asarray(scores[name]))) for name in ("dense", "bm25"))
    ids = features.doc_ids
    expected = [ids[p] for p in np.lexsort((np.arange(len(ids)), -fused))]
    model = ActiveOrder(features, seed="q1")
    assert model.order({}) == expected
    not_relevant = {expected[0]: 0, expected[3]: 0}
    assert model.order(not_relevant) == [d for d in expected if d not in not_relevant]
    assert model.order({**not_relevant, "vol-00": 2}) != [d for d in expected if d not in {**not_relevant, "vol-00": 2}]


def test_active_order_is_liblinears_model_over_text_retrievers_and_embeddings(tmp_path, fake_encoder_factory):
    # The model fitted in the span of its training rows equals scikit-learn's liblinear fitted on the
    # explicit rows: [tf-idf | retriever columns | dense_weight * embedding], the question as the
    # first relevant row and the same pseudo-negatives.
    from scipy.sparse import csr_matrix, hstack, vstack
    from sklearn.linear_model import LogisticRegression

    col = _collection(tmp_path, fake_encoder_factory)
    features = col.features("q1")
    assert features.vectors is not None and features.vectors.shape[0] == len(features.doc_ids)
    model = ActiveOrder(features, seed="q1", dense_weight=0.7, pseudo_negatives=20)
    judged = {"vol-00": 2, "vol-04": 1, "gla-00": 0}
    rows, labels = model.training_rows(judged)
    explicit = hstack([features.matrix, csr_matrix(0.7 * features.vectors)], format="csr")
    query = hstack([features.query_row, csr_matrix(0.7 * features.query_vector[None, :])], format="csr")
    x = vstack([query, explicit[rows]], format="csr")
    reference = LogisticRegression(C=model.regularization, solver="liblinear", tol=1e-10, max_iter=10_000).fit(x, labels)
    assert np.allclose(model.scores(judged), reference.decision_function(explicit), atol=1e-4)
