"""Retrieval with a fake bag-of-words encoder, so every score can be worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from labeler.candidates import keyword_search, pool_candidates, shuffled
from labeler.config import RunConfig
from labeler.corpus import Corpus, Document
from labeler.errors import CorpusError
from labeler.retrieval import DocHit, Retriever, open_retriever, retrieve_run
from labeler.retrieval.fusion import rrf
import labeler.retrieval.retriever as retriever_module

VOCAB = ["vacation", "days", "hotel", "limit", "laptop", "stolen", "travel", "leave"]
DOCS = Corpus((
    Document("a", "", "vacation days", {"section": "leave"}),
    Document("b", "", "hotel limit travel", {"section": "travel"}),
    Document("c", "", "stolen laptop", {"section": "it"}),
    Document("d", "", "vacation travel", {"section": "travel"}),
))
PLAIN = RunConfig(template="{text}", k=10)
P = PLAIN.search_params()  # k=10, dense, no filter


def make(fake_encoder_factory, tmp_path, config=PLAIN, corpus=DOCS):
    encoder = fake_encoder_factory(VOCAB)
    return open_retriever(corpus, config, embedder=encoder, cache_root=tmp_path / "cache"), encoder


def test_retriever_dense_scores_are_cosines(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path)
    hits = retriever.search("vacation days", P.with_(k=2))
    # a: 2 shared / sqrt(2*2) = 1.0; d: 1 shared / sqrt(2*2) = 0.5; b, c: 0.
    assert [(h.doc_id, round(h.score, 6), h.rank) for h in hits] == [("a", 1.0, 1), ("d", 0.5, 2)]


def test_retriever_second_open_loads_the_cache_without_encoding(fake_encoder_factory, tmp_path):
    first, enc1 = make(fake_encoder_factory, tmp_path)
    assert first.stats.embedded and enc1.encoded == 4
    second, enc2 = make(fake_encoder_factory, tmp_path)
    assert not second.stats.embedded and not second.stats.index_built and enc2.calls == 0
    assert (second.vectors == first.vectors).all()
    # A changed corpus reuses the vectors of its unchanged chunks: a subset embeds nothing, only its index is new.
    third, enc3 = make(fake_encoder_factory, tmp_path, corpus=Corpus(DOCS.documents[:3]))
    assert not third.stats.embedded and enc3.calls == 0 and third.stats.reused_chunks == 3 and third.stats.index_built


def test_retriever_takes_a_build_config_only(fake_encoder_factory):
    with pytest.raises(TypeError, match="BuildConfig"):
        Retriever(DOCS, PLAIN, embedder=fake_encoder_factory(VOCAB))


@pytest.mark.parametrize("filters, expected", [
    ((("section", "travel"),), ["d", "b"]),  # only b and d are travel; d shares "vacation" (0.5), b nothing (0.0)
    ((("section", "travel"), ("section", "it")), ["d", "c", "b"]),  # one key: OR; b and c tie at 0, larger id first
    ((("section", "nowhere"),), []),
])
def test_retriever_filters_run_inside_faiss(fake_encoder_factory, tmp_path, filters, expected):
    retriever, _ = make(fake_encoder_factory, tmp_path)
    assert [h.doc_id for h in retriever.search("vacation days", P.with_(filters=filters))] == expected


def test_retriever_allowed_chunks_are_positions_of_matching_documents(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path)
    assert retriever.allowed_chunks() is None
    assert retriever.allowed_chunks((("section", "travel"), ("section", "it"))).tolist() == [1, 2, 3]
    assert retriever.allowed_chunks((("section", "nowhere"),)).tolist() == []


def test_retriever_documents_score_as_their_best_chunk(fake_encoder_factory, tmp_path):
    corpus = Corpus(DOCS.documents + (Document("e", "", "hotel limit vacation days"),))
    config = PLAIN.with_(chunking="window", chunk_size=2, chunk_overlap=0)
    retriever, _ = make(fake_encoder_factory, tmp_path, config, corpus)
    assert [c.chunk_id for c in retriever.chunks if c.doc_id == "e"] == ["e#0", "e#1"]
    hits = retriever.search("vacation days", P.with_(k=3))
    # e#1 "vacation days" scores 1.0 like a; the tie goes to the larger doc id (trec_eval order).
    assert [(h.doc_id, h.chunk_id, round(h.score, 6)) for h in hits] == [("e", "e#1", 1.0), ("a", "a#0", 1.0), ("d", "d#0", 0.5)]


@pytest.mark.parametrize("rrf_k", [60, 1])
def test_retriever_hybrid_fuses_ranks_reciprocally(fake_encoder_factory, tmp_path, rrf_k):
    retriever, encoder = make(fake_encoder_factory, tmp_path, PLAIN.with_(mode="hybrid"))
    dense = retriever.dense_many(encoder.encode(["hotel travel"]), P)[0]
    lexical = retriever.bm25_many(["hotel travel"], P)[0]
    fused = retriever.search("hotel travel", P.with_(mode="hybrid", rrf_k=rrf_k))
    expected = {}
    for hits in (dense, lexical):
        for h in hits:
            expected[h.doc_id] = expected.get(h.doc_id, 0) + 1 / (rrf_k + h.rank)
    assert {h.doc_id: h.score for h in fused} == pytest.approx(expected)
    # b is first in both lists: 1/(rrf_k+1) twice.
    assert fused[0].doc_id == "b" and fused[0].score == pytest.approx(2 / (rrf_k + 1))


def test_rrf_keeps_the_first_lists_chunk_and_ranks_from_one():
    one = [DocHit("x", 9.0, 1, "x#0"), DocHit("y", 8.0, 2, "y#0")]
    two = [DocHit("y", 5.0, 1, "y#3")]
    # y: 1/(10+2) + 1/(10+1) = 0.1742; x: 1/11 = 0.0909.
    assert rrf([one, two], k=5, rrf_k=10) == [DocHit("y", pytest.approx(1 / 12 + 1 / 11), 1, "y#0"),
                                              DocHit("x", pytest.approx(1 / 11), 2, "x#0")]


@pytest.mark.parametrize("question, expected", [
    ("stolen laptops", ["c"]),  # the stemmer matches laptops to laptop
    ("hotel", ["b"]),
    ("zebra", []),
    ("the of and", []),  # stop words only: no query term
])
def test_retriever_bm25_only_returns_documents_sharing_a_term(fake_encoder_factory, tmp_path, question, expected):
    retriever, _ = make(fake_encoder_factory, tmp_path, PLAIN.with_(mode="bm25"))
    assert [h.doc_id for h in retriever.search(question, P.with_(mode="bm25"))] == expected


def test_retrieve_run_returns_the_plain_run_shape(fake_encoder_factory, tmp_path):
    retriever, _ = make(fake_encoder_factory, tmp_path)
    run = retrieve_run(retriever, {"q1": "stolen laptop", "q2": "hotel"}, P.with_(k=1))
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


KEYWORD_CORPUS = Corpus((
    Document("leave-001", "Vacation allowance", "25 days"),
    Document("leave-002", "Sick leave", "vacation is separate"),
    Document("travel-001", "Hotels", "the hotel limit"),
))


@pytest.mark.parametrize("query, expected", [
    ("leave-002", ["leave-002"]),  # the exact id
    ("leave", ["leave-001", "leave-002"]),
    ("Vacation", ["leave-001", "leave-002"]),  # title match before text-only match
    ("hotel limit", ["travel-001"]),
    ("   ", []),
])
def test_keyword_search_finds_by_id_then_title_then_text(query, expected):
    assert [d.doc_id for d in keyword_search(KEYWORD_CORPUS, query)] == expected


def test_bm25_and_keyword_terms_keep_devanagari_words_whole(fake_encoder_factory, tmp_path):
    from labeler.candidates import query_terms
    from labeler.retrieval.lexical import tokenize

    # "छुट्टी" (leave) has vowel signs, which are not \w: a plain \w+ split would cut it up.
    assert "छुट्टी" in tokenize(["हर साल 25 दिन की छुट्टी"])[0]
    assert "छुट्टी" in query_terms("कितनी छुट्टी?")
    corpus = Corpus(DOCS.documents + (Document("hi", "छुट्टी नीति", "हर कर्मचारी को 25 दिन की छुट्टी"),))
    retriever, _ = make(fake_encoder_factory, tmp_path, PLAIN.with_(mode="bm25"), corpus)
    assert [h.doc_id for h in retriever.search("छुट्टी", P.with_(mode="bm25"))] == ["hi"]


def test_retriever_bm25_only_never_embeds_until_dense_is_asked_for(fake_encoder_factory, tmp_path):
    retriever, encoder = make(fake_encoder_factory, tmp_path, PLAIN.with_(mode="bm25"))
    assert [h.doc_id for h in retriever.search("hotel", P.with_(mode="bm25"))] == ["b"]
    assert encoder.calls == 0 and retriever.info["dimension"] is None and not retriever.ready("dense")
    # Pooled candidates need the dense side: it is built then, once.
    pool_candidates(retriever, "hotel")
    assert retriever.stats.embedded and encoder.encoded == 4 + 1 and retriever.ready("hybrid")


class FakeCrossEncoder:
    """Scores a (question, text) pair by the text's length: longest first, by hand."""

    def predict(self, pairs, show_progress_bar=False):
        return np.array([len(text) for _, text in pairs], dtype=np.float32)


