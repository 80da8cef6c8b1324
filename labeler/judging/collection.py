"""A collection with full judgments, opened for the simulator: corpus, questions, qrels, and per
question the app's own pool and the features the active model reads.

The pool comes from `labeler.candidates.pool_candidates` over the core's Retriever (the same
cached embeddings and BM25 index as the app), so `pool` here is exactly what the Label page shows.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from labeler.candidates import pool_candidates
from labeler.config import RunConfig
from labeler.corpus import load_corpus
from labeler.errors import ConfigError, InputError
from labeler.golden import GoldenSet
from labeler.golden.beir import read_beir_golden
from labeler.jsonlines import path_kind
from labeler.judging.features import (CorpusText, QuestionFeatures, document_vectors, question_features,
                                      retriever_scores)
from labeler.progress import Progress


@dataclass
class SimulationCollection:
    """One BEIR folder opened once; pools and features are computed per question on first use."""

    folder: Path
    golden: GoldenSet
    retriever: object

    @functools.cached_property
    def text(self) -> CorpusText:
        """Tf-idf of the corpus, shared by every question."""
        return CorpusText.of(self.retriever.corpus)

    @property
    def query_ids(self) -> list[str]:
        return [q.query_id for q in self.golden.queries]

    @functools.cached_property
    def qrels(self) -> dict[str, dict[str, int]]:
        return self.golden.qrels()

    @functools.cached_property
    def _dense(self) -> bool:
        return self.retriever.ready("dense")  # opened BM25-only: the model reads BM25 and text alone

    @functools.cached_property
    def _query_vectors(self) -> dict[str, np.ndarray]:
        if not self._dense:
            return {}
        questions = self.golden.questions()
        vectors = self.retriever.embedder.encode_queries([questions[q] for q in self.query_ids])
        return dict(zip(self.query_ids, vectors))

    @functools.cached_property
    def _vectors(self) -> np.ndarray | None:
        r = self.retriever
        return document_vectors(r.vectors, r.chunk_doc, len(r.corpus)) if self._dense else None

    @functools.cached_property
    def _scores(self) -> dict[str, dict]:
        questions = self.golden.questions()
        ids = self.query_ids
        query_vectors = np.stack([self._query_vectors[q] for q in ids]) if self._dense else None
        return dict(zip(ids, retriever_scores(self.retriever, [questions[q] for q in ids], dense=self._dense,
                                              query_vectors=query_vectors)))

    def features(self, query_id: str, extra: Mapping[str, Mapping[str, float]] = {}) -> QuestionFeatures:
        """What the active model reads for one question."""
        return question_features(self.text, self.golden.questions()[query_id], self._scores[query_id], extra,
                                 vectors=self._vectors, query_vector=self._query_vectors.get(query_id))

    @functools.cached_property
    def pools(self) -> dict[str, list[str]]:
        """query_id -> the app's pool (dense top 10 + BM25 top 10), in the Label page's order."""
        questions = self.golden.questions()
        return {q: [c.doc_id for c in pool_candidates(self.retriever, questions[q])] for q in self.query_ids}


def require_relevant(qrels: Mapping[str, Mapping[str, int]], min_grade: int, folder: str | Path) -> None:
    """ConfigError when no document in the qrels has grade >= `min_grade`: nothing is there to find."""
    if not any(g >= min_grade for grades in qrels.values() for g in grades.values()):
        top = max((g for grades in qrels.values() for g in grades.values()), default=None)
        raise ConfigError(f"no document in the qrels has grade >= {min_grade} (the highest is {top}): nothing is "
                          "relevant, so there is nothing to find", path=folder,
                          hint="lower --min-grade (relevant means grade >= it; 1 by default).")


def open_collection(folder: str | Path, *, keep_scale: bool = False, progress: Progress | None = None,
                    config: RunConfig = RunConfig(mode="hybrid"), embedder=None,
                    min_grade: int | None = None) -> SimulationCollection:
    """Open a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) with dense and BM25 built or loaded;
    with `min_grade`, refused (`require_relevant`) before anything is embedded when nothing is relevant."""
    from labeler.retrieval import open_retriever

    folder = Path(folder).expanduser()
    if path_kind(folder) != "folder" or path_kind(folder / "corpus.jsonl") != "file":
        raise InputError("not a BEIR folder with a corpus: corpus.jsonl is missing", path=folder,
                         hint="simulate needs corpus.jsonl, queries.jsonl and qrels/test.tsv in one folder.")
    corpus = load_corpus(folder)
    golden = read_beir_golden(folder, keep_scale=keep_scale, doc_ids={d.doc_id for d in corpus.documents})
    if min_grade is not None:
        require_relevant(golden.qrels(), min_grade, folder)
    return SimulationCollection(folder, golden, open_retriever(corpus, config, progress=progress, embedder=embedder))
