"""recall@k: the share of a question's relevant documents found in the top k.

    recall@k = |relevant ∩ top k| / |relevant|

`relevant` = judged documents with grade >= min_grade (default 1), retrieved or not.
Edge cases (as trec_eval `recall.k`):
- no relevant document in the qrels: 0;
- the run is shorter than k: only the documents returned count (no penalty beyond that);
- empty run or question missing from the run: 0.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def recall(rankings: JudgedRankings, k: int) -> np.ndarray:
    """Per-query recall@k."""
    found = rankings.relevant_in_top(k)
    return np.divide(found, rankings.num_rel, out=np.zeros(len(found)), where=rankings.num_rel > 0)
