"""Reciprocal-rank fusion (Cormack, Clarke & Büttcher, 2009) of ranked document lists.

    score(d) = sum over lists L containing d of 1 / (rrf_k + rank_L(d))

A document missing from a list adds nothing for it; its chunk id is the one of the first list
that has it. `rrf_k` (60 in the paper) damps the weight of the very top ranks.
"""
from __future__ import annotations

from collections.abc import Sequence

from labeler.retrieval.hits import DocHit, ranked


def rrf(lists: Sequence[Sequence[DocHit]], k: int, rrf_k: int = 60) -> list[DocHit]:
    """The top k documents of the fused lists, in trec_eval order."""
    fused: dict[str, list] = {}
    for hits in lists:
        for h in hits:
            entry = fused.setdefault(h.doc_id, [0.0, h.chunk_id])
            entry[0] += 1.0 / (rrf_k + h.rank)
    return ranked([(d, s, c) for d, (s, c) in fused.items()], k)
