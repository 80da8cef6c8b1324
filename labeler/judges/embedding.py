"""`EmbeddingJudge`: the packaged model's cosine between question and document, cut into grades 0-3.

cosine = the normalized embeddings' dot product of the question (as is) and the document
(`{title} {text}`, the index's default template, whole: MiniLM reads its first 256 word
pieces). grade = how many of the three thresholds t1 <= t2 <= t3 the cosine reaches.

The thresholds are declared (`thresholds = [t1, t2, t3]`) or fitted on human pairs
(`fit_thresholds`): the triple, out of a grid of the fitting cosines' quantiles, that
maximizes quadratic-weighted kappa with the people's grades there. A figure measured on the
pairs the thresholds were fitted on flatters the judge, so `cross_fitted` grades every pair
with thresholds fitted on the OTHER questions' pairs (questions split into folds: a
question's documents go together), and calibration is reported on those grades.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from labeler.errors import ConfigError
from labeler.judges.base import JudgePair, JudgeResult, LocalJudge, grade_of
from labeler.judges.stats import weighted_kappa
from labeler.progress import Progress

GRID = 40  # quantiles tried per threshold
_BATCH = 512


def grades_of(cosines: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Grade 0-3 per cosine: how many thresholds it reaches."""
    return (np.asarray(cosines)[:, None] >= np.asarray(thresholds)[None, :]).sum(axis=1)


def fit_thresholds(cosines: Sequence[float], human: Sequence[int], *, grid: int = GRID) -> tuple[float, float, float]:
    """The thresholds (t1 <= t2 <= t3) among the cosines' quantiles that maximize quadratic
    kappa against `human` grades (ties: the first triple found, in ascending order)."""
    c, h = np.asarray(cosines, dtype=np.float64), np.asarray(human, dtype=np.int64)
    if len(c) == 0 or len(c) != len(h):
        raise ValueError("fit_thresholds needs as many human grades as cosines, at least one")
    candidates = np.unique(np.quantile(c, np.linspace(0.0, 1.0, grid + 1)))
    candidates = np.append(candidates, np.inf)  # "no document reaches this grade" is a choice too
    above = (c[None, :] >= candidates[:, None]).astype(np.int64)  # (candidates, pairs)
    i, j, k = np.array([(i, j, k) for i in range(len(candidates)) for j in range(i, len(candidates))
                        for k in range(j, len(candidates))]).T
    best, best_at = -np.inf, 0
    for start in range(0, len(i), _BATCH):
        s = slice(start, start + _BATCH)
        grades = above[i[s]] + above[j[s]] + above[k[s]]
        codes = h[None, :] * 4 + grades + (np.arange(len(grades)) * 16)[:, None]
        confusion = np.bincount(codes.ravel(), minlength=16 * len(grades)).reshape(len(grades), 4, 4)
        kappa = np.nan_to_num(weighted_kappa(confusion), nan=-np.inf)
        at = int(np.argmax(kappa))
        if kappa[at] > best:
            best, best_at = kappa[at], start + at
    return tuple(float(candidates[x]) for x in (i[best_at], j[best_at], k[best_at]))


def fold_of(query_id: str, folds: int) -> int:
    """A question's fold: a stable hash of its id (the same split on every run and machine)."""
    return int(hashlib.sha256(query_id.encode("utf-8")).hexdigest(), 16) % folds


def cross_fitted(cosines: Mapping[tuple[str, str], float], human: Mapping[tuple[str, str], int], *,
                 folds: int = 2) -> tuple[dict[tuple[str, str], int], dict[int, tuple[float, float, float]]]:
    """(grade of every pair in `cosines`, thresholds per fold): each pair graded with thresholds
    fitted on the human pairs of the other folds' questions."""
    keys = list(cosines)
    fold = {key: fold_of(key[0], folds) for key in keys}
    grades: dict[tuple[str, str], int] = {}
    fitted: dict[int, tuple[float, float, float]] = {}
    for f in range(folds):
        train = [key for key in human if key in cosines and fold[key] != f]
        if not train:
            raise ValueError(f"fold {f}: no human pairs in the other folds to fit thresholds on")
        fitted[f] = fit_thresholds([cosines[key] for key in train], [human[key] for key in train])
        test = [key for key in keys if fold[key] == f]
        for key, grade in zip(test, grades_of(np.array([cosines[key] for key in test]), fitted[f])):
            grades[key] = int(grade)
    return grades, fitted


class EmbeddingJudge(LocalJudge):
    """Cosine similarity cut into grades by thresholds (declared, or set with `with_thresholds`)."""

    kind = "embedding"

    def __init__(self, spec, *, embedder=None) -> None:
        super().__init__(spec)
        self._embedder = embedder
        cuts = spec.params.get("thresholds")
        self.thresholds = tuple(float(c) for c in cuts) if cuts is not None else None

    @property
    def embedder(self):
        if self._embedder is None:
            from labeler.retrieval.embedding import Embedder

            self._embedder = Embedder(self.spec.model)
        return self._embedder

    def cosines(self, pairs: Sequence[JudgePair]) -> np.ndarray:
        """The cosine of each pair's question and document."""
        from labeler.config import DEFAULT_TEMPLATE
        from labeler.retrieval.chunking import render

        questions = sorted({p.question for p in pairs})
        texts = sorted({render(DEFAULT_TEMPLATE, p.title, p.text) for p in pairs})  # each document once
        q_vectors = dict(zip(questions, self.embedder.encode(questions))) if questions else {}
        d_vectors = dict(zip(texts, self.embedder.encode(texts))) if texts else {}
        return np.array([float(q_vectors[p.question] @ d_vectors[render(DEFAULT_TEMPLATE, p.title, p.text)])
                         for p in pairs])

    def judge(self, pairs: Iterable[JudgePair], progress: Progress | None = None) -> Iterator[JudgeResult]:
        """Grade every pair; ConfigError when no thresholds are declared or fitted."""
        if self.thresholds is None:
            raise ConfigError(f"judge {self.name!r}: the embedding judge has no thresholds",
                              hint="declare thresholds = [t1, t2, t3], or fit them on human pairs "
                                   "(labeler.judges.embedding.fit_thresholds).")
        pairs = list(pairs)
        params = {**self.spec.params, "thresholds": list(self.thresholds)}
        for done, (pair, cosine) in enumerate(zip(pairs, self.cosines(pairs)), start=1):
            grade = int(grades_of(np.array([cosine]), self.thresholds)[0])
            yield grade_of(self.spec, pair, grade, f"cosine {cosine:.4f}", None, params)
            if progress:
                progress(done, len(pairs), "judging")
