"""`store.judgments`: people's grades (labeler_storage.questions), their history, staleness
(labeler_storage.versions), consensus and agreement (labeler.agreement), and adjudication
(labeler_storage.adjudication).

Consensus: floor of the median grade over the annotators; a counted grade source's grade (a
consensus-only file's, labeler_storage.grade_sources) counts only for documents no person graded (it
never shifts people's consensus), a source kept apart not at all, and agreement statistics leave
every source out."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from labeler.agreement import AgreementReport, Consensus, Ratings, agreement, consensus
from labeler.corpus import Document
from labeler_storage import adjudication, grade_sources, question_index, questions, versions, work_queue
from labeler_storage import collection as C
from labeler_storage import schema as S
from labeler_storage.records import DEFAULT_COLLECTION, GradeEvent, Judgment, is_file_source
from labeler_storage.topics.base import Topic
from labeler_storage.topics.queue import LEASE_MINUTES
from labeler_storage.versions import StaleJudgment


class Judgments(Topic):
    """Who graded which document of which question, and what the grades add up to."""

    def set(self, query_id: str, doc_id: str, grade: int, *, annotator: str,
            collection: str = DEFAULT_COLLECTION, note: str = "", doc: Document | None = None) -> Judgment:
        """Record `annotator`'s grade (0-3) for a document of a question, replacing their earlier one
        (`doc`: the document as they saw it, whose content hash the grade keeps). A claim they hold on
        the question (the work queue) is renewed in the same transaction: they are working on it."""
        with self._db.write() as conn:
            judgment = questions.set_judgment(conn, query_id, doc_id, grade, annotator=annotator,
                                              collection=collection, note=note, doc=doc)
            self._renew(conn, collection, query_id, annotator)
            return judgment

    def confirm(self, query_id: str, doc_id: str, *, annotator: str, doc: Document,
                collection: str = DEFAULT_COLLECTION) -> bool:
        """`annotator`'s grade still holds for the document as it is now: it is current again."""
        with self._db.write() as conn:
            return questions.confirm_judgment(conn, query_id, doc_id, annotator=annotator, collection=collection,
                                              doc=doc)

    def clear(self, query_id: str, doc_id: str, *, annotator: str, collection: str = DEFAULT_COLLECTION) -> bool:
        """Remove `annotator`'s grade for the document (renewing their claim, as a grade does); False if there was none."""
        with self._db.write() as conn:
            done = questions.clear_judgment(conn, query_id, doc_id, annotator=annotator, collection=collection)
            self._renew(conn, collection, query_id, annotator)
            return done

    def _renew(self, conn: Any, collection: str, query_id: str, annotator: str) -> None:
        work_queue.renew_claim(conn, collection, query_id, annotator, now=self._now(),
                               lease=timedelta(minutes=LEASE_MINUTES))

    def list(self, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
             annotator: str | None = None) -> "list[Judgment]":
        """Judgments of a collection, optionally of one question and/or one annotator."""
        with self._db.read() as conn:
            return questions.judgment_rows(conn, C.collection_id(conn, collection), query_id, annotator)

    def history(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> "list[GradeEvent]":
        """Every grade given on the question, current and replaced, by document then time."""
        with self._db.read() as conn:
            return questions.grade_history(conn, query_id, collection=collection)

    def stale(self, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
              annotator: str | None = None) -> "list[StaleJudgment]":
        """Judgments whose document was edited or deleted since they were given (current version)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            if row is None:
                return []
            return versions.stale_judgments(conn, row.id, query_id=query_id, annotator=annotator)

    def judged_by(self, annotator: str, *, collection: str = DEFAULT_COLLECTION) -> dict[str, int]:
        """query_id -> documents `annotator` judged on it, 0 where they only voted it unanswerable
        (absent: neither); {} while there is no collection."""
        with self._db.read() as conn:
            if C.revision(conn, collection) == 0:
                return {}
            return question_index.judged_by(conn, collection=collection, annotator=annotator)

    def recent_yield(self, annotator: str, *, last: int, min_grade: int = 1,
                     collection: str = DEFAULT_COLLECTION) -> dict[str, tuple[int, int]]:
        """query_id -> (documents `annotator` judged there, relevant among their `last` grades there)."""
        with self._db.read() as conn:
            if C.revision(conn, collection) == 0:
                return {}
            return question_index.recent_yield(conn, collection=collection, annotator=annotator, last=last,
                                               min_grade=min_grade)

    def annotator_spelling(self, name: str) -> str:
        """The spelling already in use for this annotator (same name up to case and spaces), else `name`
        with its spaces tidied: "alice " and "Alice" are one annotator, shown as first typed."""
        key = " ".join(name.split()).casefold()
        with self._db.read() as conn:
            known = conn.execute(sa.union(sa.select(S.judgments.c.annotator),
                                          sa.select(S.unanswerable_votes.c.annotator))).scalars().all()
        return next((a for a in sorted(known) if " ".join(a.split()).casefold() == key), " ".join(name.split()))

    def ratings(self, *, collection: str = DEFAULT_COLLECTION) -> Ratings:
        """(query_id, doc_id) -> {annotator: grade} for the collection."""
        ratings: dict[tuple[str, str], dict[str, int]] = {}
        for j in self.list(collection=collection):
            ratings.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.grade
        return ratings

    def consensus(self, *, collection: str = DEFAULT_COLLECTION) -> Consensus:
        """Consensus grade per (question, document), and the disagreements (largest spread first)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            apart = grade_sources.apart(conn, row.id) if row is not None else frozenset()
        return consensus(self.ratings(collection=collection), stand_in=is_file_source, apart=apart)

    def agreement(self, *, collection: str = DEFAULT_COLLECTION) -> AgreementReport:
        """Cohen's kappa per annotator pair, Fleiss' kappa, Krippendorff's alpha (people only)."""
        ratings = self.ratings(collection=collection)
        return agreement(ratings, exclude={a for by in ratings.values() for a in by if is_file_source(a)})

    def adjudicate(self, query_id: str, doc_id: str, grade: int | None, *, by: str, note: str = "",
                   collection: str = DEFAULT_COLLECTION) -> adjudication.Adjudication | None:
        """Set the final grade of a document for a question (None withdraws it); it outweighs the consensus."""
        with self._db.write() as conn:
            return adjudication.adjudicate(conn, collection, query_id, doc_id, grade, by=by, note=note)

    def adjudications(self, *, collection: str = DEFAULT_COLLECTION) -> dict[tuple[str, str], adjudication.Adjudication]:
        """(query_id, doc_id) -> its adjudication."""
        with self._db.read() as conn:
            return adjudication.adjudications(conn, collection)
