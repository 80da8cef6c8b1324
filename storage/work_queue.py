"""The shared work queue: which question an annotator judges next, claimed with a lease.

A question wants `overlap` independent judges (a team setting). Its seats are taken by the
people who judged it (graded at least one document or voted it unanswerable; the import
pseudo-annotator is no judge) and by the live claims of others. "Next question" picks, among
the questions with a free seat that this annotator has neither judged nor claimed, the one
closest to full (most seats taken), then the oldest; and claims it until `expires_at`. An
expired claim is deleted by the next call, which returns the question to the queue.
Seats are not the labelling status (labeler.status): a question is *done* once a document is
relevant, and stays in the queue until `overlap` people have judged it.

Atomic on both engines: the pick and the claim run in one write transaction that first locks
the collection (labeler_storage.collection.lock_collection: BEGIN IMMEDIATE on SQLite, the collection
row FOR NO KEY UPDATE on PostgreSQL), so two annotators asking at once queue for a few
milliseconds and the second sees the first's claim; none takes a seat that is gone. The unique
(question, annotator) key makes a second claim of one person on one question impossible anyway.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError
from labeler_storage import schema as S
from labeler_storage.clock import iso
from labeler_storage.collection import collection_row, lock_collection
from labeler_storage.records import is_file_source


@dataclass(frozen=True)
class AnnotatorProgress:
    """One annotator's work on a collection: questions judged, judgments, and recent pace."""

    annotator: str
    questions: int  # judged at least one document or voted unanswerable
    judgments: int
    recent: int  # judgments given (or last changed) in the window
    per_hour: float  # recent / window hours


def _judges(cid: int, annotator: str | None = None) -> sa.Select:
    """(question row id, annotator) for everyone (or `annotator`) who judged a question of the collection."""
    q, j, v = S.questions, S.judgments, S.unanswerable_votes
    mine = sa.select(q.c.id).where(q.c.collection_id == cid)
    graded = sa.select(j.c.question_id, j.c.annotator).where(j.c.question_id.in_(mine))
    voted = sa.select(v.c.question_id, v.c.annotator).where(v.c.question_id.in_(mine))
    if annotator is not None:  # their rows only: the annotator index (ix_judgments_annotator)
        graded, voted = graded.where(j.c.annotator == annotator), voted.where(v.c.annotator == annotator)
    return sa.union(graded, voted)


def seats(conn: Connection, cid: int, now: str) -> dict[int, set[str]]:
    """question row id -> who holds a seat on it: its judges and the holders of live claims."""
    c, q = S.claims, S.questions
    taken: dict[int, set[str]] = {}
    for qid, who in conn.execute(_judges(cid)):
        if not is_file_source(who):
            taken.setdefault(qid, set()).add(who)
    for qid, who in conn.execute(sa.select(c.c.question_id, c.c.annotator).join(q, q.c.id == c.c.question_id)
                                 .where(q.c.collection_id == cid, c.c.expires_at > now)):
        taken.setdefault(qid, set()).add(who)
    return taken


def seats_by_query(conn: Connection, collection: str, *, now: datetime) -> dict[str, int]:
    """query_id -> how many seats are taken on it (its judges and live claims), for every question."""
    row = collection_row(conn, collection)
    if row is None:
        return {}
    q, taken = S.questions, seats(conn, row.id, iso(now))
    return {query_id: len(taken.get(rid, ())) for rid, query_id in conn.execute(
        sa.select(q.c.id, q.c.query_id).where(q.c.collection_id == row.id).order_by(q.c.id))}


