"""Incremental embedding: vectors are cached per chunk text, so a changed corpus embeds only what changed.

Real parts (the packaged MiniLM, FAISS, bm25s) on the sample corpus; the fake bag-of-words encoder
where a count has to be worked out by hand (which windows an edit touches).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import REPO, SAMPLE, search_results
from labeler.config import RunConfig
from labeler.corpus import Corpus, Document, load_corpus
from labeler.retrieval import open_retriever
from labeler.retrieval.cache import CACHE_FORMAT, cache_key
from labeler.retrieval.vector_store import COMPACT_AT, VectorStore, text_keys

QUESTIONS = ["How many vacation days do I get?", "What is the hotel limit on business travel?",
             "What should I do if my laptop is stolen?", "Can I bring my parrot to the office on Fridays?"]
HYBRID = RunConfig(mode="hybrid")


def edited(corpus: Corpus, i: int, text: str) -> Corpus:
    """The corpus with document i's text replaced."""
    docs = list(corpus.documents)
    docs[i] = Document(docs[i].doc_id, docs[i].title, text, docs[i].metadata)
    return Corpus(tuple(docs), source=corpus.source)


def assert_same_results(got: list, expected: list) -> None:
    """Same documents in the same order; scores equal up to float noise (one text embedded alone vs in a batch)."""
    assert [[d for d, _ in r] for r in got] == [[d for d, _ in r] for r in expected]
    assert np.allclose([s for r in got for _, s in r], [s for r in expected for _, s in r], atol=1e-5)


@pytest.fixture(scope="module")
def sample():
    return load_corpus(SAMPLE)


@pytest.fixture(scope="module")
def warm_root(sample, tmp_path_factory):
    """A cache root holding the whole sample corpus, built cold once."""
    root = tmp_path_factory.mktemp("incremental") / "cache"
    cold = open_retriever(sample, HYBRID, cache_root=root)
    assert cold.stats.embedded_chunks == len(sample) and cold.stats.reused_chunks == 0
    return root


def test_edit_delete_add_embed_only_what_changed_and_search_as_a_cold_build(sample, warm_root, tmp_path):
    changed = edited(sample, 5, "Parrots and other pets may visit the office on Fridays if they stay quiet.")
    steps = []
    after_edit = open_retriever(changed, HYBRID, cache_root=warm_root,
                                progress=lambda done, total, stage: steps.append((done, total, stage)))
    # Whole-document chunking: one chunk per document, so one edit is one chunk to embed.
    assert (after_edit.stats.embedded_chunks, after_edit.stats.reused_chunks) == (1, len(sample) - 1)
    # Progress counts only what is embedded: one chunk of one.
    assert {total for _, total, _ in steps} == {1} and steps[-1] == (1, 1, "embedding")
    assert after_edit.stats.index_built  # another list of chunks: its own FAISS index, from the stored vectors
    fresh = open_retriever(changed, HYBRID, cache_root=tmp_path / "a")
    assert_same_results(search_results(after_edit, QUESTIONS), search_results(fresh, QUESTIONS))

    deleted = Corpus(changed.documents[:20] + changed.documents[21:], source=changed.source)
    after_delete = open_retriever(deleted, HYBRID, cache_root=warm_root)
    assert (after_delete.stats.embedded_chunks, after_delete.stats.reused_chunks) == (0, len(sample) - 1)
    assert not after_delete.stats.embedded

    added = Corpus(deleted.documents + (
        Document("new-1", "Office parrots", "The office parrot is fed by facilities every morning."),
        Document("new-2", "Bike storage", "Bicycles go in the basement racks, never in the corridors.")),
        source=changed.source)
    after_add = open_retriever(added, HYBRID, cache_root=warm_root)
    assert (after_add.stats.embedded_chunks, after_add.stats.reused_chunks) == (2, len(sample) - 1)
    fresh = open_retriever(added, HYBRID, cache_root=tmp_path / "b")
    assert_same_results(search_results(after_add, QUESTIONS), search_results(fresh, QUESTIONS))

    again = open_retriever(added, HYBRID, cache_root=warm_root)
    assert (again.stats.embedded_chunks, again.stats.index_built) == (0, False)
    assert dict(again.stats.steps) == {"chunk": 1, "load_vectors": 1, "load_index": 1, "load_bm25": 1}


def test_fully_cached_open_does_not_load_the_model(sample, warm_root):
    again = open_retriever(sample, RunConfig(), cache_root=warm_root)
    # model.json records the dimension the shards are checked against: the model loads only to search.
    assert again.stats.reused_chunks == len(sample) and not again.embedder.loaded


def test_an_edit_reembeds_only_the_windows_it_touches(fake_encoder_factory, tmp_path):
    words = "vacation days hotel limit laptop stolen travel leave vacation days".split()
    vocab = sorted(set(words))
    config = RunConfig(template="{text}", chunking="window", chunk_size=4, chunk_overlap=1)
    base = Corpus((Document("a", "", " ".join(words)), Document("b", "", "hotel limit")))
    # 10 words, windows of 4 stepping 3: a#0 = words 0-3, a#1 = 3-6, a#2 = 6-9; b#0 is the whole of b.
    first = open_retriever(base, config, embedder=fake_encoder_factory(vocab), cache_root=tmp_path)
    assert first.stats.embedded_chunks == 4
    last_word = edited(base, 0, " ".join(words[:9] + ["travel"]))  # word 9 lies in a#2 only
    encoder = fake_encoder_factory(vocab)
    after = open_retriever(last_word, config, embedder=encoder, cache_root=tmp_path)
    assert (after.stats.embedded_chunks, after.stats.reused_chunks, encoder.encoded) == (1, 3, 1)
    shared_word = edited(base, 0, " ".join(words[:3] + ["stolen"] + words[4:]))  # word 3 lies in a#0 and a#1
    after = open_retriever(shared_word, config, embedder=fake_encoder_factory(vocab), cache_root=tmp_path)
    assert (after.stats.embedded_chunks, after.stats.reused_chunks) == (2, 2)


