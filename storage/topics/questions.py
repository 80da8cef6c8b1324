"""`store.questions`: questions, one question's status, the question list (labeler_storage.questions,
labeler_storage.question_index) and the unanswerable votes."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labeler_storage import question_index, questions
from labeler_storage.records import DEFAULT_COLLECTION, Question, QuestionStatus, QuestionSummary
from labeler_storage.topics.base import Topic


class Questions(Topic):
    """A collection's questions: add, edit, delete, read, list, their status and unanswerable votes."""

    def add(self, text: str, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
            query_type: str = "", notes: str = "", author: str = "", unanswerable: bool = False,
            extra: Mapping[str, Any] | None = None, corpus_fingerprint: str | None = None) -> Question:
        """Add a question (query_id defaults to the next free `q-0001`-style id); creates the collection."""
        with self._db.write() as conn:
            return questions.add_question(
                conn, text, collection=collection, query_id=query_id, query_type=query_type, notes=notes,
                author=author, unanswerable=unanswerable, extra=extra, corpus_fingerprint=corpus_fingerprint)

    def edit(self, query_id: str, *, collection: str = DEFAULT_COLLECTION, text: str | None = None,
             query_type: str | None = None, notes: str | None = None,
             extra: Mapping[str, Any] | None = None, by: str = "") -> Question:
        """Change the given fields of a question (None leaves a field as it is); `by` is who."""
        values = {k: v for k, v in (("text", text), ("query_type", query_type), ("notes", notes),
                                    ("extra", None if extra is None else dict(extra))) if v is not None}
        if values:
            values["updated_by"] = by
        with self._db.write() as conn:
            return questions.edit_question(conn, query_id, collection=collection, values=values)

    def delete(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> bool:
        """Delete a question and its judgments; False if there was no such question."""
        with self._db.write() as conn:
            return questions.delete_question(conn, query_id, collection=collection)

    def get(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> Question | None:
        """The question, or None."""
        with self._db.read() as conn:
            row = questions.question_row(conn, collection, query_id, required=False)
            return questions.to_question(row) if row is not None else None

    def set_unanswerable(self, query_id: str, unanswerable: bool = True, *,
                         collection: str = DEFAULT_COLLECTION, by: str = "") -> Question:
        """Record (or withdraw) `by`'s vote that no document answers the question (refused while they
        grade one of its documents >= 1); the question's flag becomes the consensus (labeler_storage.votes)."""
        with self._db.write() as conn:
            return questions.set_unanswerable(conn, query_id, unanswerable, collection=collection, by=by)

    def status(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> QuestionStatus | None:
        """One question with its judgments, consensus grades and status (reads only its rows); None if missing."""
        with self._db.read() as conn:
            return questions.question_status(conn, query_id, collection=collection)

    def index(self, *, collection: str = DEFAULT_COLLECTION, with_annotators: bool = False) -> list[QuestionSummary]:
        """Every question (creation order) with status and judged-document count, from SQL; with
        `with_annotators`, also who judged each (one more scan of the judgments)."""
        with self._db.read() as conn:
            return question_index.question_index(conn, collection=collection, with_annotators=with_annotators,
                                                 cache=self._store._index_cache)

    def list(self, *, collection: str = DEFAULT_COLLECTION) -> list[QuestionStatus]:
        """Every question (in creation order) with its judgments, consensus grades and status."""
        with self._db.read() as conn:
            return questions.list_questions(conn, collection=collection)
