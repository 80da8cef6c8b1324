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

A claim is made only once the bound has said at most one at `CONFIRMATIONS` checks in a row (the knee's,
after its sample, and each `patience` judgments later while nothing relevant turns up: `curve_checks`).
One check was wrong too often where the order had stalled before a cluster of relevant documents it
ranked low: measured with bench/bench_stopping.py (README), one check's claim held for 0 of 3 CISI questions
and 43 of 50 Cranfield ones; three in a row, for every claim it made. Nothing in the judged ranks told the
wrong claims from the right ones (the exponential fitted both alike; the power law fitted neither better):
only judging further along the order did.

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
CONFIRMATIONS = 3  # checks in a row whose bound says "<= 1 left" before it is claimed


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
    out) and the number of documents still unjudged (remembered: a page rerun with the same grades
    does not fit it again)."""
    return _curve_remaining(tuple(bool(f) for f in relevant_flags), unjudged, sample_relevant > 0, confidence)


@functools.lru_cache(maxsize=1024)
def _curve_remaining(relevant_flags: tuple[bool, ...], unjudged: int, vetoed: bool, confidence: float) -> CurveEstimate:
    from scipy.stats import poisson

    n = len(relevant_flags)
    ranks = [i + 1 for i, r in enumerate(relevant_flags) if r]
    if n == 0:
        return CurveEstimate(0, unjudged, 0, unjudged, {}, {}, confidence, vetoed)
    means = {shape: largest_mean(shape, ranks, n, n + unjudged, confidence) for shape in SHAPES}
    uppers = {shape: min(unjudged, int(poisson.ppf(confidence, m))) for shape, m in means.items()}
    return CurveEstimate(n, unjudged, len(ranks), uppers[CLAIM_SHAPE], means, uppers, confidence, vetoed)


def is_check(flags: Sequence[bool], last_check: int | None, rule) -> bool:
    """Whether the curve is estimated after these grades (`flags`, in judging order, the sample's too):
    at the knee (`rule.knee`), then each `rule.patience` judgments after the last check while the knee holds."""
    return rule.knee(flags) and (last_check is None or len(flags) - last_check >= rule.patience)


def check_points(flags: Sequence[bool], start: int, rule) -> list[int]:
    """How many grades had been given at each check of the gain curve along a judging sequence (`flags`,
    relevant or not in judging order, the sample's too): the first at `start` (the knee's sample judged),
    then as `is_check` schedules them. The simulator makes the same checks as it goes (a test compares them)."""
    points = [start] if start <= len(flags) else []
    for i in range(start + 1, len(flags) + 1):
        if is_check(flags[:i], points[-1], rule):
            points.append(i)
    return points


def curve_checks(flags: Sequence[bool], in_sample: Sequence[bool], start: int, total: int, rule, *,
                 sample_relevant: int = 0, last: int = CONFIRMATIONS) -> list[tuple[int, CurveEstimate]]:
    """The gain curve's last `last` checks along a judging sequence (`check_points`): (grades given, estimate).
    `in_sample` marks the random sample's grades (left out of the curve), `total` is the corpus's size."""
    out = []
    for i in check_points(flags, start, rule)[-last:]:
        ranked = tuple(bool(f) for f, s in zip(flags[:i], in_sample[:i]) if not s)
        out.append((i, curve_remaining(ranked, total - i, sample_relevant=sample_relevant, confidence=rule.confidence)))
    return out


def confirmed(checks: Sequence[bool], confirmations: int = CONFIRMATIONS) -> bool:
    """Whether the last `confirmations` checks (each one's "<= 1 left", in order) all said so: the claim."""
    return len(checks) >= confirmations and all(checks[-confirmations:])
