"""ndcg@k: normalized discounted cumulative gain with linear gain, as trec_eval `ndcg_cut.k`.

    DCG@k  = Σ_{r=1..k} gain(doc at rank r) / log2(r + 1),   gain = grade if grade > 0 else 0
    IDCG@k = the same sum over the question's judged grades > 0 sorted descending
             (all judged documents, retrieved or not)
    ndcg@k = DCG@k / IDCG@k

Edge cases:
- IDCG = 0 (no judged grade > 0): 0;
- graded: a grade-3 document counts three times a grade-1 one; negative grades give 0;
- min_grade does not apply: every grade > 0 is a gain, exactly as trec_eval's ndcg_cut
  ignores its relevance level;
- a run shorter than k adds nothing beyond its end; empty run or missing question: 0.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def discounts(n: int) -> np.ndarray:
    """1 / log2(r + 1) for ranks r = 1..n."""
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def ndcg(rankings: JudgedRankings, k: int) -> np.ndarray:
    """Per-query ndcg@k."""
    top = rankings.grades[:, :k]
    dcg = np.maximum(top, 0.0) @ discounts(top.shape[1])
    ideal_top = rankings.ideal_grades[:, :k]
    idcg = ideal_top @ discounts(ideal_top.shape[1])
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)
