"""The Retriever: one corpus, one build (chunks, vectors, FAISS, BM25), searched with any SearchParams.

A Retriever is built from `BuildConfig` alone, once per (corpus, build), and is then only read
(its lazily built parts are filled under a lock), so the app shares it between sessions with
`st.cache_resource`. Everything a search varies — depth, mode, filters, fusion, reranker,
efSearch/nprobe — is a `SearchParams` argument, so changing it never re-chunks or reloads.
"""
from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from labeler.chunking import Chunk, chunk_corpus, render
from labeler.config import BuildConfig, RunConfig, SearchParams
from labeler.corpus import Corpus, load_corpus
from labeler.embedding import Embedder, model_identity
from labeler.paths import cache_dir
from labeler.progress import Progress
from labeler.retrieval.cache import DenseCache, bm25_folder, load_bm25, save_bm25
from labeler.retrieval.fusion import rrf
from labeler.retrieval.hits import DocHit, ranked
from labeler.retrieval.rerank import rerank

_FILTER_CACHE_SIZE = 64  # filter sets are per search; keep the allowed-chunk arrays of the recent ones


@dataclass
class OpenStats:
    """What building cost: whether it embedded, how often each step ran, and how long each took.

    `steps` counts chunk, load_vectors, embed, load_index, build_index, load_bm25, build_bm25:
    searching never adds to it.
    """

    embedded: bool = False
    index_built: bool = False
    seconds: dict[str, float] = field(default_factory=dict)
    steps: Counter = field(default_factory=Counter)

    def record(self, step: str, t0: float) -> None:
        """Count one run of `step`, started at perf_counter `t0`."""
        self.steps[step] += 1
        self.seconds[step] = time.perf_counter() - t0


