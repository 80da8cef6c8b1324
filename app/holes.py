"""Judge the holes: the documents of a saved run's top k that nobody has judged yet.

Every metric counts an unjudged document as not relevant, so a run whose top 10 is mostly
unjudged looks worse than it is (judged@k says how much). These are exactly the judgments that
would firm its numbers up: the Label page shows them first, marked with the run's rank, and a
machine judge can grade them (`labeler judge --holes-from`, the Evaluate page's button).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

HOLE_DEPTH = 10  # the top k searched for holes (a saved run keeps its top 10 per question)


class RunStore(Protocol):
    """What finding holes needs of a store (storage.Store satisfies it)."""

    def load_run(self, run_id: int) -> Any: ...
    def list_questions(self) -> Any: ...


@dataclass(frozen=True)
class Holes:
    """A saved run's unjudged top-k documents per question, as of now."""

    run_id: int
    k: int
    by_question: Mapping[str, tuple[tuple[str, int], ...]]  # query_id -> ((doc_id, rank), ...)

    @property
    def n_holes(self) -> int:
        """Unjudged documents over all questions."""
        return sum(len(v) for v in self.by_question.values())

    @property
    def badge(self) -> str:
        """The name a hole's candidate badge carries: `run 3` (shown as `run 3 #2`)."""
        return f"run {self.run_id}"

    @property
    def text(self) -> str:
        """`12 unjudged documents in the top 10 of run #3, on 5 questions`."""
        return (f"{self.n_holes} unjudged documents in the top {self.k} of run #{self.run_id}, on "
                f"{len(self.by_question)} questions")

    def first_question(self) -> str | None:
        """The first question with a hole left (None when all are closed)."""
        return next(iter(self.by_question), None)

    def ranks(self, query_id: str) -> dict[str, int]:
        """One question's holes: doc_id -> the run's rank (labeler.candidates.with_ranking shows them first)."""
        return dict(self.by_question.get(query_id, ()))


def find_holes(store: RunStore, run_id: int, k: int = HOLE_DEPTH) -> Holes:
    """The run's top-k documents (as saved) that no one has judged on their question since."""
    record = store.runs.load(run_id)
    judged = {s.question.query_id: {j.doc_id for j in s.judgments} for s in store.questions.list()}
    holes: dict[str, tuple[tuple[str, int], ...]] = {}
    for query_id, row in record.per_query.items():
        if query_id not in judged:  # the question was deleted since
            continue
        top = [(d["doc_id"], rank) for rank, d in enumerate(row.get("top_k", ())[:k], start=1)
               if d["doc_id"] not in judged[query_id]]
        if top:
            holes[query_id] = tuple(top)
    return Holes(run_id, k, holes)

