"""What the store gives back: frozen records of collections, questions, judgments and runs."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from labeler.agreement import unanswerable_disagreement
from labeler.golden import GoldenQuery
from labeler.status import Status

DEFAULT_COLLECTION = "default"
IMPORT_ANNOTATOR = "(import)"  # the one source of every consensus-only file's grades before sources (0017)
SOURCE_PREFIX = "("  # a grade source's name starts so; no person's name may (labeler_storage.checks)


def is_file_source(annotator: str) -> bool:
    """True when `annotator` names a consensus-only file's grades (a source), not a person."""
    return annotator.startswith(SOURCE_PREFIX)


@dataclass(frozen=True)
class GradeSource:
    """The grades one consensus-only file brought (labeler_storage.grade_sources): kept under its own
    name, shown apart, and counted in the consensus (where no person graded the document) only
    while `counted`."""

    name: str  # the annotator name its grades are stored under, e.g. "(golden.jsonl, 2026-12-02T05:50:00Z)"
    file_name: str
    imported_at: str
    imported_by: str
    counted: bool
    changes: tuple[Mapping[str, Any], ...] = ()  # each later switch: {"counted", "at", "by"}
    n_grades: int = 0
    n_questions: int = 0

    @property
    def label(self) -> str:
        """`golden.jsonl, imported 2026-12-02T05:50:00Z`: how pages and the CLI name it."""
        return f"{self.file_name or 'unnamed file'}, imported {self.imported_at or 'before sources were kept'}"


@dataclass(frozen=True)
class Collection:
    """A corpus and the golden set written against it."""

    name: str
    corpus_path: str | None
    corpus_fingerprint: str | None
    created_at: str
    corpus_version: int | None = None  # the latest recorded version of its corpus, and that version's fingerprint
    version_fingerprint: str | None = None


@dataclass(frozen=True)
class Question(GoldenQuery):
    """A question as stored: a golden question whose `relevance` stays empty (grades live in the
    judgments; their consensus is computed) and whose `annotators` are those an imported file
    credited; plus `author`, who wrote it here. `to_golden` gives the golden question."""

    author: str = ""

    def to_golden(self, relevance: Mapping[str, int], people: tuple[str, ...] = (),
                  corpus_fingerprint: str | None = None) -> GoldenQuery:
        """The golden question: consensus `relevance`, credited annotators then the other `people`."""
        credited = list(self.annotators)
        fields_ = {f.name: getattr(self, f.name) for f in fields(GoldenQuery)}
        return GoldenQuery(**{**fields_, "relevance": dict(relevance),
                              "annotators": tuple(credited + sorted(set(people) - set(credited))),
                              "corpus_fingerprint": self.corpus_fingerprint or corpus_fingerprint})


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
    doc_hash: str | None = None  # the document's content hash when graded (None: not known)


@dataclass(frozen=True)
class GradeEvent:
    """A grade as given: the current one (`replaced_at` None) or one a later write replaced or cleared."""

    doc_id: str
    annotator: str
    grade: int
    note: str
    given_at: str
    replaced_at: str | None = None
    replaced_by: str = ""
    change: str = ""  # "regraded", "cleared", "import" or "confirmed" (same grade, new content): what replaced it
    doc_hash: str | None = None  # the content it was given against


@dataclass(frozen=True)
class QuestionStatus:
    """A question with every judgment on it, its consensus grades and labelling status."""

    question: Question
    judgments: tuple[Judgment, ...]
    consensus: Mapping[str, int]  # doc_id -> consensus grade
    status: Status
    voters: tuple[str, ...] = ()  # who votes it unanswerable (labeler_storage.votes), sorted
    adjudicated: Mapping[str, int] = field(default_factory=dict)  # doc_id -> final grade (outweighs the consensus)

    def votes_unanswerable(self, annotator: str) -> bool:
        """True when this annotator votes the question unanswerable."""
        return annotator in self.voters

    @property
    def unanswerable_disagreement(self) -> dict[str, str]:
        """annotator -> "unanswerable"/"answerable" when votes and relevant grades disagree, else {}."""
        ratings: dict[str, dict[str, int]] = {}
        for j in self.judgments:
            ratings.setdefault(j.doc_id, {})[j.annotator] = j.grade
        return unanswerable_disagreement(self.voters, ratings)

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
        """People who judged this question (grade sources left out)."""
        return tuple(sorted({j.annotator for j in self.judgments if not is_file_source(j.annotator)}))

    def grades_by(self, annotator: str) -> dict[str, int]:
        """doc_id -> grade given by one annotator."""
        return {j.doc_id: j.grade for j in self.judgments if j.annotator == annotator}


