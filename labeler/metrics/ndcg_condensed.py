"""ndcg_condensed@k: ndcg@k over the condensed run, i.e. with the unjudged documents removed
first (Sakai's condensed list; trec_eval -J `ndcg_cut.k`, ir_measures' `nDCG(judged_only=True)@k`).

    condensed run = the run in trec_eval order without its unjudged documents
    ndcg_condensed@k = DCG@k(condensed run) / IDCG@k      (DCG, IDCG and gains as in `ndcg`)

It scores a run as if its holes were not there, so it rises where ndcg@k is pulled down by
documents nobody has judged yet; read it beside judged@k.

Edge cases:
- documents with a negative grade are removed too, exactly as trec_eval -J does (it keeps
  only judged grades >= 0), although judged@k counts them as judged;
- the ideal is unchanged: every judged grade > 0 of the question, retrieved or not;
- IDCG = 0, an empty run, a question missing from the run, or a run with nothing judged: 0;
- the documents kept stay in trec_eval's order (score descending, ties by doc id descending).
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.ndcg import discounts
from labeler.metrics.rankings import JudgedRankings


def ndcg_condensed(rankings: JudgedRankings, k: int) -> np.ndarray:
    """Per-query ndcg@k over the run with unjudged (and negatively graded) documents removed."""
    kept = rankings.judged & (rankings.grades >= 0)
    condensed_rank = np.cumsum(kept, axis=1) - 1        # 0-based rank in the condensed run
    counted = kept & (condensed_rank < k)
    gains = np.where(counted, rankings.grades, 0) * discounts(rankings.depth)[np.where(counted, condensed_rank, 0)]
    dcg = gains.sum(axis=1)
    ideal_top = rankings.ideal_grades[:, :k]
    idcg = ideal_top @ discounts(ideal_top.shape[1])
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)
