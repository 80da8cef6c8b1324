"""What the judging model reads about each document for one question: its text and how every
retriever ranked it over the whole corpus.

BMI's recipe (Cormack & Grossman, the baseline of the TREC Total Recall track) learns from the
document text alone; here each retriever's score and rank over the whole corpus are columns too,
so before any grade the order is close to the retrievers' own and after a few grades the text
takes over. Scores come from the core's Retriever (its cached vectors and BM25 index), so the
candidates the app pools and the documents "find more" brings in are ranked by the same numbers.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labeler.corpus import Corpus

if TYPE_CHECKING:  # pragma: no cover - sparse matrices and the retrieval stack load lazily
    from scipy.sparse import csr_matrix

    from labeler.retrieval import Retriever


@dataclass(frozen=True)
class CorpusText:
    """Tf-idf rows of every document (title + text), L2-normalized, and the vectorizer that made them."""

    doc_ids: tuple[str, ...]
    matrix: "csr_matrix"
    vectorizer: object

    @classmethod
    def of(cls, corpus: Corpus) -> "CorpusText":
        """Fit tf-idf on the corpus (sublinear tf, English stop words: BMI's features)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=1, dtype=np.float32)
        texts = [f"{d.title}\n{d.text}" for d in corpus.documents]
        matrix = vectorizer.fit_transform(texts).tocsr()
        return cls(tuple(d.doc_id for d in corpus.documents), matrix, vectorizer)

    def transform(self, text: str) -> "csr_matrix":
        """The tf-idf row of a text not in the corpus (the question itself)."""
        return self.vectorizer.transform([text]).tocsr()

    @functools.cached_property
    def position(self) -> dict[str, int]:
        """doc_id -> row."""
        return {d: i for i, d in enumerate(self.doc_ids)}


def rank_of(scores: np.ndarray) -> np.ndarray:
    """1-based rank of each position by score descending (ties by position, so it is deterministic)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    ranks = np.empty(len(scores), dtype=np.int64)
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def rank_feature(ranks: np.ndarray, n: int) -> np.ndarray:
    """1 at rank 1 falling to 0 at rank n on a log scale: the top of a ranking matters, its tail little."""
    return (1.0 - np.log(ranks) / np.log(max(n, 2))).astype(np.float32)


RRF_K = 60  # reciprocal-rank fusion's constant (Cormack, Clarke & Buettcher 2009)


@dataclass(frozen=True)
class QuestionFeatures:
    """For one question: the text of every document plus per-retriever score and rank columns, and
    (when the dense index is built) every document's embedding.

    `scores[name]` holds one score per corpus document (position order); the question's own row
    (`query_row`, `query_vector`) is BMI's synthetic relevant document, given the best value of every
    column. `vectors` (n_docs x dim, unit rows) and `query_vector` are None when opened BM25-only.
    """

    question: str
    text: CorpusText
    scores: Mapping[str, np.ndarray]
    vectors: np.ndarray | None = None
    query_vector: np.ndarray | None = None

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return self.text.doc_ids

    @functools.cached_property
    def columns(self) -> np.ndarray:
        """Dense (n_docs, 2 * retrievers) block: each score scaled to [0, 1] and its rank feature."""
        n = len(self.doc_ids)
        cols = []
        for name in sorted(self.scores):
            s = np.asarray(self.scores[name], dtype=np.float32)
            lo, hi = float(s.min()), float(s.max())
            cols.append((s - lo) / (hi - lo) if hi > lo else np.zeros(n, dtype=np.float32))
            cols.append(rank_feature(rank_of(s), n))
        return np.stack(cols, axis=1) if cols else np.zeros((n, 0), dtype=np.float32)

    @functools.cached_property
    def matrix(self) -> "csr_matrix":
        """Every document's feature row: tf-idf then the retriever columns."""
        from scipy.sparse import csr_matrix, hstack

        return hstack([self.text.matrix, csr_matrix(self.columns)], format="csr")

    @functools.cached_property
    def query_row(self) -> "csr_matrix":
        """The question as a document: its tf-idf, ranked first by every retriever."""
        from scipy.sparse import csr_matrix, hstack

        best = np.ones((1, self.columns.shape[1]), dtype=np.float32)
        return hstack([self.text.transform(self.question), csr_matrix(best)], format="csr")

    def prior_scores(self) -> np.ndarray:
        """Each document by the retrievers alone, the order before any relevant grade: reciprocal-rank
        fusion, sum over retrievers of 1 / (60 + rank). Measured on CISI, its first document is
        relevant for 42 of 76 questions, the pool's first (dense #1) for 33."""
        return self._prior

    @functools.cached_property
    def _prior(self) -> np.ndarray:
        total = np.zeros(len(self.doc_ids))
        for name in sorted(self.scores):
            total += 1.0 / (RRF_K + rank_of(np.asarray(self.scores[name])))
        return total

    def prior_order(self) -> list[int]:
        """Positions by `prior_scores`, ties in corpus order."""
        total = self.prior_scores()
        return np.lexsort((np.arange(len(total)), -total)).tolist()


def doc_scores(chunk_scores: np.ndarray, chunk_doc: np.ndarray, n_docs: int) -> np.ndarray:
    """A document's score is its best chunk's (as in every ranking of the core)."""
    out = np.full(n_docs, -np.inf, dtype=np.float32)
    np.maximum.at(out, chunk_doc, chunk_scores.astype(np.float32))
    out[~np.isfinite(out)] = 0.0
    return out


def document_vectors(chunk_vectors: np.ndarray, chunk_doc: np.ndarray, n_docs: int) -> np.ndarray:
    """One unit vector per document: the normalized sum of its chunks' vectors (a document without
    chunks gets zeros)."""
    out = np.zeros((n_docs, chunk_vectors.shape[1]), dtype=np.float32)
    np.add.at(out, chunk_doc, chunk_vectors.astype(np.float32))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def retriever_scores(retriever: "Retriever", questions: Sequence[str], *,
                     dense: bool = True, query_vectors: np.ndarray | None = None) -> list[dict[str, np.ndarray]]:
    """Dense (cosine of the best chunk) and BM25 scores of every document, per question
    (`query_vectors`: the questions' embeddings when the caller has them already)."""
    n = len(retriever.corpus)
    out: list[dict[str, np.ndarray]] = [{} for _ in questions]
    if dense:
        vectors = retriever.vectors
        if query_vectors is None:
            query_vectors = retriever.embedder.encode_queries(list(questions))
        for i, qv in enumerate(query_vectors):
            out[i]["dense"] = doc_scores(vectors @ qv, retriever.chunk_doc, n)
    for i, q in enumerate(questions):
        out[i]["bm25"] = doc_scores(retriever.bm25.scores(q), retriever.chunk_doc, n)
    return out


def question_features(text: CorpusText, question: str, scores: Mapping[str, np.ndarray],
                      extra: Mapping[str, Mapping[str, float]] = {}, *, vectors: np.ndarray | None = None,
                      query_vector: np.ndarray | None = None) -> QuestionFeatures:
    """Features of one question; `extra` adds a saved system's ranking (doc_id -> score; unranked: below
    all); `vectors` (`document_vectors`) and the question's `query_vector` add the embeddings."""
    columns = dict(scores)
    for name, ranking in extra.items():
        s = np.full(len(text.doc_ids), min(ranking.values(), default=0.0) - 1.0, dtype=np.float32)
        for doc_id, score in ranking.items():
            if doc_id in text.position:
                s[text.position[doc_id]] = score
        columns[name] = s
    if vectors is None or query_vector is None:
        return QuestionFeatures(question, text, columns)
    return QuestionFeatures(question, text, columns, vectors, np.asarray(query_vector, dtype=np.float32))