def next_question(conn: Connection, collection: str, annotator: str, *, overlap: int, now: datetime,
                  lease: timedelta, give_back: str | None = None,
                  first: Mapping[str, float] | None = None, last: Collection[str] = ()) -> str | None:
    """Claim the next question for `annotator` (or renew the claim they hold on one they have not
    judged yet); its query_id, or None when no question wants them. With `give_back`, first release
    their claim on that question and record that they declined it: this pick passes it over, and later
    picks offer their declined questions only when nothing else wants them. `first`: query_id -> a
    priority; among the open questions, the highest goes first (then the rule above). Call in a write
    transaction."""
    if not annotator.strip():
        raise InputError("the queue needs an annotator name", hint="sign in, or type your name in the sidebar.")
    lock_collection(conn, collection)
    row = collection_row(conn, collection)
    if row is None:
        return None
    c, q, at = S.claims, S.questions, iso(now)
    conn.execute(c.delete().where(c.c.expires_at <= at))  # expired leases go back to the queue
    judged = {qid for qid, _ in conn.execute(_judges(row.id, annotator))}
    if give_back is not None:
        conn.execute(c.delete().where(_claim_filter(collection, give_back, annotator)))
        returned = conn.execute(sa.select(q.c.id).where(q.c.collection_id == row.id,
                                                        q.c.query_id == give_back)).scalar_one_or_none()
        if returned is not None:
            judged.add(returned)
            decline = S.dialect_insert(conn.dialect.name)(S.declines).values(question_id=returned,
                                                                              annotator=annotator, at=at)
            conn.execute(decline.on_conflict_do_update(index_elements=[S.declines.c.question_id,
                                                                       S.declines.c.annotator],
                                                       set_={"at": decline.excluded.at}))
    held = conn.execute(sa.select(c.c.question_id).join(q, q.c.id == c.c.question_id).where(
        q.c.collection_id == row.id, c.c.annotator == annotator).order_by(c.c.claimed_at, c.c.question_id)).scalars()
    pick = next((qid for qid in held if qid not in judged), None)
    if pick is None:
        taken = seats(conn, row.id, at)
        ids = dict(conn.execute(sa.select(q.c.id, q.c.query_id).where(q.c.collection_id == row.id)
                                .order_by(q.c.id)).all())
        order = list(ids)
        open_ = [qid for qid in order if qid not in judged and annotator not in taken.get(qid, ())
                 and len(taken.get(qid, ())) < overlap]
        if not open_:
            return None
        declined = set(conn.execute(sa.select(S.declines.c.question_id).join(q, q.c.id == S.declines.c.question_id)
                                    .where(q.c.collection_id == row.id, S.declines.c.annotator == annotator)).scalars())
        rank = {qid: i for i, qid in enumerate(order)}
        priority = {qid: (first or {}).get(ids[qid], 0.0) for qid in open_}
        later = set(conn.execute(sa.select(q.c.id).where(q.c.collection_id == row.id,
                                                         q.c.query_id.in_(list(last)))).scalars()) if last else set()
        pick = min(open_, key=lambda qid: (qid in declined, qid in later, -priority[qid], -len(taken.get(qid, ())),
                                           rank[qid]))
    stmt = S.dialect_insert(conn.dialect.name)(c).values(question_id=pick, annotator=annotator, claimed_at=at,
                                                         expires_at=iso(now + lease))
    conn.execute(stmt.on_conflict_do_update(index_elements=[c.c.question_id, c.c.annotator],
                                            set_={"expires_at": stmt.excluded.expires_at}))
    return conn.execute(sa.select(q.c.query_id).where(q.c.id == pick)).scalar_one()


def _claim_filter(collection: str, query_id: str, annotator: str) -> sa.ColumnElement:
    c, q, k = S.claims, S.questions, S.collections
    question = (sa.select(q.c.id).join(k, k.c.id == q.c.collection_id)
                .where(k.c.name == collection, q.c.query_id == query_id).scalar_subquery())
    return sa.and_(c.c.question_id == question, c.c.annotator == annotator)


def renew_claim(conn: Connection, collection: str, query_id: str, annotator: str, *, now: datetime,
                lease: timedelta) -> bool:
    """Extend `annotator`'s live claim on the question to now + lease; False when they hold none."""
    c = S.claims
    return conn.execute(c.update().where(_claim_filter(collection, query_id, annotator),
                                         c.c.expires_at > iso(now))
                        .values(expires_at=iso(now + lease))).rowcount > 0


def release_claim(conn: Connection, collection: str, query_id: str, annotator: str) -> bool:
    """Give the question back to the queue; False when `annotator` held no claim on it."""
    return conn.execute(S.claims.delete().where(_claim_filter(collection, query_id, annotator))).rowcount > 0


def claim_expiry(conn: Connection, collection: str, query_id: str, annotator: str, *, now: datetime) -> str | None:
    """When `annotator`'s live claim on the question ends (ISO UTC), or None when they hold none."""
    c = S.claims
    return conn.execute(sa.select(c.c.expires_at).where(_claim_filter(collection, query_id, annotator),
                                                        c.c.expires_at > iso(now))).scalar()


def claims_of(conn: Connection, collection: str, *, now: datetime) -> dict[str, list[str]]:
    """query_id -> the annotators holding a live claim on it."""
    c, q, k = S.claims, S.questions, S.collections
    out: dict[str, list[str]] = {}
    for query_id, who in conn.execute(
            sa.select(q.c.query_id, c.c.annotator).join(q, q.c.id == c.c.question_id)
            .join(k, k.c.id == q.c.collection_id).where(k.c.name == collection, c.c.expires_at > iso(now))
            .order_by(q.c.id, c.c.annotator)):
        out.setdefault(query_id, []).append(who)
    return out


def progress(conn: Connection, collection: str, *, now: datetime, window: timedelta) -> list[AnnotatorProgress]:
    """Per annotator (people only, by name): questions judged, judgments, judgments per hour over `window`."""
    row = collection_row(conn, collection)
    if row is None:
        return []
    j, q = S.judgments, S.questions
    questions: dict[str, set[int]] = {}
    for qid, who in conn.execute(_judges(row.id)):
        questions.setdefault(who, set()).add(qid)
    since = iso(now - window)
    counts = {who: (n, recent or 0) for who, n, recent in conn.execute(
        sa.select(j.c.annotator, sa.func.count(), sa.func.sum(sa.case((j.c.updated_at >= since, 1), else_=0)))
        .where(j.c.question_id.in_(sa.select(q.c.id).where(q.c.collection_id == row.id))).group_by(j.c.annotator))}
    hours = window.total_seconds() / 3600
    return [AnnotatorProgress(who, len(questions.get(who, ())), counts.get(who, (0, 0))[0],
                              int(counts.get(who, (0, 0))[1]), counts.get(who, (0, 0))[1] / hours)
            for who in sorted(set(questions) | set(counts)) if not is_file_source(who)]
