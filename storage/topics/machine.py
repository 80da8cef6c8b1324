"""`store.machine`: machine grades and saved judges (labeler_storage.machine_grades), kept apart from
people's judgments."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from labeler_storage import machine_grades as mg
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
