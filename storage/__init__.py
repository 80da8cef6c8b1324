"""Persistence: schema, migrations and repositories for collections, questions, judgments, runs.

Never imports streamlit. Pages and the CLI use `open_store()` and the `Store` methods.
"""
from storage.store import (
    DEFAULT_COLLECTION,
    IMPORT_ANNOTATOR,
    Collection,
    ImportSummary,
    Judgment,
    Progress,
    Question,
    QuestionStatus,
    RunRecord,
    RunSummary,
    Store,
    default_db_url,
    normalize_db_url,
    open_store,
)

__all__ = [
    "DEFAULT_COLLECTION", "IMPORT_ANNOTATOR", "Collection", "ImportSummary", "Judgment", "Progress",
    "Question", "QuestionStatus", "RunRecord", "RunSummary", "Store", "default_db_url",
    "normalize_db_url", "open_store",
]
