"""`store.sources`: the grades each consensus-only file brought (labeler_storage.grade_sources), listed
apart and counted in the consensus or not."""
from __future__ import annotations

from labeler_storage import collection as C
from labeler_storage import grade_sources
from labeler_storage.records import DEFAULT_COLLECTION, GradeSource
from labeler_storage.topics.base import Topic


class Sources(Topic):
    """Which files' grades the collection holds, and whether each counts in the consensus."""

    def list(self, *, collection: str = DEFAULT_COLLECTION) -> list[GradeSource]:
        """The collection's grade sources, oldest first, with their grade and question counts ([] if none)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return [] if row is None else grade_sources.list_sources(conn, row.id)

    def set_counted(self, name: str, counted: bool, *, by: str = "",
                    collection: str = DEFAULT_COLLECTION) -> GradeSource:
        """Count the source's grades in the consensus (where no person graded the document) or keep them
        apart; kept in the source's changes with who and when. InputError for an unknown source."""
        with self._db.write() as conn:
            return grade_sources.set_counted(conn, collection, name, counted, by=by)
