"""What the store gives back: frozen records of collections, questions, judgments and runs."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from labeler.golden import GoldenQuery
from labeler.status import Status

DEFAULT_COLLECTION = "default"
IMPORT_ANNOTATOR = "(import)"


@dataclass(frozen=True)
class Collection:
    """A corpus and the golden set written against it."""

    name: str
    corpus_path: str | None
    corpus_fingerprint: str | None
    created_at: str


@dataclass(frozen=True)
class Question:
    """A question as stored (its consensus grades live in judgments).

    The question fields are those of `labeler.golden.GoldenQuery` (`text` is its `question`);
    `author` and `credited_annotators` are provenance only the store has. `to_golden` is the one
    place a stored question becomes a golden one.
    """

    query_id: str
    text: str
    query_type: str = ""
    unanswerable: bool = False
    notes: str = ""
    author: str = ""
    created_at: str = ""
    updated_at: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    credited_annotators: tuple[str, ...] = ()
    corpus_fingerprint: str | None = None

    def to_golden(self, relevance: Mapping[str, int], people: tuple[str, ...] = (),
                  corpus_fingerprint: str | None = None) -> GoldenQuery:
        """The golden question: consensus `relevance`, credited annotators then the other `people`."""
        credited = list(self.credited_annotators)
        annotators = credited + sorted(set(people) - set(credited))
        return GoldenQuery(
            query_id=self.query_id, question=self.text, query_type=self.query_type,
            unanswerable=self.unanswerable, relevance=dict(relevance), annotators=tuple(annotators),
            notes=self.notes, created_at=self.created_at, updated_at=self.updated_at,
            corpus_fingerprint=self.corpus_fingerprint or corpus_fingerprint, extra=self.extra,
        )


@dataclass(frozen=True)
class Judgment:
    """One annotator's grade for one document of one question."""

    query_id: str
    doc_id: str
    grade: int
    annotator: str
    note: str = ""
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class QuestionStatus:
    """A question with every judgment on it, its consensus grades and labelling status."""

    question: Question
    judgments: tuple[Judgment, ...]
    consensus: Mapping[str, int]  # doc_id -> consensus grade
    status: Status

    @property
    def n_judged(self) -> int:
        """Documents with at least one judgment."""
        return len(self.consensus)

    @property
    def n_relevant(self) -> int:
        """Documents whose consensus grade is >= 1."""
        return sum(1 for g in self.consensus.values() if g >= 1)

    @property
    def annotators(self) -> tuple[str, ...]:
        """People who judged this question (the import pseudo-annotator left out)."""
        return tuple(sorted({j.annotator for j in self.judgments} - {IMPORT_ANNOTATOR}))

    def grades_by(self, annotator: str) -> dict[str, int]:
        """doc_id -> grade given by one annotator."""
        return {j.doc_id: j.grade for j in self.judgments if j.annotator == annotator}


@dataclass(frozen=True)
class QuestionSummary:
    """One row of the question index: what a list of questions shows, without the judgments."""

    query_id: str
    text: str
    query_type: str
    unanswerable: bool
    status: Status
    n_judged: int  # documents with at least one judgment
    updated_at: str
    annotators: tuple[str, ...]  # people who judged it, sorted; the import pseudo-annotator left out


@dataclass(frozen=True)
class ImportSummary:
    """What an import changed."""

    collection: str
    n_questions: int
    n_new: int
    n_updated: int
    n_judgments: int
    n_unanswerable: int


@dataclass(frozen=True)
class RunSummary:
    """A saved evaluation run without its per-question detail (for lists)."""

    run_id: int
    collection: str
    name: str
    created_at: str
    config_hash: str
    golden_hash: str
    corpus_fingerprint: str | None
    summary: Mapping[str, Any]


@dataclass(frozen=True)
class RunRecord(RunSummary):
    """A saved evaluation run with its config and per-question results."""

    config: Mapping[str, Any] = field(default_factory=dict)
    per_query: Mapping[str, Any] = field(default_factory=dict)
