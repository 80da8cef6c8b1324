"""The labeler database: `Store`, and `open_store` to get one.

One `Store` per database URL (SQLite by default: one file under `$LABELER_HOME`). The Store itself
holds only the database's lifecycle (open, migrate, close, the schema version) and its one clock;
what it stores is reached through a sub-facade per topic (labeler_storage.topics), each method one
transaction:
- `store.questions`: questions, their status, the question list, unanswerable votes;
- `store.judgments`: grades, their history and staleness, consensus, agreement, adjudication;
- `store.queue`: the work queue's claims;
- `store.runs`: saved evaluation runs;
- `store.machine`: machine grades and saved judges;
- `store.collections`: collections, their revision counter, corpus versions and hashes;
- `store.golden`: golden-set export, import, the import's plan, health;
- `store.sources`: the grade sources of consensus-only files, counted or kept apart;
- `store.accounts`: users, roles, sessions, team settings (labeler_storage.accounts).
Composition rather than mixins: the topic modules are plain functions over a `Connection`, so a
transaction's extent is visible in the sub-facade's method, and one write (an import) can combine
several topics' functions inside one transaction.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from labeler_storage import question_index
from labeler_storage.accounts import Accounts
from labeler_storage.clock import database_clock
from labeler_storage.engine import Database, default_db_url, normalize_db_url
from labeler_storage.records import DEFAULT_COLLECTION, IMPORT_ANNOTATOR
from labeler_storage.topics import Collections, Golden, Judgments, Machine, Queue, Questions, Runs, Sources

__all__ = ["DEFAULT_COLLECTION", "IMPORT_ANNOTATOR", "Store", "default_db_url", "normalize_db_url", "open_store"]


def open_store(url: str | Path | None = None, *, synchronous: str = "FULL") -> "Store":
    """Open (creating and migrating as needed) the database at `url` (default: default_db_url()).

    `synchronous` is SQLite's durability level. FULL (the default) fsyncs every commit, so a
    label survives a power cut; it costs about 5 ms per write, which no annotator notices.
    NORMAL skips that fsync (still safe against a crashed or killed process); tests whose
    subject is locking, not the disk, use it to run thousands of commits quickly.
    """
    store = Store(normalize_db_url(url), synchronous=synchronous)
    store.migrate()
    return store


class Store:
    """One database and its topics (see the module docstring); safe to share between threads (st.cache_resource)."""

    def __init__(self, url: str, *, synchronous: str = "FULL") -> None:
        self._db = Database(url, synchronous=synchronous)
        self.url = url
        self.engine = self._db.engine
        self._index_cache = question_index.QuestionIndexCache()  # per question, recomputed when it changes
        self.accounts = Accounts(self._db)  # team mode: users, roles, sessions, settings
        self.questions = Questions(self)
        self.judgments = Judgments(self)
        self.queue = Queue(self)
        self.runs = Runs(self)
        self.machine = Machine(self)
        self.collections = Collections(self)
        self.golden = Golden(self)
        self.sources = Sources(self)

    clock = database_clock("The one clock every write of this store reads (storage/clock.py); tests set it.")

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Release pooled connections."""
        self._db.close()

    def migrate(self) -> list[int]:
        """Apply pending migrations; the versions applied (empty when up to date)."""
        return self._db.migrate()

    def schema_version(self) -> int:
        """The database's schema version."""
        return self._db.schema_version()
