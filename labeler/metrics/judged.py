"""judged@k: the share of the top k of a run that has a judgment (any grade, 0 and negative
included), as ir_measures' `Judged@k`. It says how far the other metrics at k can be trusted:
an unjudged document counts as not relevant, so a low judged@k means holes, not misses.

    judged@k = |judged ∩ top k| / min(k, |run|)
    judged   = |judged ∩ run| / |run|            (no cutoff: the whole run)

Edge cases:
- the denominator is the number of documents in the top k, so a run shorter than k is judged
  on what it returned (ir_measures; unlike precision@k, whose denominator stays k);
- empty run or question missing from the run: 0 (ir_measures scores a missing question 0;
  its Judged divides by zero on an empty ranking, which a TREC run file cannot hold);
- the top k is the same as every other metric's: trec_eval's order, score descending and
  ties by doc id descending. ir_measures' Judged breaks ties by doc id ascending, so where a
  tie straddles rank k its value can differ; on a run without such ties the two are equal.
"""
from __future__ import annotations

import numpy as np

from labeler.metrics.rankings import JudgedRankings


def judged(rankings: JudgedRankings, k: int | None = None) -> np.ndarray:
    """Per-query judged@k (or judged over the whole run when k is None)."""
    if k is None:
        count, returned = rankings.judged_so_far[:, -1], rankings.num_ret
    else:
        count, returned = rankings.judged_so_far[:, min(k, rankings.depth) - 1], np.minimum(rankings.num_ret, k)
    return np.divide(count, returned, out=np.zeros(len(count)), where=returned > 0)
