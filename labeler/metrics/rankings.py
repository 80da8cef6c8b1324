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
    (they count as not relevant and give no gain, as in trec_eval). `judged[i, j]` says whether
    that document has a judgment at all (any grade, 0 and negative included), which tells an
    unjudged document from a grade-0 one (both have grade 0 in `grades`). `ideal_grades[i]` holds the
    query's judged grades > 0, sorted descending, 0-padded. `doc_order[i, j]` is the position,
    in the query's run dict (insertion order), of the document ranked j+1 (-1 on padding), and
    `ranked_scores[i, j]` its score (-inf on padding).
    """

    query_ids: tuple[str, ...]
    grades: np.ndarray
    num_ret: np.ndarray
    num_rel: np.ndarray
    ideal_grades: np.ndarray
    doc_order: np.ndarray
    ranked_scores: np.ndarray
    judged: np.ndarray
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
    def judged_so_far(self) -> np.ndarray:
        """Judged documents (any grade) at ranks 1..j+1 (cumulative count, int matrix)."""
        return np.cumsum(self.judged, axis=1, dtype=np.int64)

    @cached_property
    def first_relevant_rank(self) -> np.ndarray:
        """1-based rank of the first relevant document, 0 when none was retrieved."""
        found = self.relevant.any(axis=1)
        return np.where(found, self.relevant.argmax(axis=1) + 1, 0)

    def relevant_in_top(self, k: int) -> np.ndarray:
        """Relevant documents among the top k (k may exceed the run length)."""
        return self.relevant_so_far[:, min(k, self.depth) - 1]


class _Layout:
    """Where each value of a flat, query-after-query array goes in a (queries, width) matrix."""

    def __init__(self, counts: np.ndarray, width: int) -> None:
        self.counts, self.width = counts, width
        self.full = bool((counts == width).all())
        if not self.full:
            starts = np.cumsum(counts) - counts
            rows = np.repeat(np.arange(len(counts)), counts)
            self.flat_positions = rows * width + (np.arange(int(counts.sum())) - np.repeat(starts, counts))

    def matrix(self, values: np.ndarray, fill) -> np.ndarray:
        """The values laid out row by row, `fill` after each row's end."""
        if self.full:
            return values.reshape(len(self.counts), self.width)
        out = np.full(len(self.counts) * self.width, fill, dtype=values.dtype)
        out[self.flat_positions] = values
        return out.reshape(len(self.counts), self.width)


