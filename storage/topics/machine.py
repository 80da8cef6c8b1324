"""`store.machine`: machine grades and saved judges (labeler_storage.machine_grades), kept apart from
people's judgments."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from labeler_storage import machine_grades as mg
from labeler_storage import suggestions as sg
from labeler_storage.collection import collection_id, collection_row
from labeler_storage.machine_grades import JudgeCount, StoredMachineGrade
from labeler_storage.records import DEFAULT_COLLECTION
from labeler_storage.topics.base import Topic


class Machine(Topic):
    """What machine judges graded, and the judges saved by name."""

    def save_grades(self, found: Iterable[Any], *, collection: str = DEFAULT_COLLECTION) -> int:
        """Save machine grades in one transaction, leaving pairs already graded by that judge, prompt and
        content; how many were new."""
        with self._db.write() as conn:
            return mg.save_grades(conn, collection_id(conn, collection, create=True), found)

    def grades(self, *, collection: str = DEFAULT_COLLECTION, judge: str | None = None,
               prompt_hash: str | None = None, query_id: str | None = None) -> list[StoredMachineGrade]:
        """The collection's machine grades, stale ones marked ([] without the collection)."""
        with self._db.read() as conn:
            row = collection_row(conn, collection)
            return [] if row is None else mg.grades(conn, row.id, judge=judge, prompt_hash=prompt_hash,
                                                    query_id=query_id)

    def counts(self, *, collection: str = DEFAULT_COLLECTION) -> list[JudgeCount]:
        """Per judge: machine grades in the collection, stale ones, questions graded."""
        with self._db.read() as conn:
            row = collection_row(conn, collection)
            return [] if row is None else mg.counts(conn, row.id)

    def save_judge(self, name: str, spec: Mapping[str, Any], *, by: str = "") -> None:
        """Save (or replace) a judge's declaration under its name."""
        with self._db.write() as conn:
            mg.save_judge(conn, name, spec, by=by)

    def judge_specs(self) -> dict[str, dict[str, Any]]:
        """Every saved judge's declaration, by name."""
        with self._db.read() as conn:
            return mg.judge_specs(conn)

    def delete_judge(self, name: str) -> bool:
        """Forget a saved judge (its machine grades stay, under its name); False if there was none."""
        with self._db.write() as conn:
            return mg.delete_judge(conn, name)

    def question_grades(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> dict[tuple[str, str], Any]:
        """(doc_id, judge) -> each judge's current grade on the question's documents ({} without the collection)."""
        with self._db.read() as conn:
            row = collection_row(conn, collection)
            return {} if row is None else sg.current_grades(conn, row.id, query_id)

    def record_seen(self, query_id: str, doc_id: str, annotator: str, grade_before: int | None, *,
                    collection: str = DEFAULT_COLLECTION) -> int:
        """Record the first sight of the pair's current machine grades by `annotator`, as a suggestion
        on the Label page, with their grade then (labeler_storage.suggestions)."""
        with self._db.write() as conn:
            row = collection_row(conn, collection)
            return 0 if row is None else sg.record_seen(conn, row.id, query_id, doc_id, annotator, grade_before)

    def current_grades(self, *, collection: str = DEFAULT_COLLECTION) -> dict[str, dict[tuple[str, str], int]]:
        """judge -> (query_id, doc_id) -> its current grade in the collection ({} without the collection)."""
        with self._db.read() as conn:
            row = collection_row(conn, collection)
            return {} if row is None else sg.current_by_judge(conn, row.id)

    def seen(self, *, collection: str = DEFAULT_COLLECTION, judge: str | None = None) -> list[sg.SeenSuggestion]:
        """Every suggestion shown in the collection, with the annotator's grade then and now."""
        with self._db.read() as conn:
            row = collection_row(conn, collection)
            return [] if row is None else sg.seen(conn, row.id, judge=judge)
