"""Retrieval on real parts: the packaged MiniLM, FAISS, bm25s, a real (tiny) CrossEncoder."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SAMPLE, need_datasets
from labeler.config import RunConfig, SearchParams
from labeler.corpus import load_corpus
from labeler.retrieval import open_retriever


@pytest.fixture(scope="session")
def real_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("real-cache")


@pytest.fixture(scope="session")
def sample_retriever(real_cache):
    return open_retriever(load_corpus(SAMPLE), RunConfig(), cache_root=real_cache)


@pytest.fixture(scope="session")
def cisi_flat(real_cache):
    corpus = load_corpus(need_datasets() / "cisi")
    return open_retriever(corpus, RunConfig(), cache_root=real_cache)


@pytest.fixture(scope="session")
def cisi_queries():
    import json

    lines = (need_datasets() / "cisi" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines[:100]]


@pytest.mark.parametrize("question, section", [
    ("How many vacation days do I get?", "leave"),
    ("What is the hotel limit on business travel?", "travel"),
    ("What should I do if my laptop is stolen?", "it-security"),
])
def test_real_model_answers_the_classic_questions_near_the_top(sample_retriever, question, section):
    top = sample_retriever.search(question, SearchParams(k=3))
    sections = [sample_retriever.corpus.get(h.doc_id).metadata.get("section") for h in top]
    assert sections[0] == section, (question, [h.doc_id for h in top])


def test_real_model_vectors_are_normalized_and_cached(sample_retriever, real_cache):
    norms = np.linalg.norm(sample_retriever.vectors, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    again = open_retriever(sample_retriever.corpus, RunConfig(), cache_root=real_cache)
    assert not again.stats.embedded and not again.stats.index_built
    assert np.array_equal(again.vectors, sample_retriever.vectors)


def test_real_filter_keeps_only_matching_section(sample_retriever):
    params = RunConfig(k=5, filters=(("section", "travel"),)).search_params()
    hits = sample_retriever.search("How many vacation days do I get?", params)
    assert hits and all(sample_retriever.corpus.get(h.doc_id).metadata["section"] == "travel" for h in hits)


@pytest.mark.parametrize("changes, floor", [
    ({"index": "hnsw", "hnsw_m": 16, "ef_search": 64}, 0.95),
    ({"index": "ivf", "nlist": 32, "nprobe": 8}, 0.80),
])
def test_ann_index_recall_against_flat_on_cisi(cisi_flat, cisi_queries, changes, floor):
    config = RunConfig(k=10, **changes)
    ann = open_retriever(cisi_flat.corpus, config, cache_root=cisi_flat.cache_root)
    assert not ann.stats.embedded and ann.stats.index_built  # same vectors, new index only
    qv = cisi_flat.embedder.encode(cisi_queries)
    exact = cisi_flat.dense_many(qv, SearchParams(k=10))
    approx = ann.dense_many(qv, config.search_params())
    recall = np.mean([len({h.doc_id for h in a} & {h.doc_id for h in e}) / 10 for a, e in zip(approx, exact)])
    assert recall >= floor, recall


def test_ivf_with_more_probes_finds_more_from_one_built_index(cisi_flat, cisi_queries):
    qv = cisi_flat.embedder.encode(cisi_queries[:50])
    exact = cisi_flat.dense_many(qv, SearchParams(k=10))
    ann = open_retriever(cisi_flat.corpus, RunConfig(index="ivf", nlist=32), cache_root=cisi_flat.cache_root)
    steps = dict(ann.stats.steps)

    def recall(nprobe):
        got = ann.dense_many(qv, SearchParams(k=10, nprobe=nprobe))
        return np.mean([len({h.doc_id for h in a} & {h.doc_id for h in e}) for a, e in zip(got, exact)])

    assert recall(1) < recall(8) <= recall(32) == 10.0  # nprobe = nlist is exhaustive
    assert dict(ann.stats.steps) == steps  # nprobe is a search-time setting: nothing rebuilt


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory):
    """A real CrossEncoder, built and saved by the test: a 1-layer BERT over a 13-word vocabulary."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "vacation", "days", "hotel", "limit",
             "laptop", "stolen", "travel", "leave"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, num_labels=1, max_position_embeddings=64))
    with torch.no_grad():
        model.classifier.weight.mul_(1000.0)  # spread the scores so the order is clear
    model.save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return str(folder)


def test_reranker_orders_the_head_by_cross_encoder_score(tiny_cross_encoder, tmp_path, fake_encoder_factory):
    from sentence_transformers import CrossEncoder

    from test_retrieval import DOCS, PLAIN, VOCAB

    config = PLAIN.with_(reranker=tiny_cross_encoder, rerank_top=3, k=4)
    retriever = open_retriever(DOCS, config, embedder=fake_encoder_factory(VOCAB), cache_root=tmp_path)
    question = "vacation travel"
    before = retriever.dense_many(retriever.embedder.encode([question]), SearchParams(k=4))[0]
    after = retriever.search(question, config.search_params())
    ce = CrossEncoder(tiny_cross_encoder, device="cpu")
    head = before[:3]
    scores = ce.predict([(question, retriever.chunk_text(h)) for h in head])
    expected_head = [h.doc_id for _, h in sorted(zip(scores, head), key=lambda p: (-p[0], p[1].doc_id))]
    assert [h.doc_id for h in after[:3]] == expected_head
    assert after[3].doc_id == before[3].doc_id and after[3].score < after[2].score
    assert [h.rank for h in after] == [1, 2, 3, 4]
