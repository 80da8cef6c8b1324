"""`store.collections`: collections, their revision counter, and their corpus versions and hashes
(labeler_storage.collection, labeler_storage.versions)."""
from __future__ import annotations

import sqlalchemy as sa

from labeler.corpus import Corpus, Document
from labeler_storage import collection as C
from labeler_storage import schema as S
from labeler_storage import versions
from labeler_storage.records import DEFAULT_COLLECTION, Collection
from labeler_storage.topics.base import Topic
from labeler_storage.versions import CorpusVersion


class Collections(Topic):
    """Collections (a golden set's questions, judgments and runs) and the corpus each searches."""

    def ensure(self, collection: str = DEFAULT_COLLECTION, *, corpus_path: str | None = None,
               corpus_fingerprint: str | None = None, by: str = "", corpus: Corpus | None = None) -> Collection:
        """The collection, created if missing; a given corpus path/fingerprint is recorded on it (by `by`).
        With `corpus`, its content is also recorded as a new corpus version when it changed."""
        with self._db.write() as conn:
            cid = C.collection_id(conn, collection, create=True)
            fingerprint = corpus.fingerprint if corpus is not None else corpus_fingerprint
            changed = C.record_corpus(conn, cid, corpus_path, fingerprint, by=by)
            if corpus is not None and versions.record_version(conn, cid, corpus, corpus_path, by=by) is not None:
                changed = True  # judgments may be stale now
            if changed:
                C.bump_revision(conn, cid)  # the export's fallback fingerprint changed
            return C.to_collection(C.collection_row(conn, collection))

    def get(self, collection: str = DEFAULT_COLLECTION) -> Collection | None:
        """The collection, or None."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return C.to_collection(row) if row is not None else None

    def list(self) -> list[Collection]:
        """Every collection, by name."""
        with self._db.read() as conn:
            return [C.to_collection(r) for r in conn.execute(sa.select(S.collections).order_by(S.collections.c.name))]

    def delete(self, collection: str) -> bool:
        """Delete a collection with its questions, judgments and runs; False if it did not exist."""
        self._store._index_cache.forget(collection)
        with self._db.write() as conn:
            return conn.execute(S.collections.delete().where(S.collections.c.name == collection)).rowcount > 0

    def revision(self, *, collection: str = DEFAULT_COLLECTION) -> int:
        """A counter bumped by every write to the collection (0 while it does not exist): a cache key."""
        with self._db.read() as conn:
            return C.revision(conn, collection)

    def versions(self, collection: str = DEFAULT_COLLECTION) -> list[CorpusVersion]:
        """The collection's corpus versions with their diffs, newest first ([] without a collection)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return versions.versions(conn, row.id) if row is not None else []

    def doc_hashes(self, *, collection: str = DEFAULT_COLLECTION) -> dict[str, str] | None:
        """{doc_id: content hash} of the collection's current corpus version (None before one)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return versions.current_hashes(conn, row.id) if row is not None else None

    def judged_content(self, doc_hash: str | None) -> Document | None:
        """The document as a judge saw it, by content hash (doc_id empty), or None if not kept."""
        with self._db.read() as conn:
            return versions.text_of(conn, doc_hash)
