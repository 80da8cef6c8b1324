"""Reciprocal rank: mrr (uncut, trec_eval `recip_rank`) and mrr@k.

    mrr   = 1 / rank of the first relevant document (0 if none was retrieved)
    mrr@k = 1 / rank of the first relevant document if that rank <= k, else 0

The mean over questions is the Mean Reciprocal Rank. Edge cases: no relevant document,
empty run or missing question: 0. mrr@k equals trec_eval's `recip_rank` on the run cut
at k (after trec_eval's tie ordering).
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def reciprocal_rank(rankings: JudgedRankings, k: int | None = None) -> np.ndarray:
    """Per-query reciprocal rank, counting only ranks <= k when k is given."""
    rank = rankings.first_relevant_rank
    counted = rank > 0 if k is None else (rank > 0) & (rank <= k)
    return np.divide(1.0, rank, out=np.zeros(len(rank)), where=counted)