class Retriever:
    """Dense, BM25, hybrid and reranked search over one corpus with one BuildConfig."""

    def __init__(self, corpus: Corpus, config: BuildConfig = BuildConfig(), *, embedder: Embedder | None = None,
                 cache_root: Path | None = None) -> None:
        if not isinstance(config, BuildConfig):
            raise TypeError("Retriever takes a BuildConfig (RunConfig.build()); use open_retriever for a RunConfig")
        self.corpus = corpus
        self.config = config
        self.embedder = embedder or Embedder(config.model)
        self.stats = OpenStats()
        self.cache_root = cache_root or cache_dir()
        t0 = time.perf_counter()
        self.chunks: list[Chunk] = chunk_corpus(corpus, strategy=config.chunking, size=config.chunk_size,
                                                overlap=config.chunk_overlap, unit=config.chunk_unit)
        doc_pos = {d.doc_id: i for i, d in enumerate(corpus.documents)}
        self.chunk_doc = np.fromiter((doc_pos[c.doc_id] for c in self.chunks), dtype=np.int64, count=len(self.chunks))
        self.max_chunks_per_doc = int(np.bincount(self.chunk_doc).max()) if self.chunks else 1
        self.texts = [render(config.template, corpus.documents[p].title, c.text)
                      for p, c in zip(self.chunk_doc, self.chunks)]
        self.stats.record("chunk", t0)
        self._vectors: np.ndarray | None = None
        self._index = None
        self._bm25 = None
        self._build_lock = threading.RLock()
        self._filter_cache: dict[tuple, np.ndarray] = {}
        self._filter_lock = threading.Lock()

    # -- building -------------------------------------------------------------------------
    def prepare(self, mode: str = "dense", *, progress: Progress | None = None) -> "Retriever":
        """Build or load now (with progress) what `mode` searches with; a BM25-only mode never embeds."""
        with self._build_lock:
            # BM25 first: it takes seconds where embedding takes minutes, so a corpus it refuses
            # fails before the long part.
            if mode in ("bm25", "hybrid") and self._bm25 is None:
                self._bm25 = self._load_or_build_bm25()
            if mode in ("dense", "hybrid"):
                if self._vectors is None:
                    self._vectors = self._load_or_embed(progress)
                if self._index is None:
                    self._index = self._load_or_build_index()
        return self

    def ready(self, mode: str = "dense") -> bool:
        """Whether everything `mode` searches with is built (so `prepare` would do nothing)."""
        dense = self._vectors is not None and self._index is not None
        return {"dense": dense, "bm25": self._bm25 is not None, "hybrid": dense and self._bm25 is not None}[mode]

    @functools.cached_property
    def dense_cache(self) -> DenseCache:
        """Where the vectors and FAISS indexes of this build live on disk."""
        identity = getattr(self.embedder, "identity", None) or model_identity(self.embedder.name)
        return DenseCache.at(self.cache_root, self.config, identity, self.corpus.fingerprint)

    @property
    def vectors(self) -> np.ndarray:
        """Normalized chunk vectors (loaded from the cache or embedded on first use)."""
        return self.prepare("dense")._vectors

    @property
    def index(self):
        """The FAISS index over `vectors`."""
        return self.prepare("dense")._index

    @property
    def bm25(self):
        """BM25 over the same chunk texts; built on first use and cached on disk."""
        return self.prepare("bm25")._bm25

    def _load_or_embed(self, progress: Progress | None) -> np.ndarray:
        t0 = time.perf_counter()
        vectors = self.dense_cache.load_vectors(len(self.chunks))
        if vectors is not None:
            self.stats.record("load_vectors", t0)
            return vectors
        vectors = self.embedder.encode(self.texts, progress=progress)
        self.dense_cache.save_vectors(vectors, n_docs=len(self.corpus), source=self.corpus.source)
        self.stats.embedded = True
        self.stats.record("embed", t0)
        return vectors

    def _load_or_build_index(self):
        from labeler.index import build_index

        t0 = time.perf_counter()
        index = self.dense_cache.load_index(self.config, len(self.chunks))
        if index is not None:
            self.stats.record("load_index", t0)
            return index
        index = build_index(self._vectors, self.config)
        self.dense_cache.save_index(self.config, index)
        self.stats.index_built = True
        self.stats.record("build_index", t0)
        return index

    def _load_or_build_bm25(self):
        from labeler.lexical import BM25Index

        t0 = time.perf_counter()
        folder = bm25_folder(self.cache_root, self.config, self.corpus.fingerprint)
        index = load_bm25(folder)
        if index is not None:
            self.stats.record("load_bm25", t0)
            return index
        index = BM25Index.build(self.texts, source=self.corpus.source or None)
        save_bm25(index, folder)
        self.stats.record("build_bm25", t0)
        return index

    @functools.cached_property
    def chunk_position(self) -> dict[str, int]:
        """chunk_id -> position in `chunks`."""
        return {c.chunk_id: i for i, c in enumerate(self.chunks)}

    def chunk_text(self, hit: DocHit) -> str:
        """The rendered text of a hit's best chunk (what was embedded and what a reranker reads)."""
        return self.texts[self.chunk_position[hit.chunk_id]]

    # -- info -----------------------------------------------------------------------------
    @property
    def info(self) -> dict:
        """Counts and settings to show a user."""
        return {"documents": len(self.corpus), "chunks": len(self.chunks), "model": self.config.model,
                "dimension": int(self._vectors.shape[1]) if self._vectors is not None else None,
                "index": self.config.index if self._index is not None else "none (BM25 only)",
                "cache": str(self.dense_cache.folder), "corpus_fingerprint": self.corpus.fingerprint}

    # -- filtering ------------------------------------------------------------------------
    def allowed_chunks(self, filters: Sequence[tuple[str, str]] = ()) -> np.ndarray | None:
        """Chunk positions whose document matches every filter key (values of one key OR-ed); None: all."""
        filters = tuple(sorted(filters))
        if not filters:
            return None
        with self._filter_lock:
            if filters not in self._filter_cache:
                wanted: dict[str, set[str]] = {}
                for key, value in filters:
                    wanted.setdefault(key, set()).add(value)
                ok_docs = np.fromiter(
                    (all(str(d.metadata.get(k)) in vs for k, vs in wanted.items()) for d in self.corpus.documents),
                    dtype=bool, count=len(self.corpus))
                if len(self._filter_cache) >= _FILTER_CACHE_SIZE:
                    self._filter_cache.pop(next(iter(self._filter_cache)))
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
        return ranked([(d, s, c) for d, (s, c) in best.items()], k)

    def dense_many(self, query_vectors: np.ndarray, params: SearchParams = SearchParams()) -> list[list[DocHit]]:
        """Top params.k documents per query vector by their best chunk's inner product, filtered."""
        from labeler.index import search

        allowed = self.allowed_chunks(params.filters)
        if allowed is not None and len(allowed) == 0:
            return [[] for _ in range(len(query_vectors))]
        # k documents are always among the top k * (max chunks per document) chunks.
        fetch = params.k * self.max_chunks_per_doc
        scores, positions = search(self.index, query_vectors, fetch, index_type=self.config.index,
                                   ef_search=params.ef_search, nprobe=params.nprobe, allowed=allowed)
        return [self._to_docs(s, p, params.k) for s, p in zip(scores, positions)]

    def bm25_many(self, questions: Sequence[str], params: SearchParams = SearchParams()) -> list[list[DocHit]]:
        """Top params.k documents per question by BM25 of their best chunk, filtered."""
        allowed = self.allowed_chunks(params.filters)
        fetch = params.k * self.max_chunks_per_doc
        return [self._to_docs(*self.bm25.search(q, fetch, allowed), params.k) for q in questions]

    def search_many(self, questions: Sequence[str], params: SearchParams = SearchParams(), *,
                    progress: Progress | None = None) -> list[list[DocHit]]:
        """Ranked documents for each question, as `params` say (dense/bm25/hybrid, filters, rerank)."""
        questions = list(questions)
        k = params.k
        # The reranker reorders its top N, so at least N come from the first stage.
        wide = params.with_(k=max(k, params.rerank_top)) if params.reranker else params
        dense = lexical = None
        if params.mode in ("dense", "hybrid"):
            dense = self.dense_many(self.embedder.encode_queries(questions), wide)
        if params.mode in ("bm25", "hybrid"):
            lexical = self.bm25_many(questions, wide)
        out = []
        for i, question in enumerate(questions):
            if params.mode == "hybrid":
                hits = rrf([dense[i], lexical[i]], wide.k, params.rrf_k)
            else:
                hits = dense[i] if dense is not None else lexical[i]
            if params.reranker:
                hits = rerank(question, hits, self.chunk_text, model=params.reranker, top=params.rerank_top, k=k)
            out.append(hits[:k])
            if progress and ((i + 1) % 25 == 0 or i + 1 == len(questions)):
                progress(i + 1, len(questions), "searching")
        return out

    def search(self, question: str, params: SearchParams = SearchParams()) -> list[DocHit]:
        """Ranked documents for one question."""
        return self.search_many([question], params)[0]


