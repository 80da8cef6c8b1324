"""The work queue's order (team setting `queue_order`, admins, Team page), for "Next for me" and `labeler queue`.

- "seats" (the default): the question closest to its overlap first, then the oldest (labeler_storage.work_queue);
- "doubts": the questions where the machine judges are least sure, or disagree with a person, first
  (labeler.judges.doubt: the expected number of a question's machine grades a person would overturn,
  each judge's record against the team's grades on this collection telling how far to trust its grade;
  its current grades only, stale ones left out); then as "seats". A question no judge graded has doubt 0.

The order never skips the queue's rules: a question still needs a free seat, one you judged or claimed is
not offered again, and one you gave back comes last.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labeler.errors import InputError
from labeler.judges.doubt import pair_doubts, question_doubts
from labeler_app.access import Actor, Can
from labeler_storage import Store
from labeler_storage.team_settings import DEFAULT_SETTINGS, QUEUE_ORDERS

ORDERS = dict(zip(QUEUE_ORDERS, ("closest to its overlap first", "the machine judges' doubts first")))


def queue_order(store: Store) -> str:
    """The team setting `queue_order`: "seats" or "doubts"."""
    return store.accounts.settings().get("queue_order") or DEFAULT_SETTINGS["queue_order"]


def doubts(store: Store) -> dict[str, float]:
    """query_id -> the question's doubt (module docstring; questions no judge graded are left out)."""
    statuses = store.questions.list()
    people: dict[tuple[str, str], list[int]] = {}
    consensus: dict[tuple[str, str], int] = {}
    for status in statuses:
        qid = status.question.query_id
        for j in status.judgments:
            people.setdefault((qid, j.doc_id), []).append(j.grade)
        consensus.update({(qid, d): g for d, g in {**status.consensus, **status.adjudicated}.items()})
    return question_doubts(pair_doubts(people, consensus, store.machine.current_grades()))


def _checked(order: str | None, store: Store) -> str:
    order = order or queue_order(store)
    if order not in ORDERS:
        raise InputError(f"unknown queue order {order!r}", hint=f"one of {', '.join(ORDERS)}.")
    return order


def priorities(store: Store, order: str | None = None) -> Mapping[str, float] | None:
    """What the work queue puts first under `order` (None: the team's): the doubts, or nothing."""
    return doubts(store) if _checked(order, store) == "doubts" else None


@dataclass(frozen=True)
class QueueRow:
    """One question that still wants a judge, as the queue would offer it to someone who has not judged it."""

    query_id: str
    seats: int  # judges so far and live claims
    overlap: int
    doubt: float

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "seats": self.seats, "overlap": self.overlap, "doubt": round(self.doubt, 4)}


def queue(store: Store, actor: Actor, order: str | None = None) -> list[QueueRow]:
    """The questions with a free seat, in the order the queue offers them (to someone who judged none of
    them and declined none: the queue's own pick also leaves out what the asker judged or gave back)."""
    actor.require(Can.READ)
    found = doubts(store)
    first = found if _checked(order, store) == "doubts" else {}
    overlap = int(store.accounts.settings().get("overlap") or 1)
    rows = []
    for i, (query_id, seats) in enumerate(store.queue.seats().items()):  # creation order
        if seats < overlap:
            rows.append((-first.get(query_id, 0.0), -seats, i, QueueRow(query_id, seats, overlap,
                                                                        found.get(query_id, 0.0))))
    return [row for *_, row in sorted(rows, key=lambda r: r[:3])]
