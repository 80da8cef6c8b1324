"""Most likely relevant first: a per-question model that learns from this question's grades.

Continuous active learning after BMI (Cormack & Grossman, the TREC Total Recall baseline): a
logistic regression is fitted on the grades given so far (relevant = grade >= `min_grade`), the
question itself as one more relevant document, and a fresh random sample of unjudged documents
taken as not relevant; the unjudged documents are then ordered by its score. It is fitted again
after every grade. Only grades already given are read, so an order never depends on a grade
nobody gave (the simulator's oracle checks this).

Three changes to BMI, each measured on CISI (bench/bench_judging_cost.py): until a grade says
relevant the order is the retrievers' own (reciprocal-rank fusion, `QuestionFeatures.prior_scores`),
since a model fitted on the question alone ordered worse than the pool; the documents'
embeddings are features beside their tf-idf; and the fit is weakly regularized (C = 10, not
liblinear's default 1: it found more relevant documents at the pool's budget on CISI and Cranfield). Tried and
measured worse or no better (README): fusing the model's rank with the retrievers', Rocchio feedback on
tf-idf and embeddings, waiting for a second relevant grade, heavier embeddings, 50 or 200
pseudo-negatives, and a heavier or lighter question row. The fit runs in the span of its ~200 training rows
(`labeler.judging.logistic`), so a re-order costs milliseconds whatever the tf-idf width.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from labeler.judging.features import QuestionFeatures
from labeler.judging.logistic import fit_dual, one_blas_thread

PSEUDO_NEGATIVES = 100  # BMI's number of random unjudged documents presumed not relevant
REGULARIZATION = 10.0  # logistic regression's C (inverse L2 strength); 10 beat 1 and 3 on CISI and Cranfield (README)
DENSE_WEIGHT = 1.0  # the embeddings' scale beside the unit-length tf-idf rows
FIT_TOLERANCE = 1e-6  # relative objective change that ends Newton: the order no longer moves (~6 steps)


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


class ActiveOrder:
    """Orders one question's unjudged documents by a model refitted on its grades (see module docstring).

    `order(judged)` ranks every unjudged document of the corpus ("find more" reads its head);
    `order(judged, candidates=...)` ranks only those candidates; `next(judged)` is the first.
    """

    def __init__(self, features: QuestionFeatures, *, seed: str = "", min_grade: int = 1,
                 pseudo_negatives: int = PSEUDO_NEGATIVES, regularization: float = REGULARIZATION,
                 dense_weight: float = DENSE_WEIGHT) -> None:
        self.features = features
        self.seed = seed or features.question
        self.min_grade = min_grade
        self.pseudo_negatives = pseudo_negatives
        self.regularization = regularization
        self.dense_weight = dense_weight if features.vectors is not None else 0.0
        self._position = features.text.position

    def training_rows(self, judged: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """The corpus positions the model is fitted on (the judged documents, then the pseudo-negatives
        drawn for this many grades) and the labels, the question's own 1 first."""
        judged_pos = [self._position[d] for d in judged if d in self._position]
        labels = [int(g >= self.min_grade) for d, g in judged.items() if d in self._position]
        unjudged_mask = np.ones(len(self.features.doc_ids), dtype=bool)
        unjudged_mask[judged_pos] = False
        pool = np.flatnonzero(unjudged_mask)
        rng = np.random.default_rng(_seed(self.seed, len(judged)))
        negatives = rng.choice(pool, size=min(self.pseudo_negatives, len(pool)), replace=False) if len(pool) else pool
        rows = np.concatenate([np.asarray(judged_pos, dtype=np.int64), negatives.astype(np.int64)])
        return rows, np.concatenate([[1], labels, np.zeros(len(negatives), dtype=int)])

    def scores(self, judged: Mapping[str, int], positions: np.ndarray | None = None) -> np.ndarray:
        """The model's score of the documents at `positions` (all when None), fitted on `judged`."""
        if not any(g >= self.min_grade for d, g in judged.items() if d in self._position):
            prior = self.features.prior_scores()  # no relevant grade yet: the retrievers' order
            return prior if positions is None else prior[positions]
        return self.fitted_scores(judged, positions)

    def fitted_scores(self, judged: Mapping[str, int], positions: np.ndarray | None = None) -> np.ndarray:
        """The fitted model's scores, even with no relevant grade yet (the question is the one positive)."""
        with one_blas_thread():  # every product below is small: one thread beats waiting for a second core
            return self._fitted_scores(judged, positions)

    def _fitted_scores(self, judged: Mapping[str, int], positions: np.ndarray | None) -> np.ndarray:
        from scipy.sparse import vstack

        rows, labels = self.training_rows(judged)
        matrix = self.features.matrix
        sparse = vstack([self.features.query_row, matrix[rows]], format="csr")
        gram = np.asarray((sparse @ sparse.T).todense(), dtype=np.float64) + 1.0
        dense = None
        if self.dense_weight:
            dense = self.dense_weight * np.vstack([self.features.query_vector[None, :], self.features.vectors[rows]])
            gram += dense @ dense.T
        a = fit_dual(gram, labels, C=self.regularization, tol=FIT_TOLERANCE)
        # Score only the rows asked for: w is the training rows weighted by a (the representer theorem).
        target = matrix if positions is None else matrix[positions]
        scores = np.asarray(target @ (sparse.T @ a)).ravel() + a.sum()
        if dense is not None:
            vectors = self.features.vectors if positions is None else self.features.vectors[positions]
            scores += self.dense_weight * (vectors @ (dense.T @ a))
        return scores

    def order(self, judged: Mapping[str, int], candidates: Iterable[str] | None = None) -> list[str]:
        """Unjudged documents (of `candidates`, or of the whole corpus), most likely relevant first."""
        doc_ids = self.features.doc_ids
        if candidates is None:
            positions = np.array([i for i, d in enumerate(doc_ids) if d not in judged], dtype=np.int64)
        else:
            positions = np.array([self._position[d] for d in dict.fromkeys(candidates)
                                  if d in self._position and d not in judged], dtype=np.int64)
        if not len(positions):
            return []
        scores = self.scores(judged, positions)
        order = np.lexsort((positions, -scores))  # ties: corpus order, so an order is reproducible
        return [doc_ids[p] for p in positions[order].tolist()]

    def next(self, judged: Mapping[str, int], candidates: Iterable[str] | None = None) -> str | None:
        """The one document to judge next, or None when every document has a grade."""
        ranked = self.order(judged, candidates)
        return ranked[0] if ranked else None

    def find_more(self, judged: Mapping[str, int], shown: Sequence[str], n: int = 10) -> list[str]:
        """The next `n` most likely relevant documents of the whole corpus not among `shown`."""
        seen = set(shown)
        return [d for d in self.order(judged) if d not in seen][:n]
