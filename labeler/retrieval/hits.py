"""A retrieved document (`DocHit`) and the one ranking rule every stage ends with."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class DocHit:
    """A retrieved document: its score is its best chunk's, its rank is 1-based."""

    doc_id: str
    score: float
    rank: int
    chunk_id: str


def _trec_order(hits: Sequence[DocHit]) -> list[DocHit]:
    """Score descending, ties by doc id descending — the order trec_eval scores a run in."""
    return sorted(sorted(hits, key=lambda h: h.doc_id, reverse=True), key=lambda h: -h.score)


def ranked(scored: Sequence[tuple[str, float, str]], k: int) -> list[DocHit]:
    """(doc_id, score, chunk_id) triples -> the top k as DocHits in trec_eval order, ranked from 1."""
    hits = [DocHit(d, float(s), 0, c) for d, s, c in scored]
    return [DocHit(h.doc_id, h.score, r, h.chunk_id) for r, h in enumerate(_trec_order(hits)[:k], start=1)]
