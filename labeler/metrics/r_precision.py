"""r_precision: precision at rank R, where R is the question's number of relevant documents.

    r_precision = |relevant ∩ top R| / R,   R = |relevant|

As trec_eval `Rprec`: when the run is shorter than R, the relevant documents it did return
are divided by R. Edge cases: R = 0, empty run or missing question: 0.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def r_precision(rankings: JudgedRankings) -> np.ndarray:
    """Per-query R-precision."""
    r = rankings.num_rel
    column = np.clip(r, 1, rankings.depth) - 1
    found = np.take_along_axis(rankings.relevant_so_far, column[:, None], axis=1)[:, 0]
    return np.divide(found, r, out=np.zeros(len(r)), where=r > 0)
