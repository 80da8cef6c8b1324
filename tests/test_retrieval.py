"""Retrieval with a fake bag-of-words encoder, so every score can be worked out by hand."""
from __future__ import annotations

import pytest

from labeler.candidates import keyword_search, pool_candidates, shuffled
from labeler.config import RunConfig
from labeler.corpus import Corpus, Document
from labeler.retrieval import Retriever, retrieve_run

VOCAB = ["vacation", "days", "hotel", "limit", "laptop", "stolen", "travel", "leave"]
DOCS = Corpus((
    Document("a", "", "vacation days", {"section": "leave"}),
    Document("b", "", "hotel limit travel", {"section": "travel"}),
    Document("c", "", "stolen laptop", {"section": "it"}),
    Document("d", "", "vacation travel", {"section": "travel"}),
))
PLAIN = RunConfig(template="{text}", k=10)


def make(fake_encoder_factory, tmp_path, config=PLAIN, corpus=DOCS):
    encoder = fake_encoder_factory(VOCAB)
    return Retriever(corpus, config, embedder=encoder, cache_root=tmp_path / "cache"), encoder


def test_retriever_dense_scores_are_cosines(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path)
    hits = retriever.search("vacation days", k=2)
    # a: 2 shared / sqrt(2*2) = 1.0; d: 1 shared / sqrt(2*2) = 0.5; b, c: 0.
    assert [(h.doc_id, round(h.score, 6), h.rank) for h in hits] == [("a", 1.0, 1), ("d", 0.5, 2)]


def test_retriever_second_open_loads_the_cache_without_encoding(fake_encoder_factory, tmp_path):
    first, enc1 = make(fake_encoder_factory, tmp_path)
    assert first.stats.embedded and enc1.encoded == 4
    second, enc2 = make(fake_encoder_factory, tmp_path)
    assert not second.stats.embedded and not second.stats.index_built and enc2.calls == 0
    assert (second.vectors == first.vectors).all()
    # A changed corpus is a different cache.
    changed = Corpus(DOCS.documents[:3])
    third, enc3 = make(fake_encoder_factory, tmp_path, corpus=changed)
    assert third.stats.embedded and enc3.encoded == 3


def test_retriever_filters_run_inside_faiss(fake_encoder_factory, tmp_path):
    config = PLAIN.with_(filters=(("section", "travel"),))
    retriever, _ = make(fake_encoder_factory, tmp_path, config)
    # Only b and d are travel; d shares "vacation" (0.5), b shares nothing (0.0).
    assert [h.doc_id for h in retriever.search("vacation days")] == ["d", "b"]
    assert retriever.allowed_chunks((("section", "travel"), ("section", "it"))).tolist() == [1, 2, 3]
    assert retriever.allowed_chunks((("section", "nowhere"),)).tolist() == []
    assert retriever.dense_many(retriever.embedder.encode(["vacation"]), 3, (("section", "nowhere"),)) == [[]]


def test_retriever_documents_score_as_their_best_chunk(fake_encoder_factory, tmp_path):
    corpus = Corpus(DOCS.documents + (Document("e", "", "hotel limit vacation days"),))
    config = PLAIN.with_(chunking="window", chunk_size=2, chunk_overlap=0)
    retriever, _ = make(fake_encoder_factory, tmp_path, config, corpus)
    assert [c.chunk_id for c in retriever.chunks if c.doc_id == "e"] == ["e#0", "e#1"]
    hits = retriever.search("vacation days", k=3)
    # e#1 "vacation days" scores 1.0 like a; the tie goes to the larger doc id (trec_eval order).
    assert [(h.doc_id, h.chunk_id, round(h.score, 6)) for h in hits] == [("e", "e#1", 1.0), ("a", "a#0", 1.0), ("d", "d#0", 0.5)]


