"""`BuiltinSystem`: the labeler's own pipeline (a RunConfig over a corpus) as a System."""
from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labeler.config import RunConfig
from labeler.corpus import Corpus
from labeler.progress import Progress
from labeler.systems.base import Hit, System, SystemRun, check_k

if TYPE_CHECKING:  # pragma: no cover
    from labeler.retrieval import Retriever


class BuiltinSystem(System):
    """The built-in retrieval pipeline: `open_retriever(corpus, config)`, searched with the config's params.

    The retriever is opened on first search (or pass one already open, e.g. the app's cached one);
    `k` of each call replaces the config's depth.
    """

    kind = "builtin"

    def __init__(self, corpus: Corpus | str | Path, config: RunConfig = RunConfig(), *, retriever=None,
                 name: str | None = None, cache_root: Path | None = None, progress: Progress | None = None) -> None:
        self.corpus = corpus
        self.config = config
        self.name = name or f"builtin-{config.config_hash}"
        self._retriever = retriever
        self._cache_root = cache_root
        self._progress = progress
        self._lock = threading.Lock()

    @property
    def retriever(self) -> "Retriever":
        """The Retriever (opened, embedding if needed, on first use)."""
        with self._lock:
            if self._retriever is None:
                from labeler.retrieval import open_retriever

                self._retriever = open_retriever(self.corpus, self.config, progress=self._progress,
                                                 cache_root=self._cache_root)
            return self._retriever

    def describe(self) -> dict[str, Any]:
        """Kind, name, corpus path (and fingerprint once opened), the run config and its hash."""
        corpus = self.corpus.source if isinstance(self.corpus, Corpus) else str(self.corpus)
        out = {"kind": self.kind, "name": self.name, "corpus": corpus, "config": self.config.to_dict(),
               "config_hash": self.config.config_hash}
        if self._retriever is not None:
            out["corpus_fingerprint"] = self._retriever.corpus.fingerprint
        return out

    def search(self, question: str, k: int) -> list[Hit]:
        """Top k documents by the pipeline (a document scores its best chunk)."""
        params = self.config.search_params().with_(k=check_k(k))
        return [Hit(h.doc_id, h.score) for h in self.retriever.search(question, params)]

    def search_many(self, questions: Mapping[str, str], k: int, *, progress: Progress | None = None) -> SystemRun:
        """Every question in one batch (queries are encoded together); the pipeline never fails one."""
        params = self.config.search_params().with_(k=check_k(k))
        retriever = self.retriever
        t0 = time.perf_counter()
        ids = list(questions)
        ranked = retriever.search_many([questions[q] for q in ids], params, progress=progress)
        hits = {q: tuple(Hit(h.doc_id, h.score) for h in doc_hits) for q, doc_hits in zip(ids, ranked)}
        return SystemRun(self.describe(), k, tuple(ids), hits, {}, len(ids), time.perf_counter() - t0)
