"""hit@k (success@k): 1 if any relevant document is in the top k, else 0.

    hit@k = 1[ |relevant ∩ top k| > 0 ]

Edge cases (as trec_eval `success.k`): a run shorter than k is judged on what it returned;
empty run, missing question or no relevant document: 0.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def hit(rankings: JudgedRankings, k: int) -> np.ndarray:
    """Per-query hit@k."""
    return (rankings.relevant_in_top(k) > 0).astype(np.float64)
