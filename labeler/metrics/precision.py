"""precision@k: the share of the top k that is relevant.

    precision@k = |relevant ∩ top k| / k

Edge cases (as trec_eval `P.k`):
- the denominator is k even when fewer than k documents were returned;
- empty run, question missing from the run, or no relevant document: 0.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def precision(rankings: JudgedRankings, k: int) -> np.ndarray:
    """Per-query precision@k."""
    return rankings.relevant_in_top(k) / float(k)
