"""Questions and judgments inside a transaction: writes and one question's status (the checks of what they are given: labeler_storage.checks).

Rules this module decides (DESIGN.md leaves them open):
- Unanswerable is each annotator's own vote (labeler_storage.votes has the rules and the consensus):
  one cannot vote so while grading a document of the question >= 1, nor grade >= 1 while
  voting so (grade 0, "seen and rejected", is fine).
- Grades set in the app are 0-3; an import may carry another scale if it was read with
  keep_scale=True, as long as each grade fits a 64-bit integer column.
Every write bumps the collection's revision in the same transaction.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.agreement import consensus
from labeler.corpus import Document
from labeler.errors import InputError
from labeler.status import status_of
from labeler_storage import schema as S
from labeler_storage import grade_sources, versions, votes
from labeler_storage.checks import check_annotator, check_grade, check_id, check_text, chunks
from labeler_storage.clock import now_iso
from labeler_storage.collection import bump_revision, collection_id, collection_row, lock_collection
from labeler_storage.records import IMPORT_ANNOTATOR, GradeEvent, Judgment, Question, QuestionStatus, is_file_source

_AUTO_ID = re.compile(r"q-(\d+)")

# --------------------------------------------------------------------------- rows


def question_query() -> sa.Select:
    """SELECT of every question column a `Question` needs, plus the row and collection ids."""
    q = S.questions
    return sa.select(q.c.id, q.c.collection_id, q.c.query_id, q.c.text, q.c.query_type, q.c.unanswerable, q.c.notes, q.c.author,
                     q.c.created_at, q.c.updated_at, q.c.extra, q.c.credited_annotators, q.c.corpus_fingerprint)


def to_question(row: Any) -> Question:
    """The record of a question_query() row."""
    return Question(
        query_id=row.query_id, question=row.text, query_type=row.query_type, unanswerable=bool(row.unanswerable),
        notes=row.notes, author=row.author, created_at=row.created_at, updated_at=row.updated_at,
        extra=row.extra or {}, annotators=tuple(row.credited_annotators or ()),
        corpus_fingerprint=row.corpus_fingerprint,
    )


def to_judgment(row: Any) -> Judgment:
    """The record of a judgments row joined with its query_id."""
    return Judgment(row.query_id, row.doc_id, row.grade, row.annotator, row.note, row.created_at, row.updated_at,
                    row.doc_hash)


def question_row(conn: Connection, collection: str, query_id: str, *, required: bool = True,
                 lock: bool = False) -> Any:
    """The question's row (question_query columns); None, or an InputError when `required`. With `lock`
    (a write), its collection is locked first (labeler_storage.collection.lock_collection)."""
    if lock:
        lock_collection(conn, collection)
    q, c = S.questions, S.collections
    row = conn.execute(question_query().join(c, c.c.id == q.c.collection_id)
                       .where(c.c.name == collection, q.c.query_id == query_id)).first()
    if row is None and required:
        collection_id(conn, collection)  # a missing collection has its own message
        raise InputError(f"no question {query_id!r} in collection {collection!r}",
                         hint="it may have been deleted; reload the question list.")
    return row


def judgment_rows(conn: Connection, cid: int, query_id: str | None = None,
                  annotator: str | None = None) -> list[Judgment]:
    """Judgments of a collection (by question, document, annotator), optionally filtered."""
    j, q = S.judgments, S.questions
    stmt = (sa.select(j, q.c.query_id).join(q, q.c.id == j.c.question_id).where(q.c.collection_id == cid)
            .order_by(q.c.id, j.c.doc_id, j.c.annotator))
    if query_id is not None:
        stmt = stmt.where(q.c.query_id == query_id)
    if annotator is not None:
        stmt = stmt.where(j.c.annotator == annotator)
    return [to_judgment(r) for r in conn.execute(stmt)]


def write_judgments(conn: Connection, rows: list[dict[str, Any]], *, by: str = "") -> None:
    """THE place a judgment is written: insert, or update grade/note/updated_at of the existing row.

    Each row: question_id, doc_id, grade, annotator, note, created_at, updated_at, and optionally
    doc_hash (the judged content; a row without one keeps the stored hash). A grade, note or
    content hash that an existing row changes is kept in the history first, as replaced by `by`
    (default: the row's annotator).
    """
    if not rows:
        return
    rows = [{"doc_hash": None, **r} for r in rows]
    stmt = _upsert_judgment(conn.dialect.name)
    for chunk in chunks(rows):
        keep_history(conn, chunk, change="regraded", by=by)
        conn.execute(stmt, chunk)


def keep_history(conn: Connection, rows: list[dict[str, Any]], *, change: str, by: str = "") -> None:
    """Copy the stored judgments these rows replace (or, for a clear, remove) into the history.

    `rows` name question_id, doc_id, annotator and, unless clearing, the new grade and note; a row
    that changes neither keeps no history. A row's `updated_at` (when the new grade is given) is
    the replaced time; without one, now.
    """
    j, h = S.judgments, S.judgment_history
    keys = {(r["question_id"], r["doc_id"], r["annotator"]): r for r in rows}
    now = now_iso(conn)
    # In CHUNKs: three variables per row, and SQLite's default limit is 32,766 (a re-import of a
    # rescaled golden set replaces every grade of up to CHUNK questions at once).
    for some in chunks(list(keys)):
        found = conn.execute(sa.select(j).where(sa.tuple_(j.c.question_id, j.c.doc_id, j.c.annotator).in_(some))
                             .order_by(j.c.id))
        old = []
        for row in found:
            new = keys[(row.question_id, row.doc_id, row.annotator)]
            if change == "regraded" and new.get("grade") == row.grade and (new.get("note") or "") == row.note \
                    and new.get("doc_hash") in (None, row.doc_hash):
                continue
            # A regrade replaces the old grade when the new one is given: the history reads gap-free.
            old.append(dict(question_id=row.question_id, doc_id=row.doc_id, annotator=row.annotator, grade=row.grade,
                            note=row.note, given_at=row.updated_at, replaced_at=new.get("updated_at") or now,
                            replaced_by=by or row.annotator, change=change, doc_hash=row.doc_hash))
        if old:
            conn.execute(h.insert(), old)


@functools.lru_cache(maxsize=4)
def _upsert_judgment(dialect: str):
    # Built once per dialect: constructing the ON CONFLICT clause cost ~0.8 ms of every grade click.
    t = S.judgments
    stmt = S.dialect_insert(dialect)(t)
    return stmt.on_conflict_do_update(
        index_elements=[t.c.question_id, t.c.doc_id, t.c.annotator],
        set_={"grade": stmt.excluded.grade, "note": stmt.excluded.note, "updated_at": stmt.excluded.updated_at,
              "doc_hash": sa.func.coalesce(stmt.excluded.doc_hash, t.c.doc_hash)},
    )


def _touch(conn: Connection, row: Any, **values: Any) -> None:
    # A question's updated_at moves with its judgments; the collection's revision with everything.
    conn.execute(S.questions.update().where(S.questions.c.id == row.id).values(updated_at=now_iso(conn), **values))
    bump_revision(conn, row.collection_id, [row.id])


# --------------------------------------------------------------------------- questions


def free_ids(conn: Connection, cid: int, n: int, *, taken: Iterable[str] = ()) -> list[str]:
    """The next `n` free `q-0001`-style ids of the collection: above every id it holds, every deleted
    question's (never given again) and every id in `taken` (an import's own ids)."""
    used = conn.execute(sa.select(S.questions.c.query_id).where(S.questions.c.collection_id == cid)).scalars()
    numbers = [int(m.group(1)) for qid in [*used, *taken] if (m := _AUTO_ID.fullmatch(qid))]
    deleted = conn.execute(sa.select(S.deleted_numbers.c.number)
                           .where(S.deleted_numbers.c.collection_id == cid)).scalar_one_or_none() or 0
    start = max(*numbers, deleted, 0) + 1
    return [f"q-{i:04d}" for i in range(start, start + n)]


def add_question(conn: Connection, text: str, *, collection: str, query_id: str | None, query_type: str,
                 notes: str, author: str, unanswerable: bool, extra: Mapping[str, Any] | None,
                 corpus_fingerprint: str | None) -> Question:
    """Insert a question (query_id defaults to the next free `q-0001`-style id)."""
    check_text(text)
    if query_id is not None:
        check_id(query_id, "query id")
    cid = collection_id(conn, collection, create=True)
    if query_id is None:
        query_id = free_ids(conn, cid, 1)[0]
    elif question_row(conn, collection, query_id, required=False) is not None:
        raise InputError(f"question {query_id!r} already exists in collection {collection!r}",
                         hint="pick another query_id, or edit the existing question.")
    now = now_iso(conn)
    if corpus_fingerprint is None:
        corpus_fingerprint = collection_row(conn, collection).corpus_fingerprint
    conn.execute(S.questions.insert().values(
        collection_id=cid, query_id=query_id, text=text, query_type=query_type or "",
        unanswerable=bool(unanswerable), notes=notes or "", author=author or "", updated_by=author or "",
        created_at=now,
        updated_at=now, extra=dict(extra or {}), credited_annotators=[], corpus_fingerprint=corpus_fingerprint))
    if unanswerable:  # written as unanswerable: its author's vote (or the import's, without an author)
        row = question_row(conn, collection, query_id)
        votes.write_vote(conn, row.id, author or IMPORT_ANNOTATOR, True)
    bump_revision(conn, cid, [question_row(conn, collection, query_id).id])
    return to_question(question_row(conn, collection, query_id))


def edit_question(conn: Connection, query_id: str, *, collection: str, values: dict[str, Any]) -> Question:
    """Change the given columns of a question (no values: nothing changes)."""
    if "text" in values:
        check_text(values["text"])
    row = question_row(conn, collection, query_id, lock=True)
    if values:
        _touch(conn, row, **values)
    return to_question(question_row(conn, collection, query_id))


def delete_question(conn: Connection, query_id: str, *, collection: str) -> bool:
    """Delete a question and (by cascade) its judgments; False if there was none."""
    row = question_row(conn, collection, query_id, required=False, lock=True)
    if row is None:
        return False
    conn.execute(S.questions.delete().where(S.questions.c.id == row.id))
    if m := _AUTO_ID.fullmatch(query_id):  # remembered: its id is never given to a new question
        d = S.deleted_numbers
        stmt = S.dialect_insert(conn.dialect.name)(d).values(collection_id=row.collection_id, number=int(m.group(1)))
        conn.execute(stmt.on_conflict_do_update(index_elements=[d.c.collection_id],
                                                set_={"number": sa.case((stmt.excluded.number > d.c.number,
                                                                          stmt.excluded.number), else_=d.c.number)}))
    bump_revision(conn, row.collection_id)
    return True


def set_unanswerable(conn: Connection, query_id: str, unanswerable: bool, *, collection: str,
                     by: str = "") -> Question:
    """Record (or withdraw) `by`'s vote that no document answers the question; refused while they
    grade one of its documents >= 1. The question's flag becomes the team's consensus."""
    annotator = check_annotator(by)
    row = question_row(conn, collection, query_id, lock=True)
    if unanswerable:
        votes.check_vote_allowed(conn, row.id, query_id, annotator)
    if votes.write_vote(conn, row.id, annotator, unanswerable):
        votes.refresh_unanswerable(conn, [row.id])
        _touch(conn, row, updated_by=annotator)
    return to_question(question_row(conn, collection, query_id))


# --------------------------------------------------------------------------- judgments


def set_judgment(conn: Connection, query_id: str, doc_id: str, grade: int, *, annotator: str,
                 collection: str, note: str, doc: Document | None = None) -> Judgment:
    """Record `annotator`'s grade (0-3) for a document, replacing their earlier one; with `doc`
    (the document as the annotator saw it) its content hash and text are kept with the grade."""
    check_id(doc_id, "doc id")
    check_grade(grade)
    annotator = check_annotator(annotator)
    row = question_row(conn, collection, query_id, lock=True)
    votes.check_grade_allowed(conn, row.id, query_id, annotator, grade)
    now = now_iso(conn)
    if doc is not None:
        versions.keep_texts(conn, [doc])
    write_judgments(conn, [dict(question_id=row.id, doc_id=doc_id, grade=grade, annotator=annotator,
                                note=note or "", created_at=now, updated_at=now,
                                doc_hash=doc.content_hash if doc is not None else None)])
    votes.refresh_unanswerable(conn, [row.id])
    _touch(conn, row)
    j = S.judgments
    out = conn.execute(sa.select(j, sa.literal(query_id).label("query_id")).where(
        j.c.question_id == row.id, j.c.doc_id == doc_id, j.c.annotator == annotator)).one()
    return to_judgment(out)


def confirm_judgment(conn: Connection, query_id: str, doc_id: str, *, annotator: str, collection: str,
                     doc: Document) -> bool:
    """`annotator` confirms their grade still holds for the document as it is now (`doc`): the grade
    becomes current (the old content hash goes to the history, change "confirmed"); False if
    they had no grade for it."""
    row = question_row(conn, collection, query_id, lock=True)
    j = S.judgments
    old = conn.execute(sa.select(j).where(j.c.question_id == row.id, j.c.doc_id == doc_id,
                                          j.c.annotator == annotator)).first()
    if old is None:
        return False
    if old.doc_hash == doc.content_hash:
        return True
    now = now_iso(conn)
    keep_history(conn, [dict(question_id=row.id, doc_id=doc_id, annotator=annotator, updated_at=now)],
                 change="confirmed", by=annotator)
    versions.keep_texts(conn, [doc])
    conn.execute(j.update().where(j.c.id == old.id).values(doc_hash=doc.content_hash, updated_at=now))
    _touch(conn, row)
    return True


def clear_judgment(conn: Connection, query_id: str, doc_id: str, *, annotator: str, collection: str) -> bool:
    """Remove `annotator`'s grade for the document; False if there was none."""
    row = question_row(conn, collection, query_id, lock=True)
    j = S.judgments
    keep_history(conn, [dict(question_id=row.id, doc_id=doc_id, annotator=annotator)], change="cleared")
    done = conn.execute(j.delete().where(j.c.question_id == row.id, j.c.doc_id == doc_id,
                                         j.c.annotator == annotator)).rowcount > 0
    if done:
        votes.refresh_unanswerable(conn, [row.id])
        _touch(conn, row)
    return done


