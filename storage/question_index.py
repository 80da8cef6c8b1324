"""The question index: every question's status and counts, computed by SQL aggregation.

A question list shows a status per question, and the status needs to know whether some
document's consensus grade (floor of the median, see labeler.agreement) is >= 1. That is
decided in SQL without loading grades into Python. For the n grades of one document, with
r of them >= 1:
- r > n/2: both middle grades are >= 1, so the median is >= 1;
- r < n/2: the upper middle grade is < 1, so the median is < 1;
- r = n/2 (n even): the middle grades are a = the largest grade < 1 and b = the smallest
  grade >= 1, and floor((a + b) / 2) >= 1 iff a + b >= 2. With grades 0-3 that is "b >= 2";
  an imported scale may hold negative grades, hence the general form. a <= 0 < b, so a + b
  cannot overflow a 64-bit integer.
An adjudicated grade (storage.adjudication) outweighs the consensus of its document, as in the
export, so a question's status here is the status its exported qrels have.
tests/test_storage_index.py checks this against `labeler.agreement.consensus` on generated cases.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.status import Status
from storage import schema as S
from storage.collection import collection_id
from storage.records import IMPORT_ANNOTATOR, QuestionSummary


def relevant_documents_query(cid: int) -> sa.Select:
    """Per (question row id, doc id) of the collection: 1 if the consensus grade is >= 1, else 0."""
    j, q = S.judgments, S.questions
    n = sa.func.count()
    n_rel = sa.func.sum(sa.case((j.c.grade >= 1, 1), else_=0))
    below = sa.func.max(sa.case((j.c.grade < 1, j.c.grade)))   # largest grade < 1
    above = sa.func.min(sa.case((j.c.grade >= 1, j.c.grade)))  # smallest grade >= 1
    relevant = sa.case((2 * n_rel > n, 1), (sa.and_(2 * n_rel == n, below + above >= 2), 1), else_=0)
    # IN (subquery) rather than a join: SQLite then walks the (question, doc, annotator) unique
    # index in order and aggregates without a temporary B-tree (40 -> 30 ms on 16,700 judgments).
    in_collection = sa.select(q.c.id).where(q.c.collection_id == cid)
    return (sa.select(j.c.question_id, j.c.doc_id, relevant.label("relevant"))
            .where(j.c.question_id.in_(in_collection))
            .group_by(j.c.question_id, j.c.doc_id))


def question_index(conn: Connection, *, collection: str, with_annotators: bool = False) -> list[QuestionSummary]:
    """Every question of the collection (creation order) with status and judged count (and, with
    `with_annotators`, who judged it: a second scan a question picker does not need)."""
    cid = collection_id(conn, collection)
    docs = relevant_documents_query(cid).subquery()
    a, q, j = S.adjudications, S.questions, S.judgments
    final = (sa.select(docs.c.question_id, sa.case((a.c.grade.is_(None), docs.c.relevant), (a.c.grade >= 1, 1),
                                                   else_=0).label("relevant"))
             .outerjoin(a, sa.and_(a.c.question_id == docs.c.question_id, a.c.doc_id == docs.c.doc_id)).subquery())
    per_question = (sa.select(final.c.question_id, sa.func.count().label("n_judged"),
                              sa.func.max(final.c.relevant).label("any_relevant"))
                    .group_by(final.c.question_id).subquery())
    rows = conn.execute(
        sa.select(q.c.id, q.c.query_id, q.c.text, q.c.query_type, q.c.unanswerable, q.c.updated_at,
                  sa.func.coalesce(per_question.c.n_judged, 0).label("n_judged"),
                  sa.func.coalesce(per_question.c.any_relevant, 0).label("any_relevant"))
        .outerjoin(per_question, per_question.c.question_id == q.c.id)
        .where(q.c.collection_id == cid).order_by(q.c.id)).all()
    # Adjudicated grades of documents nobody's grade is left on: the export keeps them, so they
    # make a question started, or done when one is >= 1. question row id -> any relevant.
    judged = sa.select(j.c.question_id).where(j.c.question_id == a.c.question_id, j.c.doc_id == a.c.doc_id)
    adjudicated_only = dict(conn.execute(
        sa.select(a.c.question_id, sa.func.max(sa.case((a.c.grade >= 1, 1), else_=0)))
        .join(q, q.c.id == a.c.question_id).where(q.c.collection_id == cid, ~judged.exists())
        .group_by(a.c.question_id)).all())
    people: dict[int, list[str]] = {}
    for question_id, annotator in () if not with_annotators else conn.execute(
            sa.select(j.c.question_id, j.c.annotator).distinct().join(q, q.c.id == j.c.question_id)
            .where(q.c.collection_id == cid, j.c.annotator != IMPORT_ANNOTATOR)
            .order_by(j.c.question_id, j.c.annotator)):
        people.setdefault(question_id, []).append(annotator)
    return [QuestionSummary(r.query_id, r.text, r.query_type, bool(r.unanswerable),
                            _status(bool(r.unanswerable), r.any_relevant or adjudicated_only.get(r.id, 0),
                                    r.n_judged or r.id in adjudicated_only), r.n_judged,
                            r.updated_at, tuple(people.get(r.id, ()))) for r in rows]


def _status(unanswerable: bool, any_relevant: int, n_judged: int) -> Status:
    # labeler.status.status_of, from counts instead of the consensus grades themselves.
    if unanswerable:
        return Status.UNANSWERABLE
    if any_relevant:
        return Status.DONE
    return Status.STARTED if n_judged else Status.NEW


def judged_by(conn: Connection, *, collection: str, annotator: str) -> dict[str, int]:
    """query_id -> how many documents `annotator` judged on it, 0 where they only voted it
    unanswerable (questions they did neither on are absent). Indexed scans of that annotator's
    judgments and votes: what a per-annotator progress line needs."""
    q, j, v = S.questions, S.judgments, S.unanswerable_votes
    cid = collection_id(conn, collection)
    voted = conn.execute(sa.select(q.c.query_id).join(q, q.c.id == v.c.question_id)
                         .where(v.c.annotator == annotator, q.c.collection_id == cid)).scalars()
    rows = conn.execute(sa.select(q.c.query_id, sa.func.count()).join(q, q.c.id == j.c.question_id)
                        .where(j.c.annotator == annotator, q.c.collection_id == cid).group_by(q.c.query_id))
    return {**dict.fromkeys(voted, 0), **{query_id: n for query_id, n in rows}}