def judge_run(qrels: Qrels, run: Run, query_ids: Sequence[str] | None = None, *,
              min_grade: int = 1) -> JudgedRankings:
    """Join `run` with `qrels` for `query_ids` (default: every query with at least one judgment).

    A query absent from the run gets an empty ranking, so it scores 0 (trec_eval -c).
    Raises ValueError on a NaN score (trec_eval's order is undefined for it).
    """
    min_grade = check_min_grade(min_grade)
    if query_ids is None:
        query_ids = [q for q, judged in qrels.items() if judged]
    query_ids = tuple(query_ids)
    n = len(query_ids)
    scores: list[float] = []
    grades: list[int] = []
    has_judgment: list[bool] = []
    judged: list[int] = []
    num_ret = np.empty(n, dtype=np.int64)
    num_judged = np.empty(n, dtype=np.int64)
    nothing: dict = {}
    # The one Python loop: pull values out of the dicts; everything after is vectorized.
    for i, query_id in enumerate(query_ids):
        ranking = run.get(query_id, nothing)
        judgments = qrels.get(query_id, nothing)
        scores.extend(ranking.values())
        grades.extend(map(judgments.get, ranking, repeat(0)))
        has_judgment.extend(map(judgments.__contains__, ranking))
        judged.extend(judgments.values())
        num_ret[i] = len(ranking)
        num_judged[i] = len(judgments)

    score_flat = np.asarray(scores, dtype=np.float64)
    if np.isnan(score_flat).any():
        raise ValueError("a run score is NaN; give every retrieved document a real number")
    depth = max(int(num_ret.max(initial=0)), 1)
    layout = _Layout(num_ret, depth)
    score_mat = layout.matrix(score_flat, -np.inf)
    in_run = np.arange(depth) < num_ret[:, None]
    order = np.argsort(-score_mat, axis=1)
    # The fast sort may interleave a real -inf score with the -inf padding; a stable sort of
    # those (rare) rows keeps every real entry first.
    neg_inf_rows = np.flatnonzero(((score_mat == -np.inf) & in_run).any(axis=1))
    if len(neg_inf_rows):
        order[neg_inf_rows] = np.argsort(-score_mat[neg_inf_rows], axis=1, kind="stable")
    ranked_scores = np.take_along_axis(score_mat, order, axis=1)
    # Equal scores are ordered by doc id descending; only the rows that have them pay for it.
    equal_next = np.zeros((n, depth), dtype=bool)
    equal_next[:, :-1] = (ranked_scores[:, 1:] == ranked_scores[:, :-1]) & in_run[:, 1:]
    tied = equal_next | np.roll(equal_next, 1, axis=1)
    tied_rows = np.flatnonzero(tied.any(axis=1))
    if len(tied_rows):
        order[tied_rows] = _break_ties(score_mat[tied_rows], order[tied_rows], tied[tied_rows],
                                       num_ret[tied_rows], [run[query_ids[i]] for i in tied_rows])
        ranked_scores[tied_rows] = np.take_along_axis(score_mat[tied_rows], order[tied_rows], axis=1)

    grade_flat = np.asarray(grades)
    if grade_flat.dtype.kind not in "iuf":
        grade_flat = grade_flat.astype(np.float64)
    grade_mat = layout.matrix(grade_flat, 0)
    judged_mat = layout.matrix(np.asarray(has_judgment, dtype=bool), False)

    judged_flat = np.asarray(judged, dtype=np.float64)
    query_of_judged = np.repeat(np.arange(n), num_judged)
    num_rel = np.bincount(query_of_judged[judged_flat >= min_grade], minlength=n).astype(np.int64)
    positive = judged_flat > 0
    pos_query, pos_grade = query_of_judged[positive], judged_flat[positive]
    pos_counts = np.bincount(pos_query, minlength=n)
    ideal_layout = _Layout(pos_counts, max(int(pos_counts.max(initial=0)), 1))
    ideal = ideal_layout.matrix(pos_grade[np.lexsort((-pos_grade, pos_query))], 0.0)

    return JudgedRankings(
        query_ids=query_ids,
        grades=np.take_along_axis(grade_mat, order, axis=1),
        num_ret=num_ret,
        num_rel=num_rel,
        ideal_grades=ideal,
        doc_order=np.where(in_run, order, -1),
        ranked_scores=ranked_scores,
        judged=np.take_along_axis(judged_mat, order, axis=1),
        min_grade=min_grade,
    )


def _break_ties(score_rows: np.ndarray, order_rows: np.ndarray, tied: np.ndarray, num_ret: np.ndarray,
                rankings: list[Mapping[str, float]]) -> np.ndarray:
    """Re-sort rows by score descending, then doc id descending.

    `tied` marks, in ranked order, the entries whose score equals a neighbour's; only they need
    their doc id. Padding gets the lowest key, so a real -inf score still ranks before it.
    """
    rows, ranked_cols = np.nonzero(tied)
    cols = order_rows[rows, ranked_cols]
    names: list[str] = []
    bounds = np.flatnonzero(np.diff(rows)) + 1
    for row_cols, row in zip(np.split(cols, bounds), rows[np.r_[0, bounds]]):
        doc_ids = list(rankings[row])
        names.extend(doc_ids[c] for c in row_cols.tolist())
    distinct = sorted(set(names))
    code_of = {name: code for code, name in enumerate(distinct, start=1)}
    # 0 for untied real entries (their score alone places them), 1.. by doc id for tied ones.
    codes = np.zeros(score_rows.shape, dtype=np.int64)
    codes[rows, cols] = [code_of[name] for name in names]
    codes[np.arange(score_rows.shape[1]) >= num_ret[:, None]] = -1
    return np.lexsort((-codes, -score_rows), axis=1)
