"""Labelling status of a question: one enum, used by the store, the app layer and the CLI."""
from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class Status(StrEnum):
    """Where a question stands: judged with something relevant, marked unanswerable, started, new."""

    NEW = "new"              # no judgment yet
    STARTED = "started"      # judged, nothing relevant yet (consensus grade >= 1 on no document)
    DONE = "done"            # some document has consensus grade >= 1
    UNANSWERABLE = "unanswerable"  # marked so: no document in the corpus answers it

    @property
    def complete(self) -> bool:
        """Done or unanswerable: counts towards the golden set's progress."""
        return self in (Status.DONE, Status.UNANSWERABLE)


def status_of(unanswerable: bool, consensus_grades: Mapping[str, int]) -> Status:
    """A question's status from its unanswerable flag and consensus grades {doc_id: grade}."""
    if unanswerable:
        return Status.UNANSWERABLE
    if any(g >= 1 for g in consensus_grades.values()):
        return Status.DONE
    return Status.STARTED if consensus_grades else Status.NEW
