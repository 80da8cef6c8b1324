"""Adjudicated grades: an adjudicator's final grade of a disputed (question, document), with a note.

An adjudicated grade outweighs the consensus rule wherever the golden set is read as qrels:
exports carry it as `relevance` and list it under the optional field `adjudicated`
({doc_id: {grade, by, note}}, DESIGN "Golden JSONL v1, optional fields"), and evaluation reads
the export. The annotators' own grades are kept as they were: agreement is about them.
"""
from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler_storage import schema as S
from labeler_storage.checks import check_stored_grade
from labeler_storage.clock import now_iso
from labeler_storage.collection import bump_revision, collection_row
from labeler_storage.questions import question_row


@dataclass(frozen=True)
class Adjudication:
    """The final grade of one document for one question, who set it, why, and when."""

    query_id: str
    doc_id: str
    grade: int
    by: str
    note: str
    at: str


def adjudicate(conn: Connection, collection: str, query_id: str, doc_id: str, grade: int | None, *,
               by: str, note: str = "") -> Adjudication | None:
    """Set (or with None withdraw) the final grade; the record, or None when withdrawn. A write."""
    row = question_row(conn, collection, query_id, lock=True)
    a = S.adjudications
    key = sa.and_(a.c.question_id == row.id, a.c.doc_id == doc_id)
    conn.execute(a.delete().where(key))
    bump_revision(conn, row.collection_id, [row.id])  # the export and the question's status change
    if grade is None:
        return None
    check_stored_grade(grade, f"adjudication of {doc_id} for {query_id}")
    at = now_iso(conn)
    conn.execute(a.insert().values(question_id=row.id, doc_id=doc_id, grade=grade, note=note.strip(), by=by, at=at))
    return Adjudication(query_id, doc_id, grade, by, note.strip(), at)


def adjudications(conn: Connection, collection: str) -> dict[tuple[str, str], Adjudication]:
    """(query_id, doc_id) -> its adjudication, for every adjudicated document of the collection."""
    coll = collection_row(conn, collection)
    # A database read before its upgrade to v10 (a Store() opened without migrating) has no adjudications.
    if coll is None or not sa.inspect(conn).has_table("adjudications"):
        return {}
    a, q = S.adjudications, S.questions
    return {(r.query_id, r.doc_id): Adjudication(r.query_id, r.doc_id, r.grade, r.by, r.note, r.at)
            for r in conn.execute(sa.select(q.c.query_id, a.c.doc_id, a.c.grade, a.c.by, a.c.note, a.c.at)
                                  .join(q, q.c.id == a.c.question_id).where(q.c.collection_id == coll.id)
                                  .order_by(q.c.id, a.c.doc_id))}
