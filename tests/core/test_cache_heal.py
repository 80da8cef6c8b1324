"""Caches that heal: every cache file damaged in turn is noticed (a warning on `labeler.cache`), the entry
is rebuilt, and search returns what a clean build returns; the next open finds a whole cache again.

Real parts: the packaged MiniLM, FAISS and bm25s, on the first 20 documents of the sample corpus.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import SAMPLE, search_results
from labeler.config import RunConfig, SearchParams
from labeler.corpus import Corpus, Document, load_corpus
from labeler.retrieval import open_retriever

HYBRID = RunConfig(mode="hybrid")
QUESTIONS = ["How many vacation days do I get?", "Can I carry over unused leave?", "Who approves overtime?"]
SHARD = "vectors-*/shard-*/"
BM25_FILES = ["data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy", "vocab.index.json",
              "params.index.json", "manifest.json"]
FILES = ([SHARD + n for n in ("vectors.npy", "keys.npy", "manifest.json")] + ["vectors-*/model.json"]
         + ["index-*/index.faiss", "index-*/manifest.json"] + ["bm25-*/" + n for n in BM25_FILES])


@pytest.fixture(scope="module")
def corpus():
    full = load_corpus(SAMPLE)
    return Corpus(full.documents[:20], source=full.source)


@pytest.fixture(scope="module")
def clean(corpus, tmp_path_factory):
    """A clean cache root and the results searched on it."""
    root = tmp_path_factory.mktemp("clean") / "cache"
    retriever = open_retriever(corpus, HYBRID, cache_root=root)
    return root, search_results(retriever, QUESTIONS)


def one(root: Path, pattern: str) -> Path:
    found = list(root.glob(pattern))
    assert len(found) == 1, (pattern, found)
    return found[0]


def reseal(folder: Path, **fields) -> None:
    """Rewrite an entry's manifest to match its (forged) files: only the checks past the checksum can tell."""
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"] = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in manifest["files"]}
    (folder / "manifest.json").write_text(json.dumps({**manifest, **fields}))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def zero_fill(path: Path) -> None:
    path.write_bytes(bytes(path.stat().st_size))


def random_bytes(path: Path) -> None:
    path.write_bytes(np.random.default_rng(7).bytes(path.stat().st_size))


def shard_vectors(root: Path, vectors: np.ndarray) -> None:
    folder = one(root, SHARD.rstrip("/"))
    np.save(folder / "vectors.npy", vectors.astype(np.float32))
    reseal(folder, shape=list(vectors.shape), dim=int(vectors.shape[1]))


