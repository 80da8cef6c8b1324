"""Corpus versions, judged documents' content, and stale judgments, inside the caller's transaction.

Opening a corpus whose content differs from the collection's latest version records a new
version with its diff (labeler.corpus.versions) and makes its content hashes the current ones
(`corpus_docs`). A judgment keeps the hash of the document it was given against; it is stale
when the current hash differs (edited) or the document is not in the current version (deleted).
A judgment with no hash (given before v8, or without the document at hand) is hashed against
the version it most likely was given on — the latest one before the change — and the new
version's note says how many were.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.corpus import Corpus, Document
from labeler.corpus.versions import DELETED, EDITED, CorpusDiff, corpus_source, diff_hashes, same_source
from labeler_storage import schema as S
from labeler_storage.clock import now_iso


NEW_CORPUS = "new_corpus"  # in a version's stored diff: it records another corpus, not an edit


@dataclass(frozen=True)
class CorpusVersion:
    """One recorded content of a collection's corpus."""

    version: int
    corpus_path: str | None
    fingerprint: str
    n_docs: int
    diff: CorpusDiff
    note: str
    created_at: str
    created_by: str
    new_corpus: bool = False  # another source than the version before: no diff against it is recorded


@dataclass(frozen=True)
class StaleJudgment:
    """A judgment whose document changed (or went) since it was given."""

    query_id: str
    doc_id: str
    annotator: str
    grade: int
    reason: str  # "edited" or "deleted"
    given_hash: str | None
    current_hash: str | None


def _version(row: Any) -> CorpusVersion:
    return CorpusVersion(row.version, row.corpus_path, row.fingerprint, row.n_docs, CorpusDiff.from_json(row.diff),
                         row.note, row.created_at, row.created_by, bool(row.diff.get(NEW_CORPUS)))


def versions(conn: Connection, cid: int) -> list[CorpusVersion]:
    """The collection's corpus versions, newest first."""
    v = S.corpus_versions
    return [_version(r) for r in conn.execute(sa.select(v).where(v.c.collection_id == cid)
                                              .order_by(v.c.version.desc()))]


def latest(conn: Connection, cid: int) -> CorpusVersion | None:
    """The collection's current corpus version (None before one is recorded)."""
    v = S.corpus_versions
    row = conn.execute(sa.select(v).where(v.c.collection_id == cid).order_by(v.c.version.desc()).limit(1)).first()
    return _version(row) if row is not None else None


def keep_texts(conn: Connection, docs: Iterable[Document]) -> None:
    """Store what these documents say, by content hash (once per content)."""
    t = S.doc_texts
    rows = {d.content_hash: dict(doc_hash=d.content_hash, title=d.title, text=d.text, metadata=dict(d.metadata))
            for d in docs}
    if not rows:
        return
    hashes = list(rows)
    for i in range(0, len(hashes), 500):
        known = set(conn.execute(sa.select(t.c.doc_hash).where(t.c.doc_hash.in_(hashes[i:i + 500]))).scalars())
        new = [rows[h] for h in hashes[i:i + 500] if h not in known]
        if new:  # ON CONFLICT DO NOTHING: the texts are shared by all collections, whose writers do not queue
            conn.execute(S.insert_ignore(t, conn.dialect.name), new)


def text_of(conn: Connection, doc_hash: str | None) -> Document | None:
    """The document content stored under a hash (doc_id left empty), or None."""
    if doc_hash is None:
        return None
    t = S.doc_texts
    row = conn.execute(sa.select(t).where(t.c.doc_hash == doc_hash)).first()
    return Document("", row.title, row.text, row.metadata or {}) if row is not None else None


def current_hashes(conn: Connection, cid: int) -> dict[str, str] | None:
    """{doc_id: content hash} of the current corpus version (None before one is recorded)."""
    return _current_hashes(conn, cid) if latest(conn, cid) is not None else None


def _current_hashes(conn: Connection, cid: int) -> dict[str, str]:
    d = S.corpus_docs
    return dict(conn.execute(sa.select(d.c.doc_id, d.c.doc_hash).where(d.c.collection_id == cid)).all())


def _hash_unhashed(conn: Connection, cid: int, hashes: dict[str, str], corpus: Corpus | None) -> int:
    """Give judgments without a hash the hash of their document in `hashes`; how many."""
    j, q = S.judgments, S.questions
    rows = conn.execute(sa.select(j.c.id, j.c.doc_id).where(
        j.c.doc_hash.is_(None), j.c.question_id.in_(sa.select(q.c.id).where(q.c.collection_id == cid)))).all()
    todo = [dict(jid=r.id, h=hashes[r.doc_id]) for r in rows if r.doc_id in hashes]
    if todo:
        conn.execute(j.update().where(j.c.id == sa.bindparam("jid")).values(doc_hash=sa.bindparam("h")), todo)
        if corpus is not None:
            keep_texts(conn, (d for doc_id in {r.doc_id for r in rows if r.doc_id in hashes}
                              if (d := corpus.get(doc_id)) is not None))
    return len(todo)


