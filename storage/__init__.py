"""Persistence: schema, migrations and repositories for collections, questions, judgments, runs.

Never imports streamlit. The app layer and the CLI use `open_store()` and the Store's topics
(`store.questions.add(...)`, `store.runs.load(run_id)`: labeler_storage.topics); the records they
return live in labeler_storage.records.
"""
from labeler_storage.bound import CollectionStore
from labeler_storage.engine import default_db_url, normalize_db_url
from labeler_storage.records import (
    DEFAULT_COLLECTION,
    IMPORT_ANNOTATOR,
    Collection,
    GradeSource,
    ImportSummary,
    Judgment,
    Question,
    QuestionStatus,
    QuestionSummary,
    RunRecord,
    RunSummary,
    is_file_source,
)
from labeler_storage.store import Store, open_store

__all__ = [
    "DEFAULT_COLLECTION", "IMPORT_ANNOTATOR", "Collection", "CollectionStore", "GradeSource", "ImportSummary", "Judgment", "Question",
    "QuestionStatus", "QuestionSummary", "RunRecord", "RunSummary", "Store", "default_db_url",
    "is_file_source", "normalize_db_url", "open_store",
]
