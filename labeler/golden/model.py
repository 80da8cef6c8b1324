"""The golden-set model: questions with consensus grades, and the fingerprint scoring depends on."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from labeler.errors import InputError

GRADE_MIN, GRADE_MAX = 0, 3

KNOWN_FIELDS = (
    "query_id", "question", "query_type", "unanswerable", "relevance", "annotators",
    "notes", "created_at", "updated_at", "corpus_fingerprint",
)


@dataclass(frozen=True)
class GoldenQuery:
    """One question of a golden set with its consensus grades (doc_id -> grade)."""

    query_id: str
    question: str
    query_type: str = ""
    unanswerable: bool = False
    relevance: Mapping[str, int] = field(default_factory=dict)
    annotators: tuple[str, ...] = ()
    notes: str = ""
    created_at: str | None = None
    updated_at: str | None = None
    corpus_fingerprint: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Own copies: a caller mutating its dict afterwards must not change this query.
        object.__setattr__(self, "relevance", dict(self.relevance))
        object.__setattr__(self, "annotators", tuple(self.annotators))
        object.__setattr__(self, "extra", {k: v for k, v in self.extra.items() if k not in KNOWN_FIELDS})

    def relevant(self, threshold: int = 1) -> frozenset[str]:
        """Doc ids graded at least `threshold`."""
        return frozenset(d for d, g in self.relevance.items() if g >= threshold)


@dataclass(frozen=True)
class GoldenSet:
    """An ordered, id-unique tuple of golden questions."""

    queries: tuple[GoldenQuery, ...]
    _by_id: dict[str, GoldenQuery] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))
        by_id: dict[str, GoldenQuery] = {}
        for q in self.queries:
            if q.query_id in by_id:
                raise InputError(f"duplicate query_id {q.query_id!r} in a golden set",
                                 hint="give every question a unique query_id.")
            by_id[q.query_id] = q
        object.__setattr__(self, "_by_id", by_id)

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[GoldenQuery]:
        return iter(self.queries)

    def qrels(self) -> dict[str, dict[str, int]]:
        """query_id -> {doc_id: grade} for every question (an empty dict if it has none)."""
        return {q.query_id: dict(q.relevance) for q in self.queries}

    def query_types(self) -> dict[str, str]:
        """query_id -> query type ("" when not set)."""
        return {q.query_id: q.query_type for q in self.queries}

    def questions(self) -> dict[str, str]:
        """query_id -> question text."""
        return {q.query_id: q.question for q in self.queries}

    def relevant(self, threshold: int = 1) -> dict[str, set[str]]:
        """query_id -> doc ids graded at least `threshold` (sentence-transformers' shape)."""
        return {q.query_id: set(q.relevant(threshold)) for q in self.queries}

    def get(self, query_id: str) -> GoldenQuery | None:
        """The question with this id, or None."""
        return self._by_id.get(query_id)


def golden_fingerprint(golden: GoldenSet) -> str:
    """`sha256:<hex>` over what scoring depends on (ids, texts, types, flags, grades).

    Independent of question order, notes, annotators and timestamps, so a run can record
    which golden set it was scored against and two runs can be checked for comparability.
    """
    h = hashlib.sha256()
    for q in sorted(golden.queries, key=lambda q: q.query_id):
        record = [q.query_id, q.question, q.query_type, q.unanswerable, sorted(q.relevance.items())]
        h.update(json.dumps(record, ensure_ascii=False).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()
