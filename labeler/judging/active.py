"""Most likely relevant first: a per-question model that learns from this question's grades.

Continuous active learning after BMI (Cormack & Grossman, the TREC Total Recall baseline): a
logistic regression is fitted on the grades given so far (relevant = grade >= `min_grade`), the
question itself as one more relevant document, and a fresh random sample of unjudged documents
taken as not relevant; the unjudged documents are then ordered by its score. It is fitted again
after every grade. Only grades already given are read, so an order never depends on a grade
nobody gave (the simulator's oracle checks this).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from labeler.judging.features import QuestionFeatures

PSEUDO_NEGATIVES = 100  # BMI's number of random unjudged documents presumed not relevant
REGULARIZATION = 1.0  # logistic regression's C (inverse L2 strength)


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


class ActiveOrder:
    """Orders one question's unjudged documents by a model refitted on its grades (see module docstring).

    `order(judged)` ranks every unjudged document of the corpus ("find more" reads its head);
    `order(judged, candidates=...)` ranks only those candidates; `next(judged)` is the first.
    """

    def __init__(self, features: QuestionFeatures, *, seed: str = "", min_grade: int = 1,
                 pseudo_negatives: int = PSEUDO_NEGATIVES, regularization: float = REGULARIZATION) -> None:
        self.features = features
        self.seed = seed or features.question
        self.min_grade = min_grade
        self.pseudo_negatives = pseudo_negatives
        self.regularization = regularization
        self._position = features.text.position

    def scores(self, judged: Mapping[str, int], positions: np.ndarray | None = None) -> np.ndarray:
        """The model's score of the documents at `positions` (all when None), fitted on `judged`."""
        from scipy.sparse import vstack
        from sklearn.linear_model import LogisticRegression

        matrix = self.features.matrix
        judged_pos = [self._position[d] for d in judged if d in self._position]
        labels = [int(g >= self.min_grade) for d, g in judged.items() if d in self._position]
        n = matrix.shape[0]
        unjudged_mask = np.ones(n, dtype=bool)
        unjudged_mask[judged_pos] = False
        pool = np.flatnonzero(unjudged_mask)
        rng = np.random.default_rng(_seed(self.seed, len(judged)))
        negatives = rng.choice(pool, size=min(self.pseudo_negatives, len(pool)), replace=False) if len(pool) else pool
        rows = vstack([self.features.query_row, matrix[judged_pos], matrix[negatives]], format="csr")
        y = np.concatenate([[1], labels, np.zeros(len(negatives), dtype=int)])
        if y.min() == y.max():  # nothing but the question and no negative: the retrievers' order
            scores = self.features.prior_scores()
        else:
            model = LogisticRegression(C=self.regularization, solver="liblinear", max_iter=200)
            model.fit(rows, y)
            # One sparse product over every row costs less than copying out the rows asked for.
            scores = matrix @ model.coef_.ravel() + model.intercept_[0]
        return scores if positions is None else scores[positions]

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