def test_a_text_is_embedded_once_within_and_across_corpora(fake_encoder_factory, tmp_path):
    config = RunConfig(template="{text}")
    one = Corpus((Document("a", "", "hotel limit"), Document("b", "", "hotel limit"), Document("c", "", "travel")))
    encoder = fake_encoder_factory(["hotel", "limit", "travel", "leave"])
    first = open_retriever(one, config, embedder=encoder, cache_root=tmp_path)
    # Three chunks, two distinct texts: two embedded, the duplicate gets the same vector.
    assert (first.stats.embedded_chunks, encoder.encoded) == (2, 2)
    assert np.array_equal(first.vectors[0], first.vectors[1])
    other = Corpus((Document("x", "", "travel"), Document("y", "", "leave")))  # "travel" was embedded for `one`
    encoder = fake_encoder_factory(["hotel", "limit", "travel", "leave"])
    second = open_retriever(other, config, embedder=encoder, cache_root=tmp_path)
    assert (second.stats.embedded_chunks, second.stats.reused_chunks, encoder.encoded) == (1, 1, 1)


def test_many_small_shards_are_merged_and_every_vector_survives(fake_encoder_factory, tmp_path):
    vocab = [f"w{i}" for i in range(COMPACT_AT + 4)]
    for i in range(COMPACT_AT + 3):  # one new text per open: one new shard each
        corpus = Corpus(tuple(Document(f"d{j}", "", vocab[j]) for j in range(i + 1)))
        open_retriever(corpus, RunConfig(template="{text}"), embedder=fake_encoder_factory(vocab), cache_root=tmp_path)
    store = VectorStore.at(tmp_path, "fake-bow@1")
    assert len(list(store.folder.glob("shard-*"))) <= COMPACT_AT
    vectors, found = store.lookup(text_keys(vocab[:COMPACT_AT + 3]), model_dimension=lambda: len(vocab), loaded=True)
    assert found.all() and np.array_equal(vectors, np.eye(len(vocab), dtype=np.float32)[:COMPACT_AT + 3])


def test_vectors_of_the_old_cache_layout_are_adopted_without_embedding(fake_encoder_factory, tmp_path):
    config = RunConfig(template="{text}")
    corpus = Corpus((Document("a", "", "hotel"), Document("b", "", "travel")))
    old = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)  # unit rows, unlike what the encoder would give
    parts = {**config.build().embedding_key_parts(), "model": "fake-bow@1", "corpus": corpus.fingerprint,
             "v": CACHE_FORMAT}
    (tmp_path / f"emb-{cache_key(parts)}").mkdir()
    np.save(tmp_path / f"emb-{cache_key(parts)}" / "vectors.npy", old)
    encoder = fake_encoder_factory(["hotel", "travel"])
    retriever = open_retriever(corpus, config, embedder=encoder, cache_root=tmp_path)
    assert (retriever.stats.embedded_chunks, retriever.stats.reused_chunks, encoder.calls) == (0, 2, 0)
    assert np.array_equal(retriever.vectors, old)
    # They are in the store now: another corpus with the same text reuses them.
    other = open_retriever(Corpus((Document("z", "", "travel"),)), config, embedder=encoder, cache_root=tmp_path)
    assert np.array_equal(other.vectors, old[1:]) and encoder.calls == 0


_OPEN_SCRIPT = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from labeler.config import RunConfig
from labeler.corpus import load_corpus
from labeler.retrieval.embedding import Embedder
Embedder().dimension  # load the model before the start line, so both opens run at once
from labeler.retrieval import open_retriever
corpus = load_corpus(sys.argv[2])
Path(sys.argv[4]).touch()
while not Path(sys.argv[5]).exists():
    time.sleep(0.01)
r = open_retriever(corpus, RunConfig(mode="hybrid"), cache_root=Path(sys.argv[3]))
print(json.dumps({"embedded": r.stats.embedded_chunks, "reused": r.stats.reused_chunks,
                  "top": r.search("Can I bring my parrot to the office?")[0].doc_id}))
"""


def test_two_processes_opening_one_changed_corpus_leave_one_consistent_cache(sample, warm_root, tmp_path):
    root = tmp_path / "cache"
    shutil.copytree(warm_root, root)
    changed = edited(sample, 7, "Parrots may visit the office on Fridays.")
    path = tmp_path / "changed.jsonl"
    path.write_text("".join(json.dumps({"_id": d.doc_id, "title": d.title, "text": d.text, **dict(d.metadata)}) + "\n"
                            for d in changed.documents), encoding="utf-8")
    assert load_corpus(path).fingerprint == changed.fingerprint
    go = tmp_path / "go"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_SCRIPT, str(REPO), str(path), str(root),
                               str(tmp_path / f"ready{i}"), str(go)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(2)]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    for out, err in outs:
        got = json.loads(out.strip().splitlines()[-1])
        assert got["top"] == changed.documents[7].doc_id, got
        # Both embed the edited document, unless one looks after the other has stored it.
        assert got["embedded"] <= 1 and got["embedded"] + got["reused"] == len(sample), got
        assert "damaged" not in err, err
    third = open_retriever(changed, HYBRID, cache_root=root)
    assert (third.stats.embedded_chunks, third.stats.index_built) == (0, False)
    assert dict(third.stats.steps) == {"chunk": 1, "load_vectors": 1, "load_index": 1, "load_bm25": 1}
    assert not list(root.rglob("*.tmp")) and not list(root.rglob("*.trash"))