@dataclass(frozen=True)
class QuestionSummary:
    """One row of the question index: what a list of questions shows, without the judgments."""

    query_id: str
    question: str
    query_type: str
    unanswerable: bool
    status: Status
    n_judged: int  # documents with at least one judgment
    updated_at: str
    annotators: tuple[str, ...]  # people who judged it, sorted; grade sources left out


@dataclass(frozen=True)
class ImportSummary:
    """What an import changed: questions added (`n_new`, conflicting ones added under fresh ids
    among them as `n_renamed`), replaced (`n_updated`), left as they were (`n_identical`, `n_skipped`)."""

    collection: str
    n_questions: int
    n_new: int
    n_updated: int
    n_judgments: int
    n_unanswerable: int
    n_identical: int = 0
    n_skipped: int = 0
    n_renamed: int = 0
    source: str = ""  # the grade source the file's own grades became ("" : it had none, or every one was someone's)
    source_counted: bool = True

    @property
    def line(self) -> str:
        """`Imported 62 questions into 'default': 57 new, 5 as new questions (fresh ids), ...`."""
        parts = [f"{self.n_new - self.n_renamed} new"]
        parts += [f"{n} {what}" for n, what in ((self.n_renamed, "added as new questions (fresh ids)"),
                                                 (self.n_updated, "replaced"), (self.n_identical, "identical"),
                                                 (self.n_skipped, "skipped")) if n]
        kept = ""
        if self.source:
            kept = (f" The file's grades are kept as {self.source}, "
                    + ("counted in the consensus where no person graded a document." if self.source_counted
                       else "apart: not counted in the consensus (count them on the Golden set page or with "
                            "`labeler sources count`)."))
        return (f"Imported {self.n_questions} questions into {self.collection!r}: {', '.join(parts)}; "
                f"{self.n_judgments} grades written, {self.n_unanswerable} unanswerable.{kept}")


@dataclass(frozen=True)
class Conflict:
    """A question of a file whose id the collection already holds with another state."""

    query_id: str
    reasons: tuple[str, ...]  # "other text", "grades by asha differ", ...
    stored_text: str
    file_text: str


@dataclass(frozen=True)
class ImportPlan:
    """What an import would do, question by question, before anything is written."""

    collection: str
    new: tuple[str, ...]
    identical: tuple[str, ...]
    conflicts: tuple[Conflict, ...]
    file_grades: int = 0  # grades of no annotator (a consensus-only file's): they become one grade source

    @property
    def line(self) -> str:
        """`62 questions: 57 new, 0 identical, 5 conflicting (q-0001: other text; ...)`."""
        shown = "; ".join(f"{c.query_id}: {', '.join(c.reasons)}" for c in self.conflicts[:3])
        more = f"; and {len(self.conflicts) - 3} more" if len(self.conflicts) > 3 else ""
        n = len(self.new) + len(self.identical) + len(self.conflicts)
        return (f"{n} questions for collection {self.collection!r}: {len(self.new)} new, {len(self.identical)} "
                f"identical, {len(self.conflicts)} conflicting" + (f" ({shown}{more})" if shown else "") + ".")


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
    created_by: str = ""  # who ran it (team mode: the signed-in user)
    corpus_path: str | None = None  # the corpus it searched, and that corpus's version in the collection
    corpus_version: int | None = None

    @property
    def corpus_line(self) -> str:
        """`v3 of /data/handbook (sha256:1a2b3c4d)`: what a run history and a comparison show."""
        where = self.corpus_path or "corpus not recorded"
        version = f"v{self.corpus_version} of " if self.corpus_version else ""
        fp = f" ({self.corpus_fingerprint[:15]})" if self.corpus_fingerprint else ""
        return f"{version}{where}{fp}"


@dataclass(frozen=True)
class RunRecord(RunSummary):
    """A saved evaluation run with its config and per-question results."""

    config: Mapping[str, Any] = field(default_factory=dict)
    per_query: Mapping[str, Any] = field(default_factory=dict)
