"""trec_eval-exact retrieval metrics over plain dicts; needs numpy only (no torch, no faiss).

    >>> from labeler.metrics import calc_aggregate, nDCG, Recall, MRR
    >>> qrels = {"q1": {"d1": 1}}
    >>> run = {"q1": {"d2": 0.9, "d1": 0.8}}
    >>> calc_aggregate([Recall@1, nDCG@10, MRR], qrels, run)
    {'recall@1': 0.0, 'ndcg@10': 0.6309297535714575, 'mrr': 0.5}

Shapes: qrels `{query_id: {doc_id: grade}}`, run `{query_id: {doc_id: score}}`. Questions
evaluated = those with at least one judgment in the qrels; one missing from the run scores 0
(trec_eval -c). Run queries without judgments are ignored. One file per metric holds its
formula and edge cases. Coverage: `judged@k` (share of the top k with any judgment, ir_measures'
Judged@k) and `ndcg_condensed@k` (nDCG@k with unjudged documents removed first, trec_eval -J);
`standard_measures` reports judged@k at every cutoff.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from labeler.metrics.measures import (
    COVERAGE, DEFAULT_CUTOFFS, MAP, MRR, RR, Hit, Judged, Measure, P, Precision, Recall, RPrec, coverage_measure, nDCG,
    nDCGCondensed, parse_measure, parse_measures, standard_measures, with_coverage,
)
from labeler.metrics.rankings import JudgedRankings, Qrels, Run, judge_run, trec_ranked

__all__ = [
    "COVERAGE", "DEFAULT_CUTOFFS", "MAP", "MRR", "RR", "Hit", "Judged", "Measure", "P", "Precision", "Recall",
    "RPrec", "nDCG", "nDCGCondensed", "JudgedRankings", "Qrels", "Run", "judge_run", "trec_ranked", "parse_measure",
    "parse_measures", "standard_measures", "with_coverage", "coverage_measure", "compute", "calc_per_query",
    "calc_aggregate",
]


def compute(measures: Iterable[str | Measure], rankings: JudgedRankings) -> dict[str, np.ndarray]:
    """Per-query value arrays (aligned with rankings.query_ids), keyed by measure name."""
    return {str(m): m.compute(rankings) for m in parse_measures(measures)}


def calc_per_query(measures: Iterable[str | Measure], qrels: Qrels, run: Run, *,
                   query_ids: Sequence[str] | None = None, min_grade: int = 1) -> dict[str, dict[str, float]]:
    """{query_id: {measure: value}} for every judged query (or `query_ids`)."""
    rankings = judge_run(qrels, run, query_ids, min_grade=min_grade)
    values = compute(measures, rankings)
    names = list(values)
    columns = [values[name].tolist() for name in names]
    return {q: dict(zip(names, row)) for q, row in zip(rankings.query_ids, zip(*columns))}


def calc_aggregate(measures: Iterable[str | Measure], qrels: Qrels, run: Run, *,
                   query_ids: Sequence[str] | None = None, min_grade: int = 1) -> dict[str, float]:
    """{measure: mean over the judged queries (or `query_ids`)}; an empty query set gives NaN."""
    rankings = judge_run(qrels, run, query_ids, min_grade=min_grade)
    return {name: float(v.mean()) if len(v) else float("nan") for name, v in compute(measures, rankings).items()}
