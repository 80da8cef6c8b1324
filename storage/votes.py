"""Each annotator's own "unanswerable" judgment of a question, and the consensus the golden set keeps.

A vote says "no document in the corpus answers this question"; it is one annotator's judgment,
like a grade: another annotator can disagree, and withdrawing a vote changes only one's own.
Rules (DESIGN.md leaves them open):
- An annotator cannot vote unanswerable while they grade a document of the question >= 1, nor
  grade >= 1 while they vote so. Other annotators' grades do not block: that is a disagreement.
- Consensus (`labeler.agreement.unanswerable_consensus`): the question is unanswerable when
  someone votes so and no document's consensus grade is >= 1. A vote never outweighs a grade:
  a voter who disagrees with another annotator's "relevant" says so by grading that document 0,
  and the median decides. So an exported golden set always passes its own validator, and the
  votes change no grade. A vote beside a relevant consensus grade is a disagreement, shown.
`questions.unanswerable` holds that consensus, refreshed in the transaction of every write that
can change it; readers (the question index, exports, health) read the column.
"""
from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.agreement import unanswerable_consensus
from labeler.errors import InputError
from labeler_storage import schema as S
from labeler_storage.clock import now_iso
from labeler_storage.grade_sources import apart_by_question
from labeler_storage.records import is_file_source


def voters(conn: Connection, question_id: int) -> tuple[str, ...]:
    """The annotators who vote this question unanswerable, sorted."""
    v = S.unanswerable_votes
    return tuple(conn.execute(sa.select(v.c.annotator).where(v.c.question_id == question_id)
                              .order_by(v.c.annotator)).scalars())


def votes_by_question(conn: Connection, question_ids: Iterable[int]) -> dict[int, tuple[str, ...]]:
    """question row id -> its voters (questions without votes are absent)."""
    v, out = S.unanswerable_votes, {}
    ids = list(question_ids)
    for i in range(0, len(ids), 500):
        for qid, annotator in conn.execute(sa.select(v.c.question_id, v.c.annotator)
                                           .where(v.c.question_id.in_(ids[i:i + 500]))
                                           .order_by(v.c.question_id, v.c.annotator)):
            out[qid] = out.get(qid, ()) + (annotator,)
    return out


def check_vote_allowed(conn: Connection, question_id: int, query_id: str, annotator: str) -> None:
    """Refuse a vote while the annotator grades one of the question's documents >= 1."""
    j = S.judgments
    relevant = conn.execute(sa.select(j.c.doc_id, j.c.grade).where(
        j.c.question_id == question_id, j.c.annotator == annotator, j.c.grade >= 1).order_by(j.c.doc_id)).all()
    if relevant:
        shown = ", ".join(f"{r.doc_id} ({r.grade})" for r in relevant[:3])
        more = f" and {len(relevant) - 3} more" if len(relevant) > 3 else ""
        raise InputError(f"you graded documents of question {query_id!r} relevant: {shown}{more}",
                         hint="set your grades of those documents to 0 or clear them first; an unanswerable "
                              "question has no relevant document.")


def check_grade_allowed(conn: Connection, question_id: int, query_id: str, annotator: str, grade: int) -> None:
    """Refuse a grade >= 1 from an annotator who votes the question unanswerable."""
    v = S.unanswerable_votes
    if grade >= 1 and conn.execute(sa.select(v.c.annotator).where(
            v.c.question_id == question_id, v.c.annotator == annotator)).first() is not None:
        raise InputError(f"you marked question {query_id!r} unanswerable, so you cannot grade a document {grade}",
                         hint="unmark it as unanswerable first, or grade the document 0.")


def write_vote(conn: Connection, question_id: int, annotator: str, unanswerable: bool) -> bool:
    """Record or withdraw one annotator's vote; True if it changed anything."""
    v = S.unanswerable_votes
    if not unanswerable:
        return conn.execute(v.delete().where(v.c.question_id == question_id, v.c.annotator == annotator)).rowcount > 0
    if conn.execute(sa.select(v.c.annotator).where(v.c.question_id == question_id,
                                                   v.c.annotator == annotator)).first() is not None:
        return False
    conn.execute(v.insert().values(question_id=question_id, annotator=annotator, created_at=now_iso(conn)))
    return True


def refresh_unanswerable(conn: Connection, question_ids: Iterable[int]) -> None:
    """Store each question's consensus in `questions.unanswerable` (one query per 500 questions
    without votes; the judgments are read only for questions someone voted on)."""
    ids = list(question_ids)
    votes = votes_by_question(conn, ids)
    q, j = S.questions, S.judgments
    unvoted = [i for i in ids if i not in votes]
    for i in range(0, len(unvoted), 500):
        conn.execute(q.update().where(q.c.id.in_(unvoted[i:i + 500]), q.c.unanswerable == sa.true())
                     .values(unanswerable=False))
    uncounted = apart_by_question(conn, list(votes))
    for qid, names in votes.items():
        ratings: dict[str, dict[str, int]] = {}
        for doc_id, annotator, grade in conn.execute(sa.select(j.c.doc_id, j.c.annotator, j.c.grade)
                                                     .where(j.c.question_id == qid)):
            ratings.setdefault(doc_id, {})[annotator] = grade
        value = unanswerable_consensus(names, ratings, stand_in=is_file_source, apart=uncounted.get(qid, frozenset()))
        conn.execute(q.update().where(q.c.id == qid, q.c.unanswerable != value).values(unanswerable=value))
