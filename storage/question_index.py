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
An adjudicated grade (labeler_storage.adjudication) outweighs the consensus of its document, as in the
export, so a question's status here is the status its exported qrels have.
An imported grade counts only for a document no person graded (labeler.agreement.counted).
tests/storage/test_storage_index.py checks this against `labeler.agreement.consensus` on generated cases.

A process keeps what it computed (`QuestionIndexCache`, one per Store) and, after a write, recomputes only
the questions whose `touched` revision moved (labeler_storage.collection.bump_revision marks them, in any
process): a rerun after a grade reads the question rows and one question's judgments, not every
judgment of the collection.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.status import Status, status_from_counts
from labeler_storage import schema as S
from labeler_storage.collection import collection_id
from labeler_storage.grade_sources import apart_query
from labeler_storage.records import SOURCE_PREFIX, QuestionSummary


def relevant_documents_query(cid: int, ids: Sequence[int] | None = None) -> sa.Select:
    """Per (question row id, doc id) of the collection (or of the question rows `ids`): 1 if the
    consensus grade is >= 1, else 0."""
    j, q = S.judgments, S.questions
    n = sa.func.count()
    n_rel = sa.func.sum(sa.case((j.c.grade >= 1, 1), else_=0))
    below = sa.func.max(sa.case((j.c.grade < 1, j.c.grade)))   # largest grade < 1
    above = sa.func.min(sa.case((j.c.grade >= 1, j.c.grade)))  # smallest grade >= 1
    relevant = sa.case((2 * n_rel > n, 1), (sa.and_(2 * n_rel == n, below + above >= 2), 1), else_=0)
    # IN (subquery) rather than a join: SQLite then walks the (question, doc, annotator) unique
    # index in order and aggregates without a temporary B-tree (40 -> 30 ms on 16,700 judgments).
    which = sa.select(q.c.id).where(q.c.collection_id == cid) if ids is None else list(ids)
    # A file's grade counts only where no person graded the document, and never while its source is
    # kept apart (labeler.agreement.counted, labeler_storage.grade_sources).
    p = j.alias("person")
    is_source = j.c.annotator.startswith(SOURCE_PREFIX)
    person = sa.exists().where(p.c.question_id == j.c.question_id, p.c.doc_id == j.c.doc_id,
                               ~p.c.annotator.startswith(SOURCE_PREFIX))
    return (sa.select(j.c.question_id, j.c.doc_id, relevant.label("relevant"))
            .where(j.c.question_id.in_(which), sa.or_(~is_source, sa.and_(~person, j.c.annotator.not_in(apart_query(cid)))))
            .group_by(j.c.question_id, j.c.doc_id))


@dataclass(frozen=True)
class _Counts:
    touched: int      # the question row's `touched` when these were computed
    n_judged: int
    any_relevant: bool
    adjudicated: bool  # an adjudicated grade of a document no one's grade is left on
    annotators: tuple[str, ...]


