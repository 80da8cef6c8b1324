"""How many relevant documents are still unjudged, from the curve of the judged order itself: a
rate of relevant documents that falls with the rank at which the active order reached them.

Method (after Stevenson & Bin-Hezam 2023, "Stopping methods for technology assisted reviews based on
point processes"). The active order judges the document it ranks first among the unjudged, so the
`i`-th document it judged had rank `i` in a ranking made prequentially: each by a model that had not
seen its grade. The relevant documents along that ranking are taken as a Poisson process with a
falling rate, `a * i ** -b` (power law, "hyperbolic") or `a * exp(-b * i)` (exponential), and
what is left is that rate summed over the ranks the order has not reached, `n + 1 .. N`. The
bound is the largest such sum over every `(a, b)` of the 95% likelihood-ratio region (chi-square, two
degrees of freedom, from the profile over `b` on a grid) and then the 95% Poisson quantile of that
mean. `"<= 1 left (95%)"` is said when the exponential's bound is at most one (`CLAIM_SHAPE`); the
power law's bound, whose heavy tail never gets there within a hundred judgments of a corpus of
thousands (one relevant in 61 judgments of 5,061: at most 31 left), is reported beside it. The random sample of the remainder, judged at the knee, stays out
of the curve (its documents were not reached by rank) and vetoes the claim when it found a relevant one.

Assumptions (README says them plainly): the rate of relevant documents along the active order falls
as one of these curves does, through the ranks not reached yet as through those judged; a cluster of
relevant documents the model ranks low (nothing like what it has seen relevant) breaks it. It reads
only the judged order's grades, so it peeks at nothing, and every document it uses was judged.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SHAPES = ("power", "exponential")
CLAIM_SHAPE = "exponential"  # the shape whose bound says "done" (see the module docstring)
CONFIDENCE = 0.95
GRID = 120  # values of b per shape


@dataclass(frozen=True)
class CurveEstimate:
    """Relevant documents not yet judged, from the judged order's curve: the bound of each shape."""

    reached: int  # documents the active order judged (n)
    unjudged: int  # documents it has not (N - n)
    relevant: int  # relevant among the n
    upper: int  # the claim's bound: `CLAIM_SHAPE`'s
    means: dict  # shape -> the largest mean in its region
    uppers: dict  # shape -> its bound
    confidence: float = CONFIDENCE
    vetoed: bool = False  # the random sample found a relevant document

    @property
    def done(self) -> bool:
        """Whether at most one relevant document is left, at `confidence` ("<= 1 left (95%)")."""
        return self.upper <= 1 and not self.vetoed

    def to_dict(self) -> dict:
        return {"method": "gain curve", "reached": self.reached, "unjudged": self.unjudged,
                "relevant": self.relevant, "upper": self.upper, "confidence": self.confidence,
                "means": {k: round(v, 3) for k, v in self.means.items()}, "uppers": self.uppers,
                "vetoed": self.vetoed}


@functools.lru_cache(maxsize=4)
def _grid(shape: str) -> np.ndarray:
    if shape == "power":
        return np.linspace(0.0, 4.0, GRID)
    return np.concatenate([[0.0], np.geomspace(1e-4, 2.0, GRID - 1)])


def _log_rate(shape: str, b: float, ranks: np.ndarray) -> np.ndarray:
    return -b * np.log(ranks) if shape == "power" else -b * ranks


def _largest_a(k: int, s: float, floor: float) -> float:
    """The largest a with k log a - a s >= floor (k log a - a s falls past a = k / s)."""
    lo = k / s if k else 0.0
    hi = max(lo, 1.0 / s) * 2
    value = (lambda a: (k * np.log(a) if k else 0.0) - a * s)
    while value(hi) >= floor:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if value(mid) >= floor else (lo, mid)
    return lo


def largest_mean(shape: str, relevant_ranks: Sequence[int], reached: int, total: int,
                 confidence: float = CONFIDENCE) -> float:
    """The largest expected number of relevant documents at ranks reached+1..total over the
    `confidence` likelihood-ratio region of (a, b) for the rate of `shape`."""
    from scipy.stats import chi2

    if total <= reached:
        return 0.0
    x = np.asarray(relevant_ranks, dtype=np.float64)
    k = len(x)
    ranks = np.arange(1, total + 1, dtype=np.float64)
    rows = []
    for b in _grid(shape):
        w = np.exp(_log_rate(shape, b, ranks))
        s, tail = float(w[:reached].sum()), float(w[reached:].sum())
        events = float(_log_rate(shape, b, x).sum()) if k else 0.0
        profile = (k * np.log(k / s) - k if k else 0.0) + events  # log-likelihood at a = k / s
        rows.append((b, s, tail, events, profile))
    best = max(r[4] for r in rows)
    floor = best - chi2.ppf(confidence, 2) / 2
    return max(_largest_a(k, s, floor - events) * tail for _, s, tail, events, profile in rows if profile >= floor)


def curve_remaining(relevant_flags: Sequence[bool], unjudged: int, *, sample_relevant: int = 0,
                    confidence: float = CONFIDENCE) -> CurveEstimate:
    """The bound from the active order's grades in judging order (`relevant_flags`, the sample left
    out) and the number of documents still unjudged."""
    from scipy.stats import poisson

    n = len(relevant_flags)
    ranks = [i + 1 for i, r in enumerate(relevant_flags) if r]
    if n == 0:
        return CurveEstimate(0, unjudged, 0, unjudged, {}, {}, confidence, sample_relevant > 0)
    means = {shape: largest_mean(shape, ranks, n, n + unjudged, confidence) for shape in SHAPES}
    uppers = {shape: min(unjudged, int(poisson.ppf(confidence, m))) for shape, m in means.items()}
    return CurveEstimate(n, unjudged, len(ranks), uppers[CLAIM_SHAPE], means, uppers, confidence,
                         sample_relevant > 0)
