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

from labeler.config import BuildConfig, RunConfig, SearchParams
from labeler.corpus import Corpus, load_corpus
from labeler.paths import cache_dir
from labeler.progress import Progress
from labeler.retrieval.cache import IndexCache, bm25_folder, legacy_vectors, load_bm25, logger, save_bm25
from labeler.retrieval.chunking import Chunk, chunk_corpus, render
from labeler.retrieval.embedding import Embedder, model_identity
from labeler.retrieval.fusion import rrf
from labeler.retrieval.hits import DocHit, ranked
from labeler.retrieval.rerank import rerank
from labeler.retrieval.vector_store import VectorStore, keys_digest, text_keys

_FILTER_CACHE_SIZE = 64  # filter sets are per search; keep the allowed-chunk arrays of the recent ones


@dataclass
class OpenStats:
    """What building cost: how many chunks it embedded and reused, how often each step ran, how long each took.

    `steps` counts chunk, load_vectors (some vectors came from the cache), embed (some chunks were
    embedded), load_index, build_index, load_bm25, build_bm25: searching never adds to it.
    `embedded_chunks` counts the texts sent to the model (a text several new chunks share is
    embedded once); `reused_chunks` the chunks whose vector came from the cache.
    """

    embedded: bool = False
    index_built: bool = False
    embedded_chunks: int = 0
    reused_chunks: int = 0
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
        self._model_decides = False
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
    def model_identity(self) -> str:
        """The embedding model's cache identity (its name and a hash of its files)."""
        return getattr(self.embedder, "identity", None) or model_identity(self.embedder.name)

    @functools.cached_property
    def vector_store(self) -> VectorStore:
        """The model's store of chunk vectors, shared with every corpus embedded with it."""
        return VectorStore.at(self.cache_root, self.model_identity)

    @functools.cached_property
    def text_keys(self) -> np.ndarray:
        """The vector-store key of each chunk: the sha256 of the text embedded."""
        return text_keys(self.texts)

    @functools.cached_property
    def index_cache(self) -> IndexCache:
        """Where the FAISS index over these chunk vectors, in this order, lives on disk."""
        return IndexCache.at(self.cache_root, self.config, self.model_identity, keys_digest(self.text_keys))

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
        # Unless the model is loaded anyway, model.json stands in for its dimension (a cached open
        # then never loads it); once queries have shown the record wrong, the model decides.
        loaded = self._model_decides or getattr(self.embedder, "loaded", True)
        vectors, found = self.vector_store.lookup(self.text_keys, model_dimension=lambda: self.embedder.dimension,
                                                  loaded=loaded)
        if not found.all():
            vectors, found = self._adopt_legacy(vectors, found)
        self.stats.reused_chunks = int(found.sum())
        if self.stats.reused_chunks:
            self.stats.record("load_vectors", t0)
        if found.all():
            return vectors
        t0 = time.perf_counter()
        missing = np.flatnonzero(~found)
        fresh = self._embed(missing, progress)
        if vectors is not None and fresh.shape[1] != vectors.shape[1]:
            # model.json stood in for the model and was wrong (a hub model changed under one name):
            # nothing cached is of this model's dimension.
            logger.warning("cached vectors have dimension %d, the model's is %d: embedding every chunk again",
                           vectors.shape[1], fresh.shape[1])
            vectors, rest = None, np.flatnonzero(found)
            self.stats.reused_chunks = 0
        else:
            rest = np.empty(0, dtype=np.int64)
        if vectors is None:
            vectors = np.empty((len(self.texts), fresh.shape[1]), dtype=np.float32)
        vectors[missing] = fresh
        if len(rest):
            vectors[rest] = self._embed(rest, progress)
        self.stats.embedded = True
        self.stats.record("embed", t0)
        return vectors

    def _embed(self, positions: np.ndarray, progress: Progress | None) -> np.ndarray:
        """Vectors of the chunks at `positions`, each distinct text embedded once and added to the store."""
        keys, first, inverse = np.unique(self.text_keys[positions], return_index=True, return_inverse=True)
        if progress:  # said before the model loads (seconds): the Label page goes on with BM25 meanwhile
            progress(0, len(keys), "embedding")
        fresh = self.embedder.encode([self.texts[i] for i in positions[first].tolist()], progress=progress)
        self.vector_store.add(keys, fresh)
        self.stats.embedded_chunks += len(keys)
        return fresh[inverse.reshape(-1)]

    def _adopt_legacy(self, vectors: np.ndarray | None, found: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """Take this corpus's vectors from the pre-store cache layout, if it has them, into the store."""
        old = legacy_vectors(self.cache_root, self.config, self.model_identity, self.corpus.fingerprint,
                             len(self.texts), None if vectors is None else vectors.shape[1])
        if old is None:
            return vectors, found
        missing = np.flatnonzero(~found)
        keys, first = np.unique(self.text_keys[missing], return_index=True)
        self.vector_store.add(keys, old[missing[first]])
        logger.info("adopted %d vectors from the old cache layout into %s", len(keys), self.vector_store.folder)
        return old, np.ones(len(found), dtype=bool)

    def _load_or_build_index(self):
        from labeler.retrieval.index import build_index

        t0 = time.perf_counter()
        index = self.index_cache.load(len(self.chunks), int(self._vectors.shape[1]))
        if index is not None:
            self.stats.record("load_index", t0)
            return index
        index = build_index(self._vectors, self.config)
        self.index_cache.save(index)
        self.stats.index_built = True
        self.stats.record("build_index", t0)
        return index

    def _heal_dimension(self, dim: int) -> None:
        """Queries of another dimension than the index: the cache spoke for a model that changed; rebuild."""
        with self._build_lock:
            if self._index is not None and self._index.d != dim:
                logger.warning("the index has dimension %d, the model's queries %d: rebuilding from the model",
                               self._index.d, dim)
                self._vectors = self._index = None
                self._model_decides = True
                self.prepare("dense")

    def _load_or_build_bm25(self):
        from labeler.retrieval.lexical import BM25Index

        t0 = time.perf_counter()
        folder = bm25_folder(self.cache_root, self.config, self.corpus.fingerprint)
        index = load_bm25(folder, len(self.chunks))
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
                "cache": str(self.cache_root), "corpus_fingerprint": self.corpus.fingerprint}

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
        from labeler.retrieval.index import search

        allowed = self.allowed_chunks(params.filters)
        if allowed is not None and len(allowed) == 0:
            return [[] for _ in range(len(query_vectors))]
        if query_vectors.shape[1] != self.index.d:
            self._heal_dimension(query_vectors.shape[1])
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
        build, mode = config.build(), config.mode
    else:
        build, mode = config, "dense"
    return Retriever(corpus, build, embedder=embedder, cache_root=cache_root).prepare(mode, progress=progress)


def retrieve_run(retriever: Retriever, queries: Mapping[str, str], params: SearchParams, *,
                 progress: Progress | None = None) -> dict[str, dict[str, float]]:
    """Search every query: the plain run shape, query_id -> {doc_id: score}, top params.k each."""
    ids = list(queries)
    hits = retriever.search_many([queries[q] for q in ids], params, progress=progress)
    return {qid: {h.doc_id: h.score for h in ranked_hits} for qid, ranked_hits in zip(ids, hits)}