def open_retriever(corpus: Corpus | str | Path, config: RunConfig | BuildConfig = RunConfig(), *,
                   progress: Progress | None = None, cache_root: Path | None = None,
                   embedder: Embedder | None = None) -> Retriever:
    """Load the corpus (if given a path) and build or load, with progress, what `config` searches with.

    Only the build half of a RunConfig is used to build; its retriever mode says what to prepare
    now (a BuildConfig prepares the dense side). Search with `config.search_params()`.
    """
    if not isinstance(corpus, Corpus):
        corpus = load_corpus(corpus)
    if isinstance(config, RunConfig):
        build, mode = config.build(), config.retriever
    else:
        build, mode = config, "dense"
    return Retriever(corpus, build, embedder=embedder, cache_root=cache_root).prepare(mode, progress=progress)


def retrieve_run(retriever: Retriever, queries: Mapping[str, str], params: SearchParams, *,
                 progress: Progress | None = None) -> dict[str, dict[str, float]]:
    """Search every query: the plain run shape, query_id -> {doc_id: score}, top params.k each."""
    ids = list(queries)
    hits = retriever.search_many([queries[q] for q in ids], params, progress=progress)
    return {qid: {h.doc_id: h.score for h in ranked_hits} for qid, ranked_hits in zip(ids, hits)}