def grade_history(conn: Connection, query_id: str, *, collection: str) -> list[GradeEvent]:
    """Every grade given on a question, current and replaced, oldest first."""
    row = question_row(conn, collection, query_id)
    j, h = S.judgments, S.judgment_history
    # History in the order it was written (ids), then the current grades; the sort is stable, so
    # grades given within one second (times have second precision) keep that order.
    events = [GradeEvent(r.doc_id, r.annotator, r.grade, r.note, r.given_at, r.replaced_at, r.replaced_by, r.change,
                         r.doc_hash)
              for r in conn.execute(sa.select(h).where(h.c.question_id == row.id).order_by(h.c.id))]
    events += [GradeEvent(r.doc_id, r.annotator, r.grade, r.note, r.updated_at, doc_hash=r.doc_hash)
               for r in conn.execute(sa.select(j).where(j.c.question_id == row.id).order_by(j.c.annotator))]
    return sorted(events, key=lambda e: (e.doc_id, e.given_at, e.replaced_at or "~"))


# --------------------------------------------------------------------------- one question's status


def status_for(question: Question, judgments: tuple[Judgment, ...], voters: tuple[str, ...] = (),
               adjudicated: Mapping[str, int] | None = None, apart: frozenset[str] = frozenset()) -> QuestionStatus:
    """A question with its judgments, their consensus grades, its status and its unanswerable votes.
    Adjudicated grades {doc_id: grade} outweigh the consensus in the status, as in the export; the
    grades of sources `apart` (labeler_storage.grade_sources) are not counted."""
    ratings: dict[tuple[str, str], dict[str, int]] = {}
    for j in judgments:
        ratings.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.grade
    grades = dict(consensus(ratings, stand_in=is_file_source, apart=apart).qrels.get(question.query_id, {}))
    adjudicated = dict(adjudicated or {})
    return QuestionStatus(question, judgments, grades, status_of(question.unanswerable, {**grades, **adjudicated}),
                          voters, adjudicated)


