"""Collections inside a transaction: lookup, creation, corpus details, and the revision counter.

Functions here take an open `Connection`; the `Store` decides the transaction around them.

A write to a collection first locks its row (`lock_collection`; on SQLite the whole database is
already locked by BEGIN IMMEDIATE): on PostgreSQL's READ COMMITTED, what a write reads before it
writes (the next free question id, the votes a consensus is made of, the grade a regrade
replaces) then stays true until it commits, as on SQLite. Writers to other collections go on.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError
from labeler_storage import schema as S
from labeler_storage.clock import now_iso
from labeler_storage.records import DEFAULT_COLLECTION, Collection


def collection_row(conn: Connection, name: str) -> Any:
    """The collection's row with its latest corpus version (number and fingerprint), or None."""
    c, v = S.collections, S.corpus_versions
    latest = sa.select(v.c.version, v.c.fingerprint).where(v.c.collection_id == c.c.id).order_by(v.c.version.desc()).limit(1)
    return conn.execute(sa.select(c, latest.with_only_columns(v.c.version).scalar_subquery().label("corpus_version"),
                                  latest.with_only_columns(v.c.fingerprint).scalar_subquery().label("version_fingerprint"))
                        .where(c.c.name == name)).first()


def collection_id(conn: Connection, name: str, *, create: bool = False) -> int:
    """The collection's id; with `create` (a write) created if missing and locked, else an InputError naming
    the known ones."""
    if create:
        lock_collection(conn, name)
    row = collection_row(conn, name)
    if row is not None:
        return row.id
    if not create:
        known = [r.name for r in conn.execute(sa.select(S.collections.c.name).order_by(S.collections.c.name))]
        raise InputError(f"no collection named {name!r}",
                         hint=f"known collections: {', '.join(known) or '(none yet)'}; "
                              "import a golden set or add a question to create one.")
    if not isinstance(name, str) or not name.strip():
        raise InputError("a collection name is required", hint=f"the default is {DEFAULT_COLLECTION!r}.")
    # Two first writes to a new collection at once: one inserts, the other finds its row (and waits for it).
    conn.execute(S.insert_ignore(S.collections, conn.dialect.name).values(name=name, created_at=now_iso(conn), revision=1))
    lock_collection(conn, name)
    return conn.execute(sa.select(S.collections.c.id).where(S.collections.c.name == name)).scalar_one()


def lock_collection(conn: Connection, name: str) -> None:
    """Lock the collection's row (if it exists) until the write transaction ends; before the write reads
    anything. SQLite: nothing to do, BEGIN IMMEDIATE locked the database."""
    if conn.dialect.name == "sqlite":
        return
    c = S.collections
    # FOR NO KEY UPDATE: the lock that bumping `revision` takes anyway, taken before the reads.
    conn.execute(sa.select(c.c.id).where(c.c.name == name).with_for_update(key_share=True))


def to_collection(row: Any) -> Collection:
    """The record of a collections row."""
    return Collection(row.name, row.corpus_path, row.corpus_fingerprint, row.created_at,
                      getattr(row, "corpus_version", None), getattr(row, "version_fingerprint", None))


def bump_revision(conn: Connection, cid: int, questions: Iterable[int] | None = ()) -> None:
    """Count one more change to the collection, in the caller's write transaction, and mark the
    question rows it changed (None: every question of the collection) as touched at that revision:
    what a held question index must recompute (labeler_storage.question_index.QuestionIndexCache)."""
    c, q = S.collections, S.questions
    conn.execute(c.update().where(c.c.id == cid).values(revision=c.c.revision + 1))
    now = sa.select(c.c.revision).where(c.c.id == cid).scalar_subquery()
    if questions is None:
        conn.execute(q.update().where(q.c.collection_id == cid).values(touched=now))
    elif ids := sorted(set(questions)):
        for i in range(0, len(ids), 500):
            conn.execute(q.update().where(q.c.id.in_(ids[i:i + 500])).values(touched=now))


def record_corpus(conn: Connection, cid: int, corpus_path: str | None, corpus_fingerprint: str | None,
                  *, by: str = "") -> bool:
    """Record the given (non-None) corpus path/fingerprint on the collection; True if one changed."""
    c = S.collections
    row = conn.execute(sa.select(c.c.corpus_path, c.c.corpus_fingerprint).where(c.c.id == cid)).one()
    values = {k: v for k, v in (("corpus_path", corpus_path), ("corpus_fingerprint", corpus_fingerprint))
              if v is not None and getattr(row, k) != v}
    if values:
        conn.execute(c.update().where(c.c.id == cid).values(**values, corpus_set_by=by, corpus_set_at=now_iso(conn)))
    return bool(values)


def revision(conn: Connection, name: str) -> int:
    """The collection's revision: 0 while it does not exist, 1 when created, +1 per change."""
    value = conn.execute(sa.select(S.collections.c.revision).where(S.collections.c.name == name)).scalar()
    return value or 0
