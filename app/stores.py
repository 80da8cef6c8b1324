"""The database as the pages reach it: opened, bound to a collection, and read through these
functions, so a page never calls the Store itself (the layer test holds them to it). Each read is
one Store call today; having it here is what lets a read grow a rule (blind judging, a role, a
cache) in one place for every page, and the CLI read the same way.

The types a page annotates with (`Store`, `QuestionStatus`, ...) are re-exported for that.
"""
from __future__ import annotations

from typing import Any

from labeler_storage import DEFAULT_COLLECTION, CollectionStore, Store, default_db_url, open_store
from labeler_storage.accounts import ROLES
from labeler_storage.records import Collection, QuestionStatus, QuestionSummary

__all__ = ["DEFAULT_COLLECTION", "ROLES", "Collection", "CollectionStore", "QuestionStatus", "QuestionSummary",
           "Store", "bound", "collection_exists", "collection_names", "database_url", "golden_set", "judged_by",
           "open_database", "question_index", "question_status", "questions", "ratings", "revision",
           "saved_runs", "stale_judgments"]


def database_url() -> str:
    """The database this server uses ($LABELER_DB_URL, else $LABELER_HOME/labeler.db)."""
    return default_db_url()


def open_database(url: str) -> Store:
    """The shared store over `url`, migrated (one per process: the pages' loader caches it)."""
    return open_store(url)


def bound(store: Store, collection: str) -> CollectionStore:
    """`store` bound to one collection: every read and write below goes to it."""
    return CollectionStore(store, collection)


def revision(store: Any) -> int:
    """The collection's revision: it changes with every write, so caches keyed on it recompute only then."""
    return store.collections.revision()


def question_index(store: Any) -> list[QuestionSummary]:
    """Every question of the collection with its status and counts (cached per question by the store)."""
    return store.questions.index()


def questions(store: Any) -> list[QuestionStatus]:
    """Every question with its judgments and votes."""
    return store.questions.list()


def question_status(store: Any, query_id: str) -> QuestionStatus | None:
    """One question with its judgments and votes (None: no such question)."""
    return store.questions.status(query_id)


def judged_by(store: Any, annotator: str) -> dict[str, int]:
    """query_id -> how many documents `annotator` has judged there."""
    return store.judgments.judged_by(annotator)


def my_grades(store: Any, annotator: str) -> dict[tuple[str, str], int]:
    """(query_id, doc_id) -> `annotator`'s grade, over the collection."""
    return {(j.query_id, j.doc_id): j.grade for j in store.judgments.list(annotator=annotator)}


def stale_judgments(store: Any, annotator: str) -> list[Any]:
    """`annotator`'s grades given against text that has changed since (or a document now gone)."""
    return store.judgments.stale(annotator=annotator)


def ratings(store: Any) -> Any:
    """Every person's grades and votes, as the agreement statistics read them."""
    return store.judgments.ratings()


def golden_set(store: Any) -> Any:
    """The collection's golden set (consensus grades), as an evaluation scores it."""
    return store.golden.export()


def saved_runs(store: Any) -> list[Any]:
    """The collection's saved runs, newest first (their summaries, no per-question detail)."""
    return store.runs.list()


def collection_exists(store: Store, name: str) -> bool:
    return store.collections.get(name) is not None


def collection_names(store: Store, current: str) -> list[str]:
    """Every collection's name, the default and the current one included, sorted."""
    return sorted({c.name for c in store.collections.list()} | {DEFAULT_COLLECTION, current})
