"""How many relevant documents are still unjudged, from the model's calibrated scores: a bound that
can say "<= 1 left (95%)" where a small random sample of a large remainder cannot.

Method. The model's raw scores are turned into probabilities by Platt scaling (a logistic curve
p = 1 / (1 + exp(-(a*s + b))), fitted with Platt's smoothed targets so a perfect separation does
not make it infinitely sure) on out-of-sample scores: each judged document scored by a model
fitted without it (k-fold, as scikit-learn's CalibratedClassifierCV does), the random sample of
the remainder among them, so the curve is anchored where the unjudged documents' scores lie. The
relevant documents left are then a sum of independent Bernoulli draws, one per unjudged document:
expected `sum(p)`, and the 95% upper bound is the smallest `m` with P(X <= m) >= 95% where X is
Poisson with that sum as its mean (the Poisson is wider than the exact Poisson-binomial), mixed
over bootstrap refits of the curve, so the curve's own uncertainty widens the bound.

The claim "<= 1 left (95%)" is made when that bound at 99% (`CLAIM_CONFIDENCE`) says at most one:
at 95% it was over-confident on generated questions whose relevance follows a logistic curve of the
score exactly (of those it called done, 12 of 15 had at most one left; at 99%, 9 of 10), because a
question is called done just when its few calibration pairs happen to draw a steep curve. With fewer
than `MIN_RELEVANT` (3) relevant grades among the pairs it bounds nothing: on CISI, 20 judgments and a
sample of 20 without a relevant one drew a curve that called 3 questions done, all wrongly.

Assumption (README says it plainly): given its score, a document's relevance does not depend on
whether it was judged, and the logistic curve fits that dependence; a relevant document the model
scores as low as the documents it has seen not relevant is counted at their rate. The assumption-free
hypergeometric bound (`labeler.judging.stopping`) stays beside it.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from labeler.judging.active import ActiveOrder

MIN_RELEVANT = 3  # relevant documents among the calibration pairs before the curve bounds anything
CLAIM_CONFIDENCE = 0.99  # "<= 1 left (95%)" is said when this bound says it (see the module docstring)
BOOTSTRAP = 200  # refits of the curve on resampled calibration pairs
L2 = 0.1  # ridge on the standardized slope and the intercept: a separable sample still has a finite fit


def platt_fit(scores: Sequence[float], labels: Sequence[int], *, iterations: int = 50) -> tuple[float, float]:
    """(a, b) of p = sigmoid(a * s + b), fitted by Newton on Platt's targets: (positives + 1) /
    (positives + 2) for a relevant label, 1 / (negatives + 2) for the others."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    t = y
    scale = s.std() or 1.0  # standardized scores: Newton's steps are well scaled whatever the model's range
    z = (s - s.mean()) / scale
    x = np.column_stack([z, np.ones_like(z)])
    w = np.zeros(2)
    ridge = np.diag([L2, 1e-6])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (p - t) + ridge @ w
        hess = (x * (p * (1 - p))[:, None]).T @ x + ridge + 1e-12 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0] / scale), float(w[1] - w[0] * s.mean() / scale)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * x))  # no overflow warnings for very negative scores


def poisson_mixture_upper(means: Sequence[float], confidence: float = 0.95) -> int:
    """Smallest m with mean over `means` of P(Poisson(mean) <= m) >= confidence."""
    from scipy.stats import poisson

    lam = np.asarray(means, dtype=np.float64)
    m = 0
    while poisson.cdf(m, lam).mean() < confidence:
        m += 1
    return m


@dataclass(frozen=True)
class ModelEstimate:
    """Relevant documents not yet judged, from the calibrated model: expected and upper bound."""

    unjudged: int
    calibration_pairs: int  # out-of-sample (score, grade) pairs the curve was fitted on
    expected: float
    upper: int
    confidence: float = 0.95

    @property
    def done(self) -> bool:
        """Whether at most one relevant document is left, at `confidence`, as the model sees it."""
        return self.upper <= 1

    def to_dict(self) -> dict:
        return {"unjudged": self.unjudged, "calibration_pairs": self.calibration_pairs,
                "expected": round(self.expected, 3), "upper": self.upper, "confidence": self.confidence}


def calibrated_remaining(unjudged_scores: Sequence[float], held_out_scores: Sequence[float],
                         held_out_labels: Sequence[int], *, confidence: float = 0.95, bootstrap: int = BOOTSTRAP,
                         seed: int = 0) -> ModelEstimate:
    """The estimate from the unjudged documents' scores and the judged documents' held-out scores and labels."""
    u = np.asarray(unjudged_scores, dtype=np.float64)
    s = np.asarray(held_out_scores, dtype=np.float64)
    y = np.asarray(held_out_labels, dtype=int)
    if not len(u):
        return ModelEstimate(0, len(s), 0.0, 0, confidence)
    if not len(s):
        return ModelEstimate(len(u), 0, float("nan"), len(u), confidence)
    if y.sum() < MIN_RELEVANT:  # too few relevant grades to draw a curve: no bound beyond the corpus
        return ModelEstimate(len(u), len(s), float("nan"), len(u), confidence)
    a, b = platt_fit(s, y)
    expected = float(sigmoid(a * u + b).sum())
    rng = np.random.default_rng(seed)
    means = [expected]
    for _ in range(bootstrap):
        pick = rng.integers(len(s), size=len(s))
        a_, b_ = platt_fit(s[pick], y[pick])
        means.append(float(sigmoid(a_ * u + b_).sum()))
    return ModelEstimate(len(u), len(s), expected, min(poisson_mixture_upper(means, confidence), len(u)), confidence)


def held_out_scores(model: "ActiveOrder", judged: Mapping[str, int], folds: int = 5) -> np.ndarray:
    """Each judged document's score by the model fitted on the other folds' grades (judged order)."""
    ids = [d for d in judged if d in model.features.text.position]
    out = np.empty(len(ids))
    position = model.features.text.position
    for f in range(min(folds, len(ids))):
        held = ids[f::folds]
        rest = {d: g for d, g in judged.items() if d not in set(held)}
        out[f::folds] = model.fitted_scores(rest, np.array([position[d] for d in held], dtype=np.int64))
    return out


def model_remaining(model: "ActiveOrder", judged: Mapping[str, int], *, folds: int = 5,
                    confidence: float = CLAIM_CONFIDENCE) -> ModelEstimate:
    """The calibrated estimate for one question: the model fitted on every grade scores the unjudged
    documents, `folds`-fold held-out scores of the judged ones calibrate it."""
    ids = [d for d in judged if d in model.features.text.position]
    labels = [int(judged[d] >= model.min_grade) for d in ids]
    unjudged = np.array([i for i, d in enumerate(model.features.doc_ids) if d not in judged], dtype=np.int64)
    scores = model.fitted_scores(judged, unjudged) if len(unjudged) else np.empty(0)
    return calibrated_remaining(scores, held_out_scores(model, judged, folds), labels, confidence=confidence,
                                seed=len(judged))
