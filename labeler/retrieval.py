"""The retrieval pipeline: chunks → cached embeddings → FAISS / BM25 → fusion → rerank → documents.

A `Retriever` is built once per (corpus, config) and then only read, so the app can share it
between sessions with `st.cache_resource`. Embeddings and indexes are cached on disk, keyed
by what changes them; a second open of the same corpus loads them and never loads the model
until a question has to be embedded.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from labeler.chunking import Chunk, chunk_corpus, render
from labeler.config import RunConfig
from labeler.corpus import Corpus, load_corpus
from labeler.embedding import Embedder, model_identity
from labeler.errors import ConfigError
from labeler.paths import cache_dir

Progress = Callable[[int, int, str], None]
CACHE_FORMAT = 1
BM25_FORMAT = 2  # 2: Indic scripts tokenized whole (labeler.lexical.TOKEN_PATTERN)


@dataclass(frozen=True)
class DocHit:
    """A retrieved document: its score is its best chunk's, its rank is 1-based."""

    doc_id: str
    score: float
    rank: int
    chunk_id: str


@dataclass
class OpenStats:
    """What opening a corpus cost: whether it embedded or loaded, and how long each step took."""

    embedded: bool = False
    index_built: bool = False
    seconds: dict[str, float] = field(default_factory=dict)


def _key(parts: Mapping) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _save_npy(array: np.ndarray, path: Path) -> None:
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npy")
    np.save(tmp, array)
    tmp.replace(path)


def _trec_order(hits: list[DocHit]) -> list[DocHit]:
    """Score descending, ties by doc id descending — the order trec_eval scores a run in."""
    return sorted(sorted(hits, key=lambda h: h.doc_id, reverse=True), key=lambda h: -h.score)


def _ranked(scored: Sequence[tuple[str, float, str]], k: int) -> list[DocHit]:
    hits = [DocHit(d, float(s), 0, c) for d, s, c in scored]
    return [DocHit(h.doc_id, h.score, r, h.chunk_id) for r, h in enumerate(_trec_order(hits)[:k], start=1)]


@functools.lru_cache(maxsize=2)
def load_cross_encoder(path: str):
    """Load a sentence-transformers CrossEncoder once per process."""
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(path, device="cpu")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load reranker {path!r}: {exc}",
                          hint="give the folder of a saved sentence-transformers CrossEncoder.") from None


