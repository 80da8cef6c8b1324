"""Bootstrap confidence intervals for the agreement statistics of labeler.agreement.

The unit resampled is the question (its documents' grades go together: grades of one question's
documents are not independent). Each of `n_resamples` resamples draws as many questions as there
are, with replacement (a fixed seed: the same ratings give the same interval), and recomputes
Cohen's kappa per pair, Fleiss' kappa and Krippendorff's alpha. The interval is the percentile
interval: the (1 - level)/2 and (1 + level)/2 quantiles (linear interpolation) of the resampled
values. Edge cases: a resample where a statistic is undefined (None: e.g. one grade only) is
left out of that statistic's quantiles; with no defined value the interval is (None, None).
"""
from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from labeler.agreement import AgreementReport, Ratings, agreement


@dataclass(frozen=True)
class Interval:
    """A statistic with its bootstrap confidence interval (None where undefined)."""

    value: float | None
    low: float | None
    high: float | None

    def text(self, digits: int = 2) -> str:
        """"0.61 [0.48, 0.73]", or "n/a"."""
        if self.value is None:
            return "n/a"
        if self.low is None or self.high is None:
            return f"{self.value:.{digits}f}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


@dataclass(frozen=True)
class AgreementIntervals:
    """Cohen's kappa per pair, Fleiss' kappa and Krippendorff's alpha, each with its interval."""

    report: AgreementReport
    pairs: dict[tuple[str, str], Interval]
    fleiss_kappa: Interval
    krippendorff_alpha: Interval
    n_resamples: int
    level: float


def quantile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile of the values (linear interpolation between order statistics); None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    at = q * (len(ordered) - 1)
    lo, hi = math.floor(at), math.ceil(at)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)


def _interval(value: float | None, samples: list[float], level: float) -> Interval:
    if value is None:
        return Interval(None, None, None)
    return Interval(value, quantile(samples, (1 - level) / 2), quantile(samples, (1 + level) / 2))


def bootstrap_agreement(ratings: Ratings, *, exclude: Iterable[str] = (), n_resamples: int = 500, seed: int = 0,
                        level: float = 0.95) -> AgreementIntervals:
    """labeler.agreement.agreement with percentile bootstrap intervals over resampled questions."""
    skip = tuple(exclude)
    report = agreement(ratings, exclude=skip)
    by_question: dict[str, list[tuple[str, dict[str, int]]]] = {}
    for (query_id, doc_id), grades in ratings.items():
        by_question.setdefault(query_id, []).append((doc_id, dict(grades)))
    questions = sorted(by_question)
    rng = random.Random(seed)
    pairs: dict[tuple[str, str], list[float]] = {(p.annotator_a, p.annotator_b): [] for p in report.pairs}
    fleiss: list[float] = []
    alpha: list[float] = []
    for _ in range(n_resamples if questions else 0):
        sample: dict[tuple[str, str], dict[str, int]] = {}
        for i in range(len(questions)):  # the i-th draw keeps its own keys: a question drawn twice counts twice
            for doc_id, grades in by_question[rng.choice(questions)]:
                sample[f"{i}", doc_id] = grades
        again = agreement(sample, exclude=skip)
        for p in again.pairs:
            if p.kappa is not None and (p.annotator_a, p.annotator_b) in pairs:
                pairs[p.annotator_a, p.annotator_b].append(p.kappa)
        if again.fleiss_kappa is not None and again.annotators == report.annotators:
            fleiss.append(again.fleiss_kappa)
        if again.krippendorff_alpha is not None:
            alpha.append(again.krippendorff_alpha)
    return AgreementIntervals(
        report, {(p.annotator_a, p.annotator_b): _interval(p.kappa, pairs[p.annotator_a, p.annotator_b], level)
                 for p in report.pairs},
        _interval(report.fleiss_kappa, fleiss, level), _interval(report.krippendorff_alpha, alpha, level),
        n_resamples, level)
