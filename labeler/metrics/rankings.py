"""A run joined with its qrels: padded numpy matrices in trec_eval's ranking order.

Every metric reads one `JudgedRankings`, built once per evaluation by `judge_run`, so
the per-query Python work (dict look-ups) happens once and the metrics themselves are
vectorized over all queries at the same time.

Ranking order (trec_eval `comp_sim_docno`): score descending, ties broken by doc id
descending (byte-wise string compare, which for UTF-8 equals Python's `str` order). The
rank column of a run file plays no part.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from typing import Mapping, Sequence

import numpy as np

from labeler.errors import ConfigError

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def trec_ranked(doc_scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """One query's run as (doc_id, score) pairs in trec_eval order."""
    # (score, doc_id) reversed = score descending, then doc id descending.
    return sorted(doc_scores.items(), key=lambda item: (item[1], item[0]), reverse=True)


def check_min_grade(min_grade: int) -> int:
    """The lowest grade counted as relevant must be a positive integer (grade 0 is 'not relevant')."""
    if isinstance(min_grade, bool) or not isinstance(min_grade, (int, np.integer)) or min_grade < 1:
        raise ConfigError(f"minimum relevant grade must be an integer >= 1, got {min_grade!r}",
                          hint="use --min-grade 1 (default) to count every grade >= 1 as relevant.")
    return int(min_grade)


@dataclass(frozen=True, eq=False)
class JudgedRankings:
    """Per query (rows), the grade of the document at each rank (columns), plus judgment counts.

    `grades[i, j]` is the qrels grade of the document ranked j+1 for query i: 0 when that
    document is unjudged or the run is shorter than j+1 (padding); negative grades are kept
    (they count as not relevant and give no gain, as in trec_eval). `ideal_grades[i]` holds the
    query's judged grades > 0, sorted descending, 0-padded. `doc_order[i, j]` indexes
    `doc_ids`/`scores` (the run flattened in query order), -1 on padding.
    """

    query_ids: tuple[str, ...]
    grades: np.ndarray
    num_ret: np.ndarray
    num_rel: np.ndarray
    ideal_grades: np.ndarray
    doc_order: np.ndarray
    doc_ids: tuple[str, ...]
    scores: np.ndarray
    min_grade: int = 1

    @property
    def depth(self) -> int:
        """Columns of the rank matrices (the longest run, at least 1)."""
        return self.grades.shape[1]

    @cached_property
    def relevant(self) -> np.ndarray:
        """Boolean matrix: the document at this rank has grade >= min_grade."""
        return self.grades >= self.min_grade

    @cached_property
    def relevant_so_far(self) -> np.ndarray:
        """Relevant documents at ranks 1..j+1 (cumulative count, int matrix)."""
        return np.cumsum(self.relevant, axis=1, dtype=np.int64)

    @cached_property
    def first_relevant_rank(self) -> np.ndarray:
        """1-based rank of the first relevant document, 0 when none was retrieved."""
        found = self.relevant.any(axis=1)
        return np.where(found, self.relevant.argmax(axis=1) + 1, 0)

    def relevant_in_top(self, k: int) -> np.ndarray:
        """Relevant documents among the top k (k may exceed the run length)."""
        return self.relevant_so_far[:, min(k, self.depth) - 1]


def _padded(values: np.ndarray, counts: np.ndarray, width: int, fill) -> np.ndarray:
    """Scatter a flat array, `counts[i]` values per row, into a (rows, width) matrix."""
    out = np.full((len(counts), width), fill, dtype=values.dtype)
    starts = np.cumsum(counts) - counts
    rows = np.repeat(np.arange(len(counts)), counts)
    cols = np.arange(len(values)) - np.repeat(starts, counts)
    out[rows, cols] = values
    return out