def record_version(conn: Connection, cid: int, corpus: Corpus, corpus_path: str | None, *,
                   by: str = "") -> CorpusVersion | None:
    """Record `corpus` as the collection's current version unless it already is; the new version."""
    last = latest(conn, cid)
    if last is not None and last.fingerprint == corpus.fingerprint:
        return None
    new = corpus.doc_hashes
    old = _current_hashes(conn, cid) if last is not None else {}
    # Judgments with no hash were given against the content before this change (or, on the
    # first version, against this one: nothing older is known).
    adopted = _hash_unhashed(conn, cid, old, None) if last is not None else _hash_unhashed(conn, cid, new, corpus)
    diff = diff_hashes(old, new) if last is not None else CorpusDiff()
    other = last is not None and not same_source(last.corpus_path, corpus_path)
    if last is None:
        note = "first version recorded"
    elif other:  # not an edit of the corpus before it: its "diff" would be every document
        note = (f"another corpus ({corpus_source(corpus_path)}, {len(corpus)} documents), not a version of "
                f"{corpus_source(last.corpus_path)}")
    else:
        note = f"changed since version {last.version}: {diff.text}"
    if adopted:
        note += (f"; {adopted} judgments given before content hashes were kept were hashed against "
                 + ("this version" if last is None else f"version {last.version}"))
    number = (last.version if last is not None else 0) + 1
    v, d = S.corpus_versions, S.corpus_docs
    conn.execute(v.insert().values(collection_id=cid, version=number, corpus_path=corpus_path,
                                   fingerprint=corpus.fingerprint, n_docs=len(corpus), note=note,
                                   diff={NEW_CORPUS: True} if other else diff.as_json(),
                                   created_at=now_iso(conn), created_by=by))
    if last is None:
        if new:
            conn.execute(d.insert(), [dict(collection_id=cid, doc_id=k, doc_hash=h) for k, h in new.items()])
    else:  # only what changed: a one-document edit of a large corpus writes one row
        for doc_id in diff.deleted:
            conn.execute(d.delete().where(d.c.collection_id == cid, d.c.doc_id == doc_id))
        changed = [dict(cid_=cid, doc_id_=k, h=new[k]) for k in diff.edited]
        if changed:
            conn.execute(d.update().where(d.c.collection_id == sa.bindparam("cid_"), d.c.doc_id == sa.bindparam("doc_id_"))
                         .values(doc_hash=sa.bindparam("h")), changed)
        if diff.added:
            conn.execute(d.insert(), [dict(collection_id=cid, doc_id=k, doc_hash=new[k]) for k in diff.added])
    return latest(conn, cid)


def stale_query(cid: int) -> sa.Select:
    """SELECT of the collection's stale judgments (empty while no version is recorded)."""
    j, q, d = S.judgments, S.questions, S.corpus_docs
    has_version = sa.exists(sa.select(d.c.doc_id).where(d.c.collection_id == cid))
    current = d.c.doc_hash
    return (sa.select(q.c.query_id, j.c.doc_id, j.c.annotator, j.c.grade, j.c.doc_hash.label("given_hash"),
                      current.label("current_hash"))
            .join(q, q.c.id == j.c.question_id)
            .outerjoin(d, sa.and_(d.c.collection_id == cid, d.c.doc_id == j.c.doc_id))
            .where(q.c.collection_id == cid, has_version,
                   sa.or_(current.is_(None), sa.and_(j.c.doc_hash.is_not(None), j.c.doc_hash != current)))
            .order_by(q.c.id, j.c.doc_id, j.c.annotator))


def stale_judgments(conn: Connection, cid: int, *, query_id: str | None = None,
                    annotator: str | None = None) -> list[StaleJudgment]:
    """Judgments whose document was edited or deleted since they were given."""
    stmt = stale_query(cid)
    if query_id is not None:
        stmt = stmt.where(S.questions.c.query_id == query_id)
    if annotator is not None:
        stmt = stmt.where(S.judgments.c.annotator == annotator)
    return [StaleJudgment(r.query_id, r.doc_id, r.annotator, r.grade, DELETED if r.current_hash is None else EDITED,
                          r.given_hash, r.current_hash) for r in conn.execute(stmt)]


def current_hash(conn: Connection, cid: int, doc_id: str) -> str | None:
    """The document's hash in the current version (None: not in it, or no version recorded)."""
    d = S.corpus_docs
    return conn.execute(sa.select(d.c.doc_hash).where(d.c.collection_id == cid, d.c.doc_id == doc_id)).scalar()