def _adjudicated(conn: Connection, question_ids: list[int]) -> dict[int, dict[str, int]]:
    """question row id -> {doc_id: adjudicated grade} (labeler_storage.adjudication writes them)."""
    a = S.adjudications
    out: dict[int, dict[str, int]] = {}
    for i in range(0, len(question_ids), 500):
        for r in conn.execute(sa.select(a.c.question_id, a.c.doc_id, a.c.grade)
                              .where(a.c.question_id.in_(question_ids[i:i + 500]))):
            out.setdefault(r.question_id, {})[r.doc_id] = r.grade
    return out


def question_status(conn: Connection, query_id: str, *, collection: str) -> QuestionStatus | None:
    """One question with its judgments, consensus and status, reading only its rows; None if missing."""
    row = question_row(conn, collection, query_id, required=False)
    if row is None:
        return None
    j = S.judgments
    rows = conn.execute(sa.select(j, sa.literal(query_id).label("query_id"))
                        .where(j.c.question_id == row.id).order_by(j.c.doc_id, j.c.annotator))
    return status_for(to_question(row), tuple(to_judgment(r) for r in rows), votes.voters(conn, row.id),
                      _adjudicated(conn, [row.id]).get(row.id), grade_sources.apart(conn, row.collection_id))


def list_questions(conn: Connection, *, collection: str) -> list[QuestionStatus]:
    """Every question (in creation order) with its judgments, consensus grades and status."""
    cid = collection_id(conn, collection)
    rows = conn.execute(question_query().where(S.questions.c.collection_id == cid).order_by(S.questions.c.id)).all()
    voted = votes.votes_by_question(conn, [r.id for r in rows])
    by_question: dict[str, list[Judgment]] = {}
    for j in judgment_rows(conn, cid):
        by_question.setdefault(j.query_id, []).append(j)
    adjudicated = _adjudicated(conn, [r.id for r in rows])
    uncounted = grade_sources.apart(conn, cid)
    return [status_for(to_question(r), tuple(by_question.get(r.query_id, ())), voted.get(r.id, ()),
                       adjudicated.get(r.id), uncounted) for r in rows]
