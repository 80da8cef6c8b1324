"""Candidates to judge for a question: pooled from dense and BM25, plus a keyword/ID search.

Labels gathered only from the retriever under test flatter it, so candidates are pooled from
two different retrievers, each tagged with where it came from, and a keyword search lets an
annotator add a document that neither surfaced.
"""
from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from labeler.corpus import Corpus, Document

if TYPE_CHECKING:  # pragma: no cover - the retrieval stack imports faiss and torch lazily
    from labeler.retrieval import Retriever


@dataclass(frozen=True)
class Candidate:
    """A document to judge, with the rank each retriever gave it (1-based)."""

    doc_id: str
    found_by: Mapping[str, int] = field(default_factory=dict)  # {"dense": 1, "bm25": 4}
    scores: Mapping[str, float] = field(default_factory=dict)
    chunk_id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "found_by", MappingProxyType(dict(self.found_by)))
        object.__setattr__(self, "scores", MappingProxyType(dict(self.scores)))

    @property
    def best_rank(self) -> int:
        """The best rank any retriever gave this document."""
        return min(self.found_by.values()) if self.found_by else 10**9


def pool(runs: Mapping[str, Sequence]) -> list[Candidate]:
    """Merge ranked hit lists (name -> [DocHit]) into one candidate per document.

    Order: best rank in any retriever, then found by more retrievers, then retriever order.
    """
    merged: dict[str, dict] = {}
    for name, hits in runs.items():
        for h in hits:
            entry = merged.setdefault(h.doc_id, {"found_by": {}, "scores": {}, "chunk_id": h.chunk_id})
            entry["found_by"][name] = h.rank
            entry["scores"][name] = h.score
    names = list(runs)
    cands = [Candidate(d, e["found_by"], e["scores"], e["chunk_id"]) for d, e in merged.items()]
    return sorted(cands, key=lambda c: (c.best_rank, -len(c.found_by),
                                        min(names.index(n) for n in c.found_by), c.doc_id))


def pool_candidates(retriever: "Retriever", question: str, *, k_dense: int = 10, k_bm25: int = 10,
                    filters: Sequence[tuple[str, str]] = ()) -> list[Candidate]:
    """Dense top-k and BM25 top-k for one question, deduplicated by document (`k_dense=0`: BM25
    only, as while the dense index is still being built)."""
    from labeler.config import SearchParams

    lexical = retriever.search(question, SearchParams(k=k_bm25, mode="bm25", filters=filters))
    if not k_dense:
        return pool({"bm25": lexical})
    dense = retriever.search(question, SearchParams(k=k_dense, mode="dense", filters=filters))
    return pool({"dense": dense, "bm25": lexical})


def with_ranking(pooled: Sequence[Candidate], name: str, ranks: Mapping[str, int], *,
                 first: bool = False) -> list[Candidate]:
    """The pooled candidates plus another ranking (doc_id -> rank, e.g. a saved system's top 10 or a
    run's unjudged documents): a document it ranks gets its badge (`name #rank`); one not in the
    pool is added, after the pool, or with `first` those it ranks go before the rest, in its order."""
    def badges(c: Candidate) -> dict[str, int]:  # the ranking shown first puts its badge first too
        return {name: ranks[c.doc_id], **c.found_by} if first else {**c.found_by, name: ranks[c.doc_id]}

    merged = [Candidate(c.doc_id, badges(c), c.scores, c.chunk_id) if c.doc_id in ranks else c for c in pooled]
    in_pool = {c.doc_id for c in pooled}
    added = [Candidate(d, {name: r}) for d, r in sorted(ranks.items(), key=lambda kv: kv[1]) if d not in in_pool]
    if not first:
        return merged + added
    by_id = {c.doc_id: c for c in merged + added}
    ranked = [by_id[d] for d, _ in sorted(ranks.items(), key=lambda kv: kv[1])]
    return ranked + [c for c in merged if c.doc_id not in ranks]


def shuffled(candidates: Sequence[Candidate], seed: str) -> list[Candidate]:
    """Candidates in a stable pseudo-random order per seed (e.g. the question id), against position bias."""
    out = list(candidates)
    random.Random(seed).shuffle(out)
    return out


_TERM = re.compile(r"[\w\u0900-\u0DFF]+")  # Indic vowel signs belong to their word (see lexical)


def query_terms(text: str) -> list[str]:
    """Lower-cased word terms of a query, for keyword search and highlighting."""
    return [t.lower() for t in _TERM.findall(text) if len(t) > 1 or not t.isascii()]


def keyword_search(corpus: Corpus, query: str, *, limit: int = 20) -> list[Document]:
    """Find documents by id or by keywords in title and text.

    Exact id first, then ids containing the query, then documents containing every term
    (title matches before text-only matches, then by number of occurrences).
    """
    q = query.strip()
    if not q:
        return []
    exact = corpus.get(q)
    ql = q.lower()
    out: list[Document] = [exact] if exact else []
    seen = {exact.doc_id} if exact else set()
    for d in corpus.documents:
        if d.doc_id not in seen and ql in d.doc_id.lower():
            out.append(d)
            seen.add(d.doc_id)
    terms = query_terms(q)
    if terms:
        scored = []
        for d in corpus.documents:
            if d.doc_id in seen:
                continue
            title, text = d.title.lower(), d.text.lower()
            if all(t in title or t in text for t in terms):
                in_title = sum(t in title for t in terms)
                scored.append((-in_title, -sum(text.count(t) for t in terms), d.doc_id, d))
        out.extend(d for *_, d in sorted(scored))
    return out[:limit]
