"""Average precision: map (uncut, trec_eval `map`) and map@k (trec_eval `map_cut.k`).

    AP   = Σ_{r: doc at rank r relevant} precision@r / |relevant|
    AP@k = the same sum over ranks r <= k, still divided by |relevant|

The mean over questions is MAP. Relevant documents never retrieved contribute 0, so AP is
bounded by recall. Edge cases: no relevant document, empty run or missing question: 0.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def average_precision(rankings: JudgedRankings, k: int | None = None) -> np.ndarray:
    """Per-query average precision over the whole run, or over its top k."""
    depth = rankings.depth if k is None else min(k, rankings.depth)
    relevant = rankings.relevant[:, :depth]
    precision_at_rank = rankings.relevant_so_far[:, :depth] / np.arange(1, depth + 1)
    total = np.where(relevant, precision_at_rank, 0.0).sum(axis=1)
    return np.divide(total, rankings.num_rel, out=np.zeros(len(total)), where=rankings.num_rel > 0)