def judge_run(qrels: Qrels, run: Run, query_ids: Sequence[str] | None = None, *,
              min_grade: int = 1) -> JudgedRankings:
    """Join `run` with `qrels` for `query_ids` (default: every query with at least one judgment).

    A query absent from the run gets an empty ranking, so it scores 0 (trec_eval -c).
    Raises ValueError on a NaN score (trec_eval's order is undefined for it).
    """
    min_grade = check_min_grade(min_grade)
    if query_ids is None:
        query_ids = [q for q, judged in qrels.items() if judged]
    n = len(query_ids)
    doc_ids: list[str] = []
    scores: list[float] = []
    grades: list[int] = []
    judged: list[int] = []
    num_ret = np.empty(n, dtype=np.int64)
    num_judged = np.empty(n, dtype=np.int64)
    nothing: dict = {}
    for i, query_id in enumerate(query_ids):
        ranking = run.get(query_id, nothing)
        judgments = qrels.get(query_id, nothing)
        doc_ids.extend(ranking)
        scores.extend(ranking.values())
        grades.extend(map(judgments.get, ranking, repeat(0)))
        judged.extend(judgments.values())
        num_ret[i] = len(ranking)
        num_judged[i] = len(judgments)

    score_flat = np.asarray(scores, dtype=np.float64)
    if np.isnan(score_flat).any():
        raise ValueError("a run score is NaN; give every retrieved document a real number")
    depth = max(int(num_ret.max(initial=0)), 1)
    score_mat = _padded(score_flat, num_ret, depth, -np.inf)
    # Stable sort on the negated scores: padding (-inf -> +inf) stays behind every real entry.
    order = np.argsort(-score_mat, axis=1, kind="stable")
    sorted_scores = np.take_along_axis(score_mat, order, axis=1)
    inside = np.arange(1, depth) < num_ret[:, None]
    tied_rows = np.flatnonzero(((sorted_scores[:, 1:] == sorted_scores[:, :-1]) & inside).any(axis=1))
    flat_index = _padded(np.arange(len(doc_ids), dtype=np.int64), num_ret, depth, -1)
    if len(tied_rows):
        order[tied_rows] = _break_ties(score_mat[tied_rows], flat_index[tied_rows], doc_ids)

    grade_mat = _padded(np.asarray(grades, dtype=np.float64), num_ret, depth, 0.0)
    judged_flat = np.asarray(judged, dtype=np.float64)
    query_of_judged = np.repeat(np.arange(n), num_judged)
    num_rel = np.bincount(query_of_judged[judged_flat >= min_grade], minlength=n).astype(np.int64)
    positive = judged_flat > 0
    pos_query, pos_grade = query_of_judged[positive], judged_flat[positive]
    by_query_then_grade = np.lexsort((-pos_grade, pos_query))
    pos_counts = np.bincount(pos_query, minlength=n)
    ideal = _padded(pos_grade[by_query_then_grade], pos_counts, max(int(pos_counts.max(initial=0)), 1), 0.0)

    return JudgedRankings(
        query_ids=tuple(query_ids),
        grades=np.take_along_axis(grade_mat, order, axis=1),
        num_ret=num_ret,
        num_rel=num_rel,
        ideal_grades=ideal,
        doc_order=np.take_along_axis(flat_index, order, axis=1),
        doc_ids=tuple(doc_ids),
        scores=score_flat,
        min_grade=min_grade,
    )


def _break_ties(score_rows: np.ndarray, index_rows: np.ndarray, doc_ids: list[str]) -> np.ndarray:
    """Order rows by score descending, then doc id descending (only rows that have ties)."""
    present = index_rows >= 0
    names = np.array([doc_ids[i] for i in index_rows[present]])
    # Integer codes in ascending string order; padding gets -1 so it sorts after real docs.
    codes = np.full(index_rows.shape, -1, dtype=np.int64)
    codes[present] = np.unique(names, return_inverse=True)[1].ravel()
    return np.lexsort((-codes, -score_rows), axis=1)
