"""Persistence: schema, migrations and repositories for collections, questions, judgments, runs.

Never imports streamlit. Pages and the CLI use `open_store()` and the `Store` methods; the
records it returns live in storage.records.
"""
from storage.engine import default_db_url, normalize_db_url
from storage.records import (
    DEFAULT_COLLECTION,
    IMPORT_ANNOTATOR,
    Collection,
    ImportSummary,
    Judgment,
    Question,
    QuestionStatus,
    QuestionSummary,
    RunRecord,
    RunSummary,
)
from storage.store import Store, open_store
from storage.bound import CollectionStore

__all__ = [
    "DEFAULT_COLLECTION", "IMPORT_ANNOTATOR", "Collection", "CollectionStore", "ImportSummary", "Judgment", "Question",
    "QuestionStatus", "QuestionSummary", "RunRecord", "RunSummary", "Store", "default_db_url",
    "normalize_db_url", "open_store",
]
