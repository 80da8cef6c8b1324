"""Where judging still finds relevant documents: the Label page's hint to move on, over the core's
allocation (labeler.judging.allocation).

The simulator measured the rule on CISI, Cranfield and SciFact (README, "Judging order"): every question
its first FLOOR judgments, then VISIT at a time to the question whose last VISIT found the most relevant
documents. The Label page offers the same move: once an annotator has given FLOOR grades on a question,
it names the question where their next grades are likely to find more, one where they have given fewer
than FLOOR grades or whose last VISIT found more than this one's, with a button to go there.

It reads the annotator's own grades only (under blind judging nothing of colleagues' shows). In a team
the work queue hands out new questions ("Next for me"), so the hint names only questions the annotator
has graded already.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labeler.judging.allocation import FLOOR, VISIT, visit_yield
from labeler_app.access import Actor, Can
from labeler_storage import Store

MIN_GRADE = 1


@dataclass(frozen=True)
class Elsewhere:
    """A question where the annotator's next grades are likely to find more than here."""

    query_id: str
    here: int  # relevant among the annotator's last VISIT grades on this question
    there: int | None  # the same on the other question; None: fewer than FLOOR grades there
    there_judged: int  # the annotator's grades on the other question

    @property
    def note(self) -> str:
        """What the Label page says (markdown; the other question's text is the caller's to show)."""
        here = (f"Your last {VISIT} grades here found {self.here} relevant document{'s' if self.here != 1 else ''}"
                if self.here else f"Your last {VISIT} grades here found nothing relevant")
        if self.there is None:
            there = ("a question you have not graded yet" if not self.there_judged else
                     f"a question you have given {self.there_judged} of its first {FLOOR} grades")
        else:
            there = f"a question where your last {VISIT} found {self.there}"
        return (f"**Judging is likely to find more elsewhere.** {here}; next is {there}. (Every question's first "
                f"{FLOOR} grades, then {VISIT} at a time where the last {VISIT} found most: in the simulator this found "
                "more relevant documents for the same number of judgments.)")


def better_elsewhere(store: Store, actor: Actor, query_id: str, query_ids: Sequence[str]) -> Elsewhere | None:
    """The question (of `query_ids`, in their order on ties) where the actor's next grades are likely to
    find more than on `query_id`, or None: fewer than FLOOR grades here yet, or nowhere better. Questions the
    actor only voted unanswerable are passed over; in a team, so are questions the actor has not graded."""
    actor.require(Can.GRADE)
    mine = sorted(store.judgments.list(annotator=actor.name), key=lambda j: (j.created_at, j.doc_id))
    flags: dict[str, list[bool]] = {}
    for j in mine:  # the order first given (a regrade keeps its place, as the stopping estimate reads it)
        flags.setdefault(j.query_id, []).append(j.grade >= MIN_GRADE)
    here = flags.get(query_id, [])
    if len(here) < FLOOR:
        return None
    voted = {q for q, n in store.judgments.judged_by(actor.name).items() if n == 0}  # voted unanswerable, no grade
    best, best_yield = None, visit_yield(here)
    for q in query_ids:
        if q == query_id or q in voted or (actor.team and q not in flags):
            continue
        if (y := visit_yield(flags.get(q, []))) > best_yield:
            best, best_yield = q, y
    if best is None:
        return None
    there = flags.get(best, [])
    return Elsewhere(best, sum(here[-VISIT:]), sum(there[-VISIT:]) if len(there) >= FLOOR else None, len(there))