@pytest.mark.parametrize("changes", [
    {"k": 1}, {"filters": (("section", "travel"),)}, {"mode": "bm25"}, {"mode": "hybrid"},
    {"mode": "hybrid", "rrf_k": 5}, {"reranker": "fake-ce", "rerank_top": 2}, {"ef_search": 8, "nprobe": 1},
])
def test_retriever_search_params_never_rechunk_or_reload(fake_encoder_factory, tmp_path, monkeypatch, changes):
    retriever, encoder = make(fake_encoder_factory, tmp_path, PLAIN.with_(mode="hybrid"))
    chunked = []
    monkeypatch.setattr(retriever_module, "chunk_corpus", lambda *a, **kw: chunked.append(1) or [])
    monkeypatch.setattr("labeler.retrieval.rerank.load_cross_encoder", lambda path: FakeCrossEncoder())
    steps, calls = dict(retriever.stats.steps), encoder.calls
    assert steps == {"chunk": 1, "embed": 1, "build_index": 1, "build_bm25": 1}
    hits = retriever.search("vacation travel", P.with_(**changes))
    assert hits and all(isinstance(h, DocHit) for h in hits)
    # Only the question was embedded (one text per call), nothing was chunked, loaded or built again.
    assert dict(retriever.stats.steps) == steps and chunked == []
    assert encoder.encoded - 4 == encoder.calls - calls <= 1


