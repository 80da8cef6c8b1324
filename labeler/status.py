"""Labelling status of a question: one enum and one rule, used by the store, its question index,
the app layer and the CLI, and the one sentence that says why a question has its status.

The rule: unanswerable when marked so (and no document is relevant: storage.votes); else *done*
as soon as some document has consensus grade >= 1, however many candidates are still unjudged
and however many judges the work queue still wants (its seats, storage.work_queue, are another
count: a done question is still offered until `overlap` people have judged it); else *started*
once anything is judged; else *new*.
"""
from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from labeler.text import counted


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


def status_reason(status: Status, consensus_grades: Mapping[str, int], *, n_annotators: int,
                  candidates: tuple[str, ...] = ()) -> str:
    """Why the question has `status`, e.g. "done: 2 relevant documents (consensus grade ≥ 1) by 1
    annotator; 4 of 16 candidates unjudged". `candidates`: the doc ids on screen, to count those
    nobody has judged."""
    n_relevant = sum(1 for g in consensus_grades.values() if g >= 1)
    unjudged = sum(1 for d in candidates if d not in consensus_grades)
    tail = f"; {unjudged} of {counted(len(candidates), 'candidate')} unjudged" if unjudged else ""
    by = f" by {counted(n_annotators, 'annotator')}" if n_annotators else ""
    if status == Status.UNANSWERABLE:
        return "unanswerable: voted so, and no document has consensus grade ≥ 1"
    if status == Status.DONE:
        return f"done: {counted(n_relevant, 'relevant document')} (consensus grade ≥ 1){by}{tail}"
    if status == Status.STARTED:
        return f"started: {counted(len(consensus_grades), 'document')} judged{by}, none relevant yet{tail}"
    return "new: nothing judged yet"
