"""Uncertainty of small golden sets: percentile bootstrap CIs of means, and the paired
randomization (sign-flip) test used to compare two runs. Both are reproducible for a seed.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

CI_RESAMPLES = 2_000
TEST_RESAMPLES = 10_000


def bootstrap_ci(values: np.ndarray, *, resamples: int = CI_RESAMPLES, seed: int = 0,
                 level: float = 0.95) -> np.ndarray:
    """Percentile bootstrap CI of the mean of each row of `values` (metrics x questions).

    All rows share the same resamples of questions. Returns (rows, 2) [lo, hi]; NaN when
    there are no questions. Reproducible for a given seed.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    m, n = values.shape
    if n == 0 or resamples < 1:
        return np.full((m, 2), np.nan)
    rng = np.random.default_rng(seed)
    means = np.empty((m, resamples))
    block = max(1, min(resamples, 2_000_000 // n))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        # How often each question is drawn in each resample (n draws with replacement).
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size)
        means[:, start:start + size] = values @ counts.T / n
    tail = (1.0 - level) / 2.0 * 100.0
    return np.percentile(means, [tail, 100.0 - tail], axis=1).T


def paired_randomization_test(differences: Sequence[float], *, resamples: int = TEST_RESAMPLES,
                              seed: int = 0) -> float:
    """Two-sided p-value that the mean paired difference is 0, by random sign flips.

        p = (1 + #{flips: |mean(s * d)| >= |mean(d)|}) / (1 + resamples)

    No questions, or all differences 0, gives p = 1.
    """
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    block = max(1, min(resamples, 2_000_000 // n))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        signs = rng.integers(0, 2, size=(size, n)).astype(np.float64) * 2.0 - 1.0
        hits += int((np.abs(signs @ d) / n >= observed - 1e-12).sum())
    return (hits + 1) / (resamples + 1)