class Retriever:
    """Dense, BM25, hybrid and reranked search over one corpus with one RunConfig."""

    def __init__(self, corpus: Corpus, config: RunConfig = RunConfig(), *, embedder: Embedder | None = None,
                 cache_root: Path | None = None, progress: Progress | None = None) -> None:
        self.corpus = corpus
        self.config = config
        self.embedder = embedder or Embedder(config.model)
        self.stats = OpenStats()
        t0 = time.perf_counter()
        self.chunks: list[Chunk] = chunk_corpus(corpus, strategy=config.chunking, size=config.chunk_size,
                                                overlap=config.chunk_overlap, unit=config.chunk_unit)
        doc_pos = {d.doc_id: i for i, d in enumerate(corpus.documents)}
        self.chunk_doc = np.fromiter((doc_pos[c.doc_id] for c in self.chunks), dtype=np.int64, count=len(self.chunks))
        self.max_chunks_per_doc = int(np.bincount(self.chunk_doc).max())
        self.texts = [render(config.template, corpus.documents[p].title, c.text)
                      for p, c in zip(self.chunk_doc, self.chunks)]
        self.stats.seconds["chunk"] = time.perf_counter() - t0

        identity = getattr(self.embedder, "identity", None) or model_identity(self.embedder.name)
        parts = {**config.embedding_key_parts(), "model": identity, "corpus": corpus.fingerprint, "v": CACHE_FORMAT}
        self.cache_path = (cache_root or cache_dir()) / f"emb-{_key(parts)}"
        self.cache_path.mkdir(parents=True, exist_ok=True)
        self._embedding_parts = parts
        self._vectors: np.ndarray | None = None
        self._index = None
        self._build_lock = threading.RLock()
        self._filter_cache: dict[tuple, np.ndarray] = {}
        self._lock = threading.Lock()
        # Build what the config searches with now, with progress; a BM25-only run never embeds
        # (the dense side is still built on first use, e.g. for pooled candidates).
        if config.retriever == "bm25":
            self.bm25  # noqa: B018
        else:
            self._open_dense(progress)

    # -- building -------------------------------------------------------------------------
    def _open_dense(self, progress: Progress | None = None) -> None:
        with self._build_lock:
            if self._vectors is None:
                self._vectors = self._load_or_embed(self._embedding_parts, progress)
            if self._index is None:
                self._index = self._load_or_build_index()

    @property
    def vectors(self) -> np.ndarray:
        """Normalized chunk vectors (loaded from the cache or embedded on first use)."""
        if self._vectors is None:
            self._open_dense()
        return self._vectors

    @property
    def index(self):
        """The FAISS index over `vectors`."""
        if self._index is None:
            self._open_dense()
        return self._index

    def _load_or_embed(self, parts: dict, progress: Progress | None) -> np.ndarray:
        t0 = time.perf_counter()
        path = self.cache_path / "vectors.npy"
        if path.exists():
            vectors = np.load(path, mmap_mode=None)
            if vectors.shape[0] == len(self.chunks):
                self.stats.seconds["load_vectors"] = time.perf_counter() - t0
                return vectors
        vectors = self.embedder.encode(self.texts, progress=progress)
        _save_npy(vectors, path)
        meta = {**parts, "n_chunks": len(self.chunks), "dim": int(vectors.shape[1]),
                "n_docs": len(self.corpus), "source": self.corpus.source,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        (self.cache_path / "meta.json").write_text(json.dumps(meta, indent=2, default=str))
        self.stats.embedded = True
        self.stats.seconds["embed"] = time.perf_counter() - t0
        return vectors

    def _load_or_build_index(self):
        from labeler.index import build_index, load_index, save_index

        t0 = time.perf_counter()
        path = self.cache_path / f"index-{_key(self.config.index_key_parts())}.faiss"
        if path.exists():
            index = load_index(path)
            if index.ntotal == len(self.chunks):
                self.stats.seconds["load_index"] = time.perf_counter() - t0
                return index
        index = build_index(self.vectors, self.config)
        save_index(index, path)
        self.stats.index_built = True
        self.stats.seconds["build_index"] = time.perf_counter() - t0
        return index

    @functools.cached_property
    def bm25(self):
        """BM25 over the same chunk texts; built on first use and cached on disk."""
        from labeler.lexical import BM25Index

        folder = self.cache_path.parent / f"bm25-{_key({**self.config.embedding_key_parts(), 'model': None, 'corpus': self.corpus.fingerprint, 'v': BM25_FORMAT})}"
        if (folder / "params.index.json").exists():
            try:
                return BM25Index.load(folder)
            except (OSError, ValueError, KeyError):
                pass  # a damaged cache is rebuilt below
        index = BM25Index.build(self.texts)
        tmp = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
        index.save(tmp)
        try:
            tmp.replace(folder)
        except OSError:  # another process won the race; its copy is identical
            shutil.rmtree(tmp, ignore_errors=True)
        return index

    @functools.cached_property
    def chunk_position(self) -> dict[str, int]:
        """chunk_id -> position in `chunks`."""
        return {c.chunk_id: i for i, c in enumerate(self.chunks)}

    # -- info -----------------------------------------------------------------------------
    @property
    def info(self) -> dict:
        """Counts and settings to show a user."""
        return {"documents": len(self.corpus), "chunks": len(self.chunks), "model": self.config.model,
                "dimension": int(self._vectors.shape[1]) if self._vectors is not None else None,
                "index": self.config.index if self._index is not None else "none (BM25 only)",
                "cache": str(self.cache_path), "corpus_fingerprint": self.corpus.fingerprint}

    # -- filtering ------------------------------------------------------------------------
    def allowed_chunks(self, filters: Sequence[tuple[str, str]] = ()) -> np.ndarray | None:
        """Chunk positions whose document matches every filter key (values of one key OR-ed)."""
        filters = tuple(sorted(filters))
        if not filters:
            return None
        with self._lock:
            if filters not in self._filter_cache:
                wanted: dict[str, set[str]] = {}
                for key, value in filters:
                    wanted.setdefault(key, set()).add(value)
                ok_docs = np.fromiter(
                    (all(str(d.metadata.get(k)) in vs for k, vs in wanted.items()) for d in self.corpus.documents),
                    dtype=bool, count=len(self.corpus))
                self._filter_cache[filters] = np.flatnonzero(ok_docs[self.chunk_doc])
            return self._filter_cache[filters]

    # -- search ---------------------------------------------------------------------------
    def _to_docs(self, scores: np.ndarray, positions: np.ndarray, k: int) -> list[DocHit]:
        best: dict[str, tuple[float, str]] = {}
        for s, p in zip(scores.tolist(), positions.tolist()):
            if p < 0:
                continue
            chunk = self.chunks[p]
            if chunk.doc_id not in best or s > best[chunk.doc_id][0]:
                best[chunk.doc_id] = (s, chunk.chunk_id)
        return _ranked([(d, s, c) for d, (s, c) in best.items()], k)

    def dense_many(self, query_vectors: np.ndarray, k: int, filters=None) -> list[list[DocHit]]:
        """Top-k documents per query vector by their best chunk's inner product."""
        from labeler.index import search

        allowed = self.allowed_chunks(filters if filters is not None else self.config.filters)
        if allowed is not None and len(allowed) == 0:
            return [[] for _ in range(len(query_vectors))]
        # k documents are always among the top k * (max chunks per document) chunks.
        fetch = k * self.max_chunks_per_doc
        scores, positions = search(self.index, query_vectors, fetch, self.config, allowed)
        return [self._to_docs(s, p, k) for s, p in zip(scores, positions)]

    def bm25_search(self, question: str, k: int, filters=None) -> list[DocHit]:
        """Top-k documents by BM25 of their best chunk."""
        allowed = self.allowed_chunks(filters if filters is not None else self.config.filters)
        fetch = k * self.max_chunks_per_doc
        scores, positions = self.bm25.search(question, fetch, allowed)
        return self._to_docs(scores, positions, k)

    def _rrf(self, lists: Sequence[list[DocHit]], k: int) -> list[DocHit]:
        fused: dict[str, list] = {}
        for hits in lists:
            for h in hits:
                entry = fused.setdefault(h.doc_id, [0.0, h.chunk_id])
                entry[0] += 1.0 / (self.config.rrf_k + h.rank)
        return _ranked([(d, s, c) for d, (s, c) in fused.items()], k)

    def _rerank(self, question: str, hits: list[DocHit], k: int) -> list[DocHit]:
        top, rest = hits[: self.config.rerank_top], hits[self.config.rerank_top:]
        if not top:
            return hits
        model = load_cross_encoder(self.config.reranker)
        pairs = [(question, self.texts[self.chunk_position[h.chunk_id]]) for h in top]
        scores = np.asarray(model.predict(pairs, show_progress_bar=False), dtype=np.float64).reshape(len(top), -1)[:, -1]
        reranked = _ranked([(h.doc_id, float(s), h.chunk_id) for h, s in zip(top, scores)], len(top))
        # Documents past the reranked head keep their order, strictly below it.
        floor = min(h.score for h in reranked)
        tail = [(h.doc_id, floor - 1.0 - i, h.chunk_id) for i, h in enumerate(rest)]
        return _ranked([(h.doc_id, h.score, h.chunk_id) for h in reranked] + tail, k)

    def search_many(self, questions: Sequence[str], k: int | None = None,
                    progress: Progress | None = None) -> list[list[DocHit]]:
        """Ranked documents for each question, as the config says (dense/bm25/hybrid, rerank)."""
        k = k or self.config.k
        depth = max(k, self.config.rerank_top) if self.config.reranker else k
        kind = self.config.retriever
        dense = bm25 = None
        if kind in ("dense", "hybrid"):
            dense = self.dense_many(self.embedder.encode_queries(list(questions)), depth)
        if kind in ("bm25", "hybrid"):
            bm25 = [self.bm25_search(q, depth) for q in questions]
        out = []
        for i, question in enumerate(questions):
            if kind == "hybrid":
                hits = self._rrf([dense[i], bm25[i]], depth)
            else:
                hits = (dense or bm25)[i]
            if self.config.reranker:
                hits = self._rerank(question, hits, k)
            out.append(hits[:k])
            if progress and ((i + 1) % 25 == 0 or i + 1 == len(questions)):
                progress(i + 1, len(questions), "searching")
        return out

    def search(self, question: str, k: int | None = None) -> list[DocHit]:
        """Ranked documents for one question."""
        return self.search_many([question], k)[0]


def open_retriever(corpus: Corpus | str | Path, config: RunConfig = RunConfig(), *,
                   progress: Progress | None = None, cache_root: Path | None = None) -> Retriever:
    """Load the corpus (if given a path) and build or reuse its embeddings and index."""
    if not isinstance(corpus, Corpus):
        corpus = load_corpus(corpus)
    return Retriever(corpus, config, progress=progress, cache_root=cache_root)


def run_from_hits(hits_per_query: Mapping[str, Sequence[DocHit]]) -> dict[str, dict[str, float]]:
    """The plain run shape: query_id -> {doc_id: score}."""
    return {qid: {h.doc_id: h.score for h in hits} for qid, hits in hits_per_query.items()}


def retrieve_run(corpus: Corpus | str | Path, config: RunConfig, queries: Mapping[str, str], *,
                 progress: Progress | None = None, retriever: Retriever | None = None) -> dict[str, dict[str, float]]:
    """Run the live pipeline for every query: query_id -> {doc_id: score}, top config.k each."""
    retriever = retriever or open_retriever(corpus, config, progress=progress)
    ids = list(queries)
    hits = retriever.search_many([queries[q] for q in ids], config.k, progress=progress)
    return run_from_hits(dict(zip(ids, hits)))
