"""Machine grades shown to annotators as suggestions, and what they did after (issue 23, item 5).

The Label page shows a judge's current grade of a pair as a suggestion (labeler_app.suggestions decides
when: after the annotator's own grade, or before it where the team allows). The first time an
annotator grades a pair whose suggestion they see (or are about to see), `record_seen` keeps one row
per judge in `suggestions_seen`: the grade shown and the annotator's own grade at that moment, NULL
when they had none (so the grade they give is a post-edit of the machine's). Their grade now is read
from the judgments when the figures are made (`seen`), so a later change counts. A row is never
replaced: the first sight is what it records.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler_storage import schema as S
from labeler_storage.clock import now_iso
from labeler_storage.machine_grades import grades, grades_query


@dataclass(frozen=True)
class SeenSuggestion:
    """One judge's grade an annotator was shown on a pair, their grade then (None: not graded yet) and now."""

    query_id: str
    doc_id: str
    annotator: str
    judge: str
    machine_grade: int
    grade_before: int | None
    grade_now: int | None  # None: they cleared their grade since

    @property
    def post_edit(self) -> bool:
        """Shown before the annotator graded the pair: their grade is a post-edit of the machine's."""
        return self.grade_before is None


def current_grades(conn: Connection, cid: int, query_id: str, doc_id: str | None = None) -> dict[tuple[str, str], Any]:
    """(doc_id, judge) -> that judge's latest current (non-stale) grade on the question's pairs (one query)."""
    out: dict[tuple[str, str], Any] = {}
    for g in grades(conn, cid, query_id=query_id):
        if g.stale or (doc_id is not None and g.doc_id != doc_id):
            continue
        if (g.doc_id, g.judge) not in out or g.at >= out[g.doc_id, g.judge].at:
            out[g.doc_id, g.judge] = g
    return out


def current_by_judge(conn: Connection, cid: int) -> dict[str, dict[tuple[str, str], int]]:
    """judge -> (query_id, doc_id) -> its latest current (non-stale) grade in the collection; only the columns
    that needs (no parameters, answers or rationales): the work queue's doubts read every pair."""
    cols = grades_query(cid).selected_columns
    latest: dict[tuple[str, str, str], tuple[str, int]] = {}
    for query_id, doc_id, judge, grade, at, stale in conn.execute(grades_query(cid).with_only_columns(
            cols.query_id, cols.doc_id, cols.judge, cols.grade, cols.at, cols.stale)):
        key = (judge, query_id, doc_id)
        if not stale and (key not in latest or at >= latest[key][0]):
            latest[key] = (at, grade)
    out: dict[str, dict[tuple[str, str], int]] = {}
    for (judge, query_id, doc_id), (_, grade) in latest.items():
        out.setdefault(judge, {})[query_id, doc_id] = grade
    return out


def record_seen(conn: Connection, cid: int, query_id: str, doc_id: str, annotator: str,
                grade_before: int | None) -> int:
    """Record that `annotator` sees the current machine grades of (question, document), with their own
    grade at that moment; pairs already recorded stay as they were. How many rows were new."""
    q = S.questions
    rid = conn.execute(sa.select(q.c.id).where(q.c.collection_id == cid, q.c.query_id == query_id)).scalar()
    found = current_grades(conn, cid, query_id, doc_id)
    if rid is None or not found:
        return 0
    now = now_iso(conn)
    rows = [dict(question_id=rid, doc_id=doc_id, annotator=annotator, judge=judge, machine_grade=g.grade,
                 grade_before=grade_before, seen_at=now) for (_, judge), g in sorted(found.items())]
    stmt = S.insert_ignore(S.suggestions_seen, conn.dialect.name).returning(S.suggestions_seen.c.judge)
    return len(conn.execute(stmt, rows).all())


def seen(conn: Connection, cid: int, *, judge: str | None = None) -> list[SeenSuggestion]:
    """Every suggestion recorded in the collection (one judge's, if given), with the annotator's grade now."""
    s, q, j = S.suggestions_seen, S.questions, S.judgments
    stmt = (sa.select(q.c.query_id, s.c.doc_id, s.c.annotator, s.c.judge, s.c.machine_grade, s.c.grade_before,
                      j.c.grade.label("grade_now"))
            .join(q, q.c.id == s.c.question_id)
            .outerjoin(j, sa.and_(j.c.question_id == s.c.question_id, j.c.doc_id == s.c.doc_id,
                                  j.c.annotator == s.c.annotator))
            .where(q.c.collection_id == cid)
            .order_by(s.c.judge, q.c.id, s.c.doc_id, s.c.annotator))
    if judge is not None:
        stmt = stmt.where(s.c.judge == judge)
    return [SeenSuggestion(*r) for r in conn.execute(stmt)]