class QuestionIndexCache:
    """What one process computed of its collections' question indexes: per question, its counts
    and the `touched` revision they are of. Thread-safe; entries are replaced, never mutated."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple, tuple[int, dict[int, _Counts]]] = {}

    def get(self, key: tuple) -> tuple[int, dict[int, _Counts]]:
        with self._lock:
            return self._entries.get(key, (-1, {}))

    def forget(self, collection: str) -> None:
        """Drop what is held of a collection (deleted: one made again under its name starts afresh)."""
        with self._lock:
            self._entries = {k: v for k, v in self._entries.items() if k[0] != collection}

    def put(self, key: tuple, value: tuple[int, dict[int, _Counts]]) -> None:
        with self._lock:
            self._entries = {k: v for k, v in self._entries.items() if k[0] != key[0] or k[-1] != key[-1]}
            self._entries[key] = value  # one entry per collection name (and with_annotators)


def question_index(conn: Connection, *, collection: str, with_annotators: bool = False,
                   cache: QuestionIndexCache | None = None) -> list[QuestionSummary]:
    """Every question of the collection (creation order) with status and judged count (and, with
    `with_annotators`, who judged it: a second scan a question picker does not need). With `cache`,
    only the questions changed since it was last asked are computed."""
    k = S.collections
    found = conn.execute(sa.select(k.c.id, k.c.revision, k.c.created_at).where(k.c.name == collection)).first()
    # first: what is read below is at least this new
    cid, rev, born = found if found is not None else (collection_id(conn, collection), 0, "")
    q = S.questions
    rows = conn.execute(sa.select(q.c.id, q.c.query_id, q.c.text, q.c.query_type, q.c.unanswerable, q.c.updated_at,
                                  q.c.touched).where(q.c.collection_id == cid).order_by(q.c.id)).all()
    key = (collection, cid, born, with_annotators)  # a collection deleted and made again starts afresh
    seen_rev, seen = cache.get(key) if cache is not None else (-1, {})
    if seen_rev != rev:
        changed = {r.id for r in rows if (c := seen.get(r.id)) is None or c.touched != r.touched}
        some = None if len(changed) > 500 or len(changed) == len(rows) else sorted(changed)  # bound the IN lists
        fresh = _counts(conn, cid, some, with_annotators) if changed else {}
        # Each question's `touched` as read above, before its counts: a write in between makes it differ next time.
        seen = {r.id: _Counts(r.touched, *fresh.get(r.id, _NOTHING)) if r.id in changed else seen[r.id] for r in rows}
        if cache is not None:
            cache.put(key, (rev, seen))
    return [QuestionSummary(r.query_id, r.text, r.query_type, bool(r.unanswerable),
                            _status(bool(r.unanswerable), (c := seen[r.id]).any_relevant, c.n_judged or c.adjudicated),
                            c.n_judged, r.updated_at, c.annotators) for r in rows]


_NOTHING = (0, False, False, ())


def _counts(conn: Connection, cid: int, ids: list[int] | None, with_annotators: bool) -> dict[int, tuple]:
    """(judged documents, any relevant, adjudicated documents no one graded, annotators) of the
    question rows `ids` (None: every question of the collection) that have any; adjudicated
    grades outweigh the consensus, as in the export."""
    docs = relevant_documents_query(cid, ids).subquery()
    a, q, j = S.adjudications, S.questions, S.judgments
    final = (sa.select(docs.c.question_id, sa.case((a.c.grade.is_(None), docs.c.relevant), (a.c.grade >= 1, 1),
                                                   else_=0).label("relevant"))
             .outerjoin(a, sa.and_(a.c.question_id == docs.c.question_id, a.c.doc_id == docs.c.doc_id)).subquery())
    out: dict[int, list] = {}
    for r in conn.execute(sa.select(final.c.question_id, sa.func.count().label("n_judged"),
                                    sa.func.max(final.c.relevant).label("any_relevant")).group_by(final.c.question_id)):
        out[r.question_id] = [r.n_judged, bool(r.any_relevant), False, ()]
    which = sa.select(q.c.id).where(q.c.collection_id == cid) if ids is None else ids
    # Adjudicated grades of documents nobody's grade is left on: the export keeps them, so they
    # make a question started, or done when one is >= 1.
    judged = sa.select(j.c.question_id).where(j.c.question_id == a.c.question_id, j.c.doc_id == a.c.doc_id)
    for question_id, relevant in conn.execute(
            sa.select(a.c.question_id, sa.func.max(sa.case((a.c.grade >= 1, 1), else_=0)))
            .where(a.c.question_id.in_(which), ~judged.exists()).group_by(a.c.question_id)):
        counts = out.setdefault(question_id, list(_NOTHING))
        counts[1], counts[2] = counts[1] or bool(relevant), True
    if with_annotators:
        people: dict[int, list[str]] = {}
        for question_id, annotator in conn.execute(
                sa.select(j.c.question_id, j.c.annotator).distinct()
                .where(j.c.question_id.in_(which), ~j.c.annotator.startswith(SOURCE_PREFIX))
                .order_by(j.c.question_id, j.c.annotator)):
            people.setdefault(question_id, []).append(annotator)
        for question_id, names in people.items():
            out.setdefault(question_id, list(_NOTHING))[3] = tuple(names)
    return {i: tuple(c) for i, c in out.items()}


def _status(unanswerable: bool, any_relevant: int, n_judged: int) -> Status:
    # The one rule (labeler.status), from counts instead of the consensus grades themselves.
    return status_from_counts(unanswerable, bool(any_relevant), bool(n_judged))


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


def recent_yield(conn: Connection, *, collection: str, annotator: str, last: int,
                 min_grade: int) -> dict[str, tuple[int, int]]:
    """query_id -> (documents `annotator` judged on it, how many of their `last` grades there, in the
    order first given, are >= `min_grade`): what the Label page's "likely to find more elsewhere" reads
    (labeler_app.spread), one row per question, from a window over that annotator's judgments."""
    q, j = S.questions, S.judgments
    cid = collection_id(conn, collection)
    newest = sa.func.row_number().over(partition_by=j.c.question_id,
                                       order_by=(j.c.created_at.desc(), j.c.doc_id.desc())).label("newest")
    mine = (sa.select(j.c.question_id, j.c.grade, newest).join(q, q.c.id == j.c.question_id)
            .where(j.c.annotator == annotator, q.c.collection_id == cid).subquery())
    found = sa.func.sum(sa.case((sa.and_(mine.c.newest <= last, mine.c.grade >= min_grade), 1), else_=0))
    rows = conn.execute(sa.select(q.c.query_id, sa.func.count(), found).join(q, q.c.id == mine.c.question_id)
                        .group_by(q.c.query_id))
    return {query_id: (int(n), int(k or 0)) for query_id, n, k in rows}