def test_reranker_orders_the_head_and_keeps_the_tail_below(fake_encoder_factory, tmp_path, monkeypatch):
    monkeypatch.setattr("labeler.retrieval.rerank.load_cross_encoder", lambda path: FakeCrossEncoder())
    retriever, _ = make(fake_encoder_factory, tmp_path)
    before = retriever.search("vacation travel hotel", P.with_(k=4))
    after = retriever.search("vacation travel hotel", P.with_(k=4, reranker="fake-ce", rerank_top=2))
    # The head (d "vacation travel", b "hotel limit travel") is reordered by text length: b (18) > d (15).
    assert [h.doc_id for h in before[:2]] == ["d", "b"] and [h.doc_id for h in after[:2]] == ["b", "d"]
    assert [h.doc_id for h in after[2:]] == [h.doc_id for h in before[2:]]
    assert after[2].score < after[1].score and [h.rank for h in after] == [1, 2, 3, 4]


@pytest.mark.parametrize("texts", [
    ["the of and", "is it a"],  # stop words
    ["!!! ...", "-- ??"],  # punctuation
    ["a b c", "x"],  # single letters (a token is two or more characters)
])
def test_retriever_bm25_refuses_a_corpus_with_no_indexable_word(fake_encoder_factory, tmp_path, texts):
    corpus = Corpus(tuple(Document(f"d{i}", "", t) for i, t in enumerate(texts)), source="/data/stop.jsonl")
    with pytest.raises(CorpusError, match="no document has a word BM25 can index") as info:
        make(fake_encoder_factory, tmp_path, PLAIN.with_(mode="bm25"), corpus)
    assert str(info.value).startswith("/data/stop.jsonl: ") and "Hint:" in str(info.value)
    # The dense side still works on it.
    dense, _ = make(fake_encoder_factory, tmp_path, PLAIN, corpus)
    assert len(dense.search("vacation", P)) == len(texts)
