"""Abstention on unanswerable questions: below a threshold τ on its top score, the system returns
nothing. Reported at a given τ, over a sweep of every distinct top score, and a suggested τ.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

SUGGESTION_RULE = (
    "largest balanced accuracy = (share of unanswerable abstained + share of answerable answered) / 2 "
    "(Youden's J); ties go to the lowest threshold"
)


@dataclass(frozen=True)
class AbstentionPoint:
    """Outcome of abstaining (returning nothing) when the top score is below `threshold`.

    A share is None when its group of questions is empty.
    """

    threshold: float
    unanswerable_abstained: float | None   # correct: unanswerable questions left with nothing
    answerable_abstained: float | None     # wrong: answerable questions left with nothing

    @property
    def balanced_accuracy(self) -> float | None:
        """(unanswerable abstained + answerable answered) / 2; None unless both groups exist."""
        if self.unanswerable_abstained is None or self.answerable_abstained is None:
            return None
        return (self.unanswerable_abstained + 1.0 - self.answerable_abstained) / 2.0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (balanced accuracy included for readers; it is derived on the way back)."""
        return {"threshold": self.threshold, "unanswerable_abstained": self.unanswerable_abstained,
                "answerable_abstained": self.answerable_abstained, "balanced_accuracy": self.balanced_accuracy}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AbstentionPoint":
        """Inverse of to_dict."""
        def share(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return cls(float(data["threshold"]), share("unanswerable_abstained"), share("answerable_abstained"))


@dataclass(frozen=True)
class Abstention:
    """Abstention on the top score: at a given threshold, over a sweep, and the suggested one."""

    answerable: int
    unanswerable: int
    threshold: float | None
    at_threshold: AbstentionPoint | None
    sweep: tuple[AbstentionPoint, ...]
    suggested: AbstentionPoint | None
    rule: str = SUGGESTION_RULE

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of the `abstention` entry of a report."""
        return {
            "answerable": self.answerable, "unanswerable": self.unanswerable, "threshold": self.threshold,
            "at_threshold": self.at_threshold.to_dict() if self.at_threshold else None,
            "suggested": self.suggested.to_dict() if self.suggested else None,
            "rule": self.rule, "sweep": [p.to_dict() for p in self.sweep],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Abstention":
        """Inverse of to_dict."""
        def point(value: Any) -> AbstentionPoint | None:
            return None if value is None else AbstentionPoint.from_dict(value)

        threshold = data.get("threshold")
        return cls(
            answerable=int(data.get("answerable", 0)),
            unanswerable=int(data.get("unanswerable", 0)),
            threshold=None if threshold is None else float(threshold),
            at_threshold=point(data.get("at_threshold")),
            sweep=tuple(AbstentionPoint.from_dict(p) for p in data.get("sweep", ())),
            suggested=point(data.get("suggested")),
            rule=data.get("rule", SUGGESTION_RULE),
        )


def abstention_at(top_answerable: Sequence[float | None], top_unanswerable: Sequence[float | None],
                  threshold: float) -> AbstentionPoint:
    """Shares abstained on when the system returns nothing for a top score below `threshold`.

    A question with no retrieved document (top score None) always counts as abstained.
    """
    def share(tops: Sequence[float | None]) -> float | None:
        if not tops:
            return None
        return sum(1 for t in tops if t is None or t < threshold) / len(tops)

    return AbstentionPoint(float(threshold), share(top_unanswerable), share(top_answerable))


def shortest_cut(low: float | None, high: float) -> float:
    """The decimal with fewest digits in (low, high]: as a threshold ("abstain below it") it puts
    every score on the same side as `high` does (no `low`: `high` itself)."""
    if low is None:
        return high
    for digits in range(0, 18):
        scale = 10.0 ** digits
        cut = math.floor(high * scale) / scale
        if cut <= high and (low is None or cut > low):
            return cut
    return high


def abstention_sweep(top_answerable: Sequence[float | None], top_unanswerable: Sequence[float | None], *,
                     threshold: float | None = None) -> Abstention:
    """Abstention at every distinct top score as the threshold, and the suggested threshold.

    Suggested (needs both groups): the largest balanced accuracy (Youden's J); ties go to the
    lowest threshold, i.e. the one that abstains least.

    Each threshold is the shortest decimal that splits the scores where that top score does
    (above the next lower score, at most that score), so the value shown is the value to enter:
    typing 0.5386 abstains on exactly what the sweep says, where the raw score 0.53857 shown as
    0.539 would also abstain on the question whose top score it is.
    """
    scores = sorted({t for t in [*top_answerable, *top_unanswerable] if t is not None and math.isfinite(t)})
    # Below the lowest score any threshold abstains on the same questions: stay as close to it as
    # the next score is above it (not at 0, which would read as "abstain on nothing").
    floor = [scores[0] - (scores[1] - scores[0])] if len(scores) > 1 else [None]
    cuts = [shortest_cut(low, high) for low, high in zip(floor + scores, scores)]
    sweep = tuple(abstention_at(top_answerable, top_unanswerable, t) for t in cuts)
    suggested = None
    if top_answerable and top_unanswerable and sweep:
        best = max(p.balanced_accuracy for p in sweep)
        suggested = next(p for p in sweep if p.balanced_accuracy >= best - 1e-12)
    return Abstention(
        answerable=len(top_answerable),
        unanswerable=len(top_unanswerable),
        threshold=threshold,
        at_threshold=abstention_at(top_answerable, top_unanswerable, threshold) if threshold is not None else None,
        sweep=sweep,
        suggested=suggested,
    )


