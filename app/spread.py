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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from labeler.judging.allocation import FLOOR, VISIT, tally, visit_yield
from labeler_app.access import Actor, Can
from labeler_app.judging_order import MIN_GRADE, judging_sequence
from labeler_storage import Store
from labeler_storage.records import QuestionStatus


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


@dataclass(frozen=True)
class MyJudging:
    """An annotator's judging over a collection, as the hint reads it: query_id -> (documents judged, relevant
    among the last VISIT grades), and the questions they only voted unanswerable."""

    counts: Mapping[str, tuple[int, int]]
    voted: frozenset[str]


def my_judging(store: Store, actor: Actor) -> MyJudging:
    """Two indexed queries, one row per question (the pages' loader keeps it a few seconds)."""
    actor.require(Can.GRADE)
    counts = store.judgments.recent_yield(actor.name, last=VISIT, min_grade=MIN_GRADE)
    voted = frozenset(q for q, n in store.judgments.judged_by(actor.name).items() if n == 0)
    return MyJudging(counts, voted)


def here_counts(status: QuestionStatus, annotator: str) -> tuple[int, int]:
    """(documents the annotator judged on the question, relevant among their last VISIT grades), from the
    question's own judgments: the hint's figures for the question on screen never wait for a cache."""
    return tally([g >= MIN_GRADE for _, g in judging_sequence(status, annotator)])


def better_elsewhere(actor: Actor, query_id: str, query_ids: Sequence[str], mine: MyJudging,
                     here: tuple[int, int]) -> Elsewhere | None:
    """The question (of `query_ids`, in their order on ties) where the actor's next grades are likely to
    find more than on `query_id` (`here`: its `here_counts`), or None: fewer than FLOOR grades here yet, or
    nowhere better. Questions the actor only voted unanswerable are passed over; in a team, so are questions
    the actor has not graded."""
    if here[0] < FLOOR:
        return None
    best, best_yield = None, visit_yield(*here)
    for q in query_ids:
        counts = mine.counts.get(q)
        if q == query_id or q in mine.voted or (actor.team and counts is None):
            continue
        if (y := visit_yield(*(counts or (0, 0)))) > best_yield:
            best, best_yield = q, y
    if best is None:
        return None
    judged, found = mine.counts.get(best, (0, 0))
    return Elsewhere(best, here[1], found if judged >= FLOOR else None, judged)
