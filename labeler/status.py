"""Labelling status of a question: one enum and one rule, used by the store, its question index,
the app layer and the CLI (the sentence that says why a question has its status is the app
layer's: labeler_app.text.status_reason).

The rule: unanswerable when marked so (and no document is relevant: labeler_storage.votes); else *done*
as soon as some document has consensus grade >= 1, however many candidates are still unjudged
and however many judges the work queue still wants (its seats, labeler_storage.work_queue, are another
count: a done question is still offered until `overlap` people have judged it); else *started*
once anything is judged; else *new*.
"""
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


def status_from_counts(unanswerable: bool, any_relevant: bool, any_judged: bool) -> Status:
    """The rule, from what is known of a question: its flag, whether some document has consensus
    grade >= 1, whether any document is judged."""
    if unanswerable:
        return Status.UNANSWERABLE
    if any_relevant:
        return Status.DONE
    return Status.STARTED if any_judged else Status.NEW


def status_of(unanswerable: bool, consensus_grades: Mapping[str, int]) -> Status:
    """A question's status from its unanswerable flag and consensus grades {doc_id: grade}."""
    return status_from_counts(unanswerable, any(g >= 1 for g in consensus_grades.values()), bool(consensus_grades))
