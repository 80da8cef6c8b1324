"""Agreement and rank-correlation statistics, vectorized over bootstrap resamples (numpy only).

Label statistics take confusion matrices `C` of shape (..., L, L): C[i, j] = pairs a person
graded i and the judge graded j. Each returns an array of shape (...), NaN where undefined.

- Cohen's kappa: p_o = trace(C)/n, p_e = Σ_c row_c col_c / n², kappa = (p_o - p_e)/(1 - p_e);
  undefined when p_e = 1 (both gave one and the same grade to everything).
- weighted kappa (quadratic): kappa_w = 1 - Σ w_ij C_ij / Σ w_ij E_ij, w_ij = (i - j)², E the
  outer product of the marginals / n (sklearn's cohen_kappa_score(weights="quadratic") with
  labels 0..L-1: a grade nobody used still sits at its place on the scale); undefined when Σ w E = 0.
- binarized kappa at t: grades >= t are relevant, then Cohen's kappa on the 2x2 table.
- Krippendorff's alpha, ordinal, two coders and no missing grades: coincidences o = C + Cᵀ,
  n_g = Σ_k o[g, k], n = Σ n_g, δ²(c, k) = (Σ_{g=c..k} n_g - (n_c + n_k)/2)²,
  alpha = 1 - (n - 1) Σ o δ² / Σ_{c,k} n_c n_k δ² (as `labeler.agreement.krippendorff_alpha`
  with level "ordinal"); undefined when only one grade occurs.

System-ranking statistics take score vectors x (the reference, people) and y (the judge) over
the same runs, shape (..., R):

- Kendall's tau-b: Σ_{i<j} sgn(x_i - x_j) sgn(y_i - y_j) / sqrt(N_x N_y), N_x = pairs not tied in x
  (scipy.stats.kendalltau's default); undefined when N_x or N_y is 0.
- tau_AP (Yilmaz, Aslam and Robertson, "A new rank correlation coefficient for information
  retrieval", SIGIR 2008): rank the runs by y (ties by the order given: run name), then
  tau_AP = 2/(R - 1) Σ_{i=2..R} C(i)/(i - 1) - 1, C(i) = runs above the i-th that x also ranks
  above it (x's ties broken the same way). Swaps at the top cost more than at the bottom.
  Undefined for fewer than 2 runs.
"""
from __future__ import annotations

import numpy as np


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN where den is 0 (an undefined statistic)."""
    out = np.full(np.shape(num), np.nan)
    ok = ~np.isclose(den, 0.0)
    np.divide(num, den, out=out, where=ok)
    return out


def cohen_kappa(c: np.ndarray) -> np.ndarray:
    """Unweighted Cohen's kappa of confusion matrices (..., L, L)."""
    c = np.asarray(c, dtype=np.float64)
    n = c.sum(axis=(-2, -1))
    p_o = safe_divide(np.trace(c, axis1=-2, axis2=-1), n)
    p_e = safe_divide((c.sum(axis=-1) * c.sum(axis=-2)).sum(axis=-1), n * n)
    return safe_divide(p_o - p_e, 1.0 - p_e)


def weighted_kappa(c: np.ndarray) -> np.ndarray:
    """Quadratic-weighted Cohen's kappa of confusion matrices (..., L, L), labels 0..L-1."""
    c = np.asarray(c, dtype=np.float64)
    levels = c.shape[-1]
    i = np.arange(levels)
    w = (i[:, None] - i[None, :]) ** 2
    n = c.sum(axis=(-2, -1))
    expected = safe_divide(c.sum(axis=-1)[..., :, None] * c.sum(axis=-2)[..., None, :], n[..., None, None])
    return 1.0 - safe_divide((w * c).sum(axis=(-2, -1)), (w * expected).sum(axis=(-2, -1)))


def binarized(c: np.ndarray, threshold: int) -> np.ndarray:
    """The 2x2 confusion matrices of grades >= threshold (relevant) vs below."""
    c = np.asarray(c, dtype=np.float64)
    lo, hi = slice(0, threshold), slice(threshold, None)
    return np.stack([np.stack([c[..., lo, lo].sum(axis=(-2, -1)), c[..., lo, hi].sum(axis=(-2, -1))], -1),
                     np.stack([c[..., hi, lo].sum(axis=(-2, -1)), c[..., hi, hi].sum(axis=(-2, -1))], -1)], -2)


def ordinal_alpha(c: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal alpha of two coders' confusion matrices (..., L, L)."""
    c = np.asarray(c, dtype=np.float64)
    o = c + np.swapaxes(c, -1, -2)
    n_g = o.sum(axis=-1)
    n = n_g.sum(axis=-1)
    cum = np.cumsum(n_g, axis=-1)
    lo_cum = cum - n_g  # Σ_{g < c} n_g
    # δ(c, k) for c <= k: cum[k] - lo_cum[c] - (n_c + n_k)/2; symmetric
    span = cum[..., None, :] - lo_cum[..., :, None]
    span = np.where(np.triu(np.ones(o.shape[-2:], dtype=bool)), span, np.swapaxes(span, -1, -2))
    d2 = (span - (n_g[..., :, None] + n_g[..., None, :]) / 2.0) ** 2
    observed = (o * d2).sum(axis=(-2, -1))
    expected = (n_g[..., :, None] * n_g[..., None, :] * d2).sum(axis=(-2, -1))
    return 1.0 - safe_divide((n - 1.0) * observed, expected)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between score vectors (..., R)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    r = x.shape[-1]
    iu = np.triu_indices(r, 1)
    sx = np.sign(x[..., :, None] - x[..., None, :])[..., iu[0], iu[1]]
    sy = np.sign(y[..., :, None] - y[..., None, :])[..., iu[0], iu[1]]
    nx, ny = np.abs(sx).sum(axis=-1), np.abs(sy).sum(axis=-1)
    return safe_divide((sx * sy).sum(axis=-1), np.sqrt(nx * ny))


def tau_ap(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau_AP of the ranking by y against the reference ranking by x, vectors (..., R)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    r = x.shape[-1]
    if r < 2:
        return np.full(x.shape[:-1], np.nan)
    # positions: stable sort on -score keeps the given order among ties
    by_y = np.argsort(-y, axis=-1, kind="stable")
    x_pos = np.argsort(np.argsort(-x, axis=-1, kind="stable"), axis=-1, kind="stable")
    ranked = np.take_along_axis(x_pos, by_y, axis=-1)  # x's position of the run at each y rank
    above = np.tril(np.ones((r, r), dtype=bool), -1)  # [i, j]: j is above i in y's order
    correct = (ranked[..., None, :] < ranked[..., :, None]) & above
    counts = correct.sum(axis=-1)[..., 1:]
    return 2.0 / (r - 1) * (counts / np.arange(1, r)).sum(axis=-1) - 1.0