def test_retriever_hybrid_fuses_ranks_reciprocally(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path, PLAIN.with_(retriever="hybrid"))
    dense = retriever.dense_many(retriever.embedder.encode(["hotel travel"]), 10)[0]
    lexical = retriever.bm25_search("hotel travel", 10)
    fused = retriever.search("hotel travel")
    expected = {}
    for hits in (dense, lexical):
        for h in hits:
            expected[h.doc_id] = expected.get(h.doc_id, 0) + 1 / (60 + h.rank)
    assert {h.doc_id: h.score for h in fused} == pytest.approx(expected)
    # b is first in both lists: 1/61 + 1/61.
    assert fused[0].doc_id == "b" and fused[0].score == pytest.approx(2 / 61)


def test_retriever_bm25_only_returns_documents_sharing_a_term(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path, PLAIN.with_(retriever="bm25"))
    assert [h.doc_id for h in retriever.search("stolen laptops")] == ["c"]
    assert retriever.search("zebra") == []


def test_retrieve_run_returns_the_plain_run_shape(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path, PLAIN.with_(k=1))
    run = retrieve_run(DOCS, PLAIN.with_(k=1), {"q1": "stolen laptop", "q2": "hotel"}, retriever=retriever)
    assert run == {"q1": {"c": pytest.approx(1.0)}, "q2": {"b": pytest.approx(1 / 3 ** 0.5)}}


def test_pool_candidates_tags_each_retriever_and_rank(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path)
    cands = pool_candidates(retriever, "vacation days", k_dense=2, k_bm25=2)
    by_id = {c.doc_id: dict(c.found_by) for c in cands}
    assert by_id["a"] == {"dense": 1, "bm25": 1}
    assert by_id["d"] == {"dense": 2, "bm25": 2}
    assert [c.doc_id for c in cands] == ["a", "d"]
    assert sorted(c.doc_id for c in shuffled(cands, "q-1")) == ["a", "d"]
    assert shuffled(cands, "q-1") == shuffled(cands, "q-1")


def test_keyword_search_finds_by_id_then_title_then_text():
    corpus = Corpus((
        Document("leave-001", "Vacation allowance", "25 days"),
        Document("leave-002", "Sick leave", "vacation is separate"),
        Document("travel-001", "Hotels", "the hotel limit"),
    ))
    assert [d.doc_id for d in keyword_search(corpus, "leave-002")][0] == "leave-002"
    assert [d.doc_id for d in keyword_search(corpus, "leave")] == ["leave-001", "leave-002"]
    assert [d.doc_id for d in keyword_search(corpus, "Vacation")] == ["leave-001", "leave-002"]
    assert [d.doc_id for d in keyword_search(corpus, "hotel limit")] == ["travel-001"]
    assert keyword_search(corpus, "   ") == []


def test_bm25_and_keyword_terms_keep_devanagari_words_whole(fake_encoder_factory, tmp_path):
    from labeler.candidates import query_terms
    from labeler.lexical import tokenize

    # "छुट्टी" (leave) has vowel signs, which are not \w: a plain \w+ split would cut it up.
    assert "छुट्टी" in tokenize(["हर साल 25 दिन की छुट्टी"])[0]
    assert "छुट्टी" in query_terms("कितनी छुट्टी?")
    corpus = Corpus(DOCS.documents + (Document("hi", "छुट्टी नीति", "हर कर्मचारी को 25 दिन की छुट्टी"),))
    retriever, _ = make(fake_encoder_factory, tmp_path, PLAIN.with_(retriever="bm25"), corpus)
    assert [h.doc_id for h in retriever.search("छुट्टी")] == ["hi"]


def test_retriever_bm25_only_never_embeds_until_dense_is_asked_for(fake_encoder_factory, tmp_path):
    retriever, encoder = make(fake_encoder_factory, tmp_path, PLAIN.with_(retriever="bm25"))
    assert [h.doc_id for h in retriever.search("hotel")] == ["b"]
    assert encoder.calls == 0 and retriever.info["dimension"] is None
    # Pooled candidates need the dense side: it is built then, once.
    pool_candidates(retriever, "hotel")
    assert retriever.stats.embedded and encoder.encoded == 4 + 1
