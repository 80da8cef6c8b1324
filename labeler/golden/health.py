"""Golden-set health: how a set compares with its targets (DESIGN.md "Labelling")."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from labeler.golden.model import GoldenSet

TARGET_QUESTIONS = (50, 200)
TARGET_UNANSWERABLE_SHARE = (0.10, 0.20)


@dataclass(frozen=True)
class GoldenHealth:
    """How a golden set compares with its targets (DESIGN.md "Labelling")."""

    n_questions: int
    n_unanswerable: int
    per_type: Mapping[str, int]
    without_relevant: tuple[str, ...]  # answerable questions with no document graded >= 1 yet
    target_questions: tuple[int, int] = TARGET_QUESTIONS
    target_unanswerable_share: tuple[float, float] = TARGET_UNANSWERABLE_SHARE

    @property
    def unanswerable_share(self) -> float:
        """Share of questions marked unanswerable (0.0 for an empty set)."""
        return self.n_unanswerable / self.n_questions if self.n_questions else 0.0

    @property
    def count_ok(self) -> bool:
        """True when the question count is within the target range."""
        lo, hi = self.target_questions
        return lo <= self.n_questions <= hi

    @property
    def share_ok(self) -> bool:
        """True when the unanswerable share is within the target range (never for an empty set)."""
        lo, hi = self.target_unanswerable_share
        return self.n_questions > 0 and lo <= self.unanswerable_share <= hi

    def warnings(self) -> tuple[str, ...]:
        """Human-readable notes on what is off target, each ending with what to do."""
        out = []
        lo, hi = self.target_questions
        if self.n_questions < lo:
            out.append(f"{self.n_questions} question(s); the target is {lo}-{hi}. "
                       f"Hint: write {lo - self.n_questions} more.")
        elif self.n_questions > hi:
            out.append(f"{self.n_questions} questions; the target is {lo}-{hi}. Hint: more questions cost "
                       "labelling time for little extra precision.")
        slo, shi = self.target_unanswerable_share
        if self.n_questions and not self.share_ok:
            out.append(f"{self.unanswerable_share:.0%} of questions are unanswerable; the target is "
                       f"{slo:.0%}-{shi:.0%}. Hint: "
                       + ("add questions the corpus cannot answer." if self.unanswerable_share < slo
                          else "add answerable questions."))
        if self.without_relevant:
            out.append(f"{len(self.without_relevant)} answerable question(s) have no relevant document yet. "
                       "Hint: label them, find a document with the search box, or mark them unanswerable.")
        return tuple(out)


def golden_health(golden: GoldenSet) -> GoldenHealth:
    """Question count, unanswerable share, questions per type, questions without a relevant doc."""
    per_type: dict[str, int] = {}
    for q in golden.queries:
        per_type[q.query_type] = per_type.get(q.query_type, 0) + 1
    return GoldenHealth(
        n_questions=len(golden.queries),
        n_unanswerable=sum(1 for q in golden.queries if q.unanswerable),
        per_type=dict(sorted(per_type.items())),
        without_relevant=tuple(q.query_id for q in golden.queries if not q.unanswerable and not q.relevant(1)),
    )