def unit(rows: int, dim: int) -> np.ndarray:
    v = np.random.default_rng(3).normal(size=(rows, dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def wrong_dimension_shard(root: Path) -> None:
    shard_vectors(root, unit(20, 128))


def nan_vectors_resealed(root: Path) -> None:
    v = np.load(one(root, SHARD + "vectors.npy"))
    v[3, :5] = np.nan
    shard_vectors(root, v)


def nan_vectors(root: Path) -> None:
    path = one(root, SHARD + "vectors.npy")
    v = np.load(path)
    v[0, 0] = np.nan
    np.save(path, v)


def not_unit_length_resealed(root: Path) -> None:
    shard_vectors(root, np.load(one(root, SHARD + "vectors.npy")) * 2.0)


def wrong_dimension_index(root: Path) -> None:
    import faiss

    index = faiss.IndexFlatIP(128)
    index.add(unit(20, 128).astype(np.float32))
    folder = one(root, "index-*")
    faiss.write_index(index, str(folder / "index.faiss"))
    reseal(folder, d=128)


def wrong_dimension_record(root: Path) -> None:
    path = one(root, "vectors-*/model.json")
    path.write_text(json.dumps({**json.loads(path.read_text()), "dim": 128}))


def bm25_of_other_texts(root: Path) -> None:
    from labeler.retrieval.lexical import BM25Index

    folder = one(root, "bm25-*")
    for name in BM25_FILES[:-1]:
        (folder / name).unlink()
    BM25Index.build(["vacation days", "hotel limit"]).save(folder)
    reseal(folder, count=2)


def missing(pattern: str):
    def damage(root: Path) -> None:
        one(root, pattern).unlink()
    damage.__name__ = f"missing {pattern}"
    return damage


SPECIAL = [wrong_dimension_shard, nan_vectors_resealed, nan_vectors, not_unit_length_resealed, wrong_dimension_index,
           wrong_dimension_record, bm25_of_other_texts, missing(SHARD + "manifest.json"), missing("index-*/manifest.json"),
           missing("bm25-*/manifest.json"), missing(SHARD + "vectors.npy"), missing("index-*/index.faiss"),
           missing("bm25-*/vocab.index.json")]
CASES = ([(f"{damage.__name__} {pattern}", pattern, damage) for pattern in FILES
          for damage in (truncate, zero_fill, random_bytes)]
         + [(damage.__name__, None, damage) for damage in SPECIAL])


@pytest.mark.parametrize("name, pattern, damage", CASES, ids=[c[0] for c in CASES])
def test_a_damaged_cache_file_is_rebuilt_with_a_warning_and_the_same_results(corpus, clean, tmp_path, caplog,
                                                                            name, pattern, damage):
    clean_root, expected = clean
    root = tmp_path / "cache"
    shutil.copytree(clean_root, root)
    damage(one(root, pattern)) if pattern else damage(root)
    with caplog.at_level(logging.WARNING, logger="labeler.cache"):
        healed = open_retriever(corpus, HYBRID, cache_root=root)
        got = search_results(healed, QUESTIONS)
    assert [r for r in caplog.records if r.name == "labeler.cache" and r.levelno == logging.WARNING], name
    assert [[d for d, _ in r] for r in got] == [[d for d, _ in r] for r in expected]
    assert np.allclose([s for r in got for _, s in r], [s for r in expected for _, s in r], atol=1e-5)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="labeler.cache"):
        again = open_retriever(corpus, HYBRID, cache_root=root)
    assert not [r for r in caplog.records if r.name == "labeler.cache"], [r.getMessage() for r in caplog.records]
    assert dict(again.stats.steps) == {"chunk": 1, "load_vectors": 1, "load_index": 1, "load_bm25": 1}
    assert not list(root.rglob("*.tmp")) and not list(root.rglob("*.trash"))


def test_a_shard_missing_its_manifest_is_never_trusted(corpus, clean, tmp_path, caplog):
    """A folder with data but no manifest (a writer died between the two) counts as absent, whatever it holds."""
    root = tmp_path / "cache"
    shutil.copytree(clean[0], root)
    folder = one(root, SHARD.rstrip("/"))
    (folder / "manifest.json").unlink()
    np.save(folder / "vectors.npy", np.zeros((20, 384), dtype=np.float32))  # garbage a reader must not use
    with caplog.at_level(logging.WARNING, logger="labeler.cache"):
        retriever = open_retriever(corpus, HYBRID, cache_root=root)
    assert retriever.stats.embedded_chunks == 20 and not folder.exists()
    assert np.allclose(np.linalg.norm(retriever.vectors, axis=1), 1.0, atol=1e-5)


def test_stale_temporary_folders_of_a_dead_writer_are_swept(corpus, clean, tmp_path):
    root = tmp_path / "cache"
    shutil.copytree(clean[0], root)
    dead = root / "index-0123456789abcdef.999.1.tmp"
    dead.mkdir()
    (dead / "index.faiss").write_bytes(b"half")
    os.utime(dead, (1, 1))
    fresh = root / "index-fedcba9876543210.998.1.tmp"  # a live writer's: young, left alone
    fresh.mkdir()
    open_retriever(corpus, RunConfig(index="hnsw"), cache_root=root)  # a new index: writes, and sweeps
    assert not dead.exists() and fresh.exists()


TWO_DOCS = Corpus(tuple(Document(i, "", t) for i, t in [("a", "hotel limit"), ("b", "travel leave")]))
TEXT_ONLY = RunConfig(template="{text}")


def cached_with_four_words_then_six(fake_encoder_factory, root: Path):
    """TWO_DOCS cached under `root` by a four-word fake model; then the same identity (fake-bow@1) with
    six dimensions, which, like Embedder, costs a model load for its dimension until the first encode."""
    open_retriever(TWO_DOCS, TEXT_ONLY, embedder=fake_encoder_factory(["hotel", "limit", "travel", "leave"]),
                   cache_root=root)

    class Unloaded(fake_encoder_factory):
        @property
        def loaded(self):
            return self.calls > 0

    return Unloaded, Unloaded(["hotel", "limit", "travel", "leave", "days", "vacation"])


def test_a_model_that_changed_under_one_identity_is_noticed_and_everything_reembedded(fake_encoder_factory, tmp_path,
                                                                                      caplog):
    """A hub name's identity is the name: if the model behind it changes dimension, the cache still says the old one."""
    docs, config = TWO_DOCS, TEXT_ONLY
    Unloaded, grown = cached_with_four_words_then_six(fake_encoder_factory, tmp_path)  # noqa: N806 - a class
    # The cached open trusts model.json (four dimensions) ...
    retriever = open_retriever(docs, config, embedder=grown, cache_root=tmp_path)
    assert retriever.stats.reused_chunks == 2 and grown.calls == 0
    with caplog.at_level(logging.WARNING, logger="labeler.cache"):
        hits = retriever.search("hotel travel", SearchParams(k=2))
    # ... until the first query has six: then every chunk is embedded again, and a and b each share one word
    # with the query (cosine 1 / sqrt(2 * 2) = 0.5).
    assert [(h.doc_id, round(h.score, 6)) for h in hits] == [("b", 0.5), ("a", 0.5)]
    assert retriever.vectors.shape == (2, 6) and [r for r in caplog.records if r.name == "labeler.cache"]
    # A corpus with a new document finds the six-dimensional vectors and model.json rewritten.
    more = Corpus(docs.documents + (Document("c", "", "vacation days"),))
    again = open_retriever(more, config, embedder=Unloaded(grown.vocabulary), cache_root=tmp_path)
    assert (again.stats.embedded_chunks, again.stats.reused_chunks) == (1, 2) and again.vectors.shape == (3, 6)


def test_a_changed_model_is_noticed_when_it_embeds_a_new_chunk(fake_encoder_factory, tmp_path, caplog):
    _, grown = cached_with_four_words_then_six(fake_encoder_factory, tmp_path)
    more = Corpus(TWO_DOCS.documents + (Document("c", "", "vacation days"),))
    with caplog.at_level(logging.WARNING, logger="labeler.cache"):
        retriever = open_retriever(more, TEXT_ONLY, embedder=grown, cache_root=tmp_path)
    # c came out with six dimensions where the cache holds four: a and b are embedded again as well.
    assert (retriever.stats.embedded_chunks, retriever.stats.reused_chunks, grown.encoded) == (3, 0, 3)
    assert retriever.vectors.shape == (3, 6) and [r for r in caplog.records if r.name == "labeler.cache"]
    assert [h.doc_id for h in retriever.search("vacation days", SearchParams(k=1))] == ["c"]
