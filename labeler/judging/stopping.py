"""How many relevant documents are still unjudged: an estimate and a 95% upper bound.

Method (a one-sided exact hypergeometric bound, Clopper-Pearson style): when the ranking stops
finding relevant documents, a simple random sample of `n` documents is drawn from the `N` the
question has not judged yet, anywhere in the corpus, and the annotator grades it (the app marks
it as a sample). If `k` of them are relevant, the `R` relevant documents of that remainder are
bounded by the largest `R` with P(X <= k | N, R, n) > 5%, X hypergeometric: any larger `R` would
make so few relevant documents in the sample a less than 5% event. The estimate is `k/n * N`;
what is left after the sample is judged is `R - k`. The bound holds whatever the ranking did,
because the sample ignores it; its price is that a small sample of a large remainder only bounds
it loosely (nothing found in 20 of 1,400 documents: at most 193 left).
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RemainingEstimate:
    """Relevant documents not yet judged: point estimate and upper bound at `confidence`, from a sample."""

    unjudged: int  # documents of the corpus without a grade before the sample (N)
    sample_size: int  # n
    sample_relevant: int  # k
    estimate: float  # relevant left unjudged after the sample, expected
    upper: int  # ... at most, at `confidence`
    confidence: float = 0.95

    @property
    def done(self) -> bool:
        """Whether at most one relevant document is left, at `confidence` ("<= 1 left (95%)")."""
        return self.upper <= 1

    def to_dict(self) -> dict:
        """Plain JSON shape."""
        return {"unjudged": self.unjudged, "sample_size": self.sample_size, "sample_relevant": self.sample_relevant,
                "estimate": round(self.estimate, 3), "upper": self.upper, "confidence": self.confidence}


def hypergeometric_upper(population: int, sample: int, found: int, confidence: float = 0.95) -> int:
    """Largest R with P(X <= found | population, R, sample) > 1 - confidence: the one-sided upper bound
    on the relevant documents of a population from a sample without replacement (at least `found`)."""
    from scipy.stats import hypergeom

    if not 0 <= found <= sample <= population:
        raise ValueError(f"need 0 <= found ({found}) <= sample ({sample}) <= population ({population})")
    alpha = 1.0 - confidence
    lo, hi = found, population - (sample - found)  # R cannot exceed the non-sampled plus what was found
    while lo < hi:  # P(X <= found) falls as R grows: bisect for the last R above alpha
        mid = (lo + hi + 1) // 2
        if hypergeom.cdf(found, population, mid, sample) > alpha:
            lo = mid
        else:
            hi = mid - 1
    return lo


def estimate_remaining(unjudged: int, sample_grades: Sequence[int], *, min_grade: int = 1,
                       confidence: float = 0.95) -> RemainingEstimate:
    """The estimate from the grades of a simple random sample of the `unjudged` documents."""
    n = len(sample_grades)
    k = sum(g >= min_grade for g in sample_grades)
    if n == 0:
        return RemainingEstimate(unjudged, 0, 0, float("nan"), unjudged, confidence)
    upper = hypergeometric_upper(unjudged, n, k, confidence)
    return RemainingEstimate(unjudged, n, k, k / n * unjudged - k, upper - k, confidence)


def draw_sample(unjudged: Sequence[str], size: int, *, seed: str) -> list[str]:
    """A simple random sample (without replacement) of the unjudged documents, reproducible per seed."""
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    return rng.sample(list(unjudged), min(size, len(unjudged)))


@dataclass(frozen=True)
class StoppingRule:
    """When to draw the sample: after `patience` judgments in a row found nothing relevant (once at
    least one relevant was found, or after `patience` * 2 judgments if none was) — a knee in the curve."""

    patience: int = 10
    sample_size: int = 20
    confidence: float = 0.95

    def knee(self, relevant_flags: Sequence[bool]) -> bool:
        """Whether the grades so far (in judging order) have reached the knee."""
        if not relevant_flags:
            return False
        if not any(relevant_flags):
            return len(relevant_flags) >= 2 * self.patience
        last = max(i for i, r in enumerate(relevant_flags) if r)
        return len(relevant_flags) - 1 - last >= self.patience
