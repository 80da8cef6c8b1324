"""L2-regularized logistic regression fitted in the span of its training rows (Newton on the dual weights).

The objective is liblinear's (the bias is one more feature of value 1, regularized with the rest):
    min_w  1/2 |w|^2 + C * sum_i c_i * log(1 + exp(-s_i (w . x_i + o_i))),   s_i = +1 / -1,
with an optional per-row weight `c_i` and a fixed offset `o_i` (a prior log-odds the model corrects).
By the representer theorem `w = sum_i a_i x_i`, so with `n` training rows (a question's grades plus
BMI's pseudo-negatives, ~200) Newton works on the `n x n` Gram matrix `K = X X^T + 1` whatever the
width of `x` (tf-idf: 100k columns): each step solves one `n x n` system, where liblinear walks the
100k coordinates. It converges to the same model (a test compares it with scikit-learn's liblinear).
"""
from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np


@functools.cache
def _blas():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Small dense solves on one thread: on a shared machine OpenBLAS's threads spin waiting for a
    core, and a 200 x 200 solve took 5-50 ms of CPU instead of 1 ms (measured)."""
    with _blas().limit(limits=1, user_api="blas"):
        yield


def fit_dual(gram: np.ndarray, labels: np.ndarray, *, C: float = 1.0, offset: np.ndarray | None = None,
             weights: np.ndarray | None = None, max_iter: int = 50, tol: float = 1e-9) -> np.ndarray:
    """The dual weights `a` (w = sum_i a_i x_i, bias = sum_i a_i) of the model above.

    `gram` is `X X^T + 1` over the training rows, `labels` 0/1. The decision value of a row `x` is
    `x . (X^T a) + sum(a) + offset(x)`. Newton steps with a backtracking line search; stops when the
    objective improves by less than `tol` (relative).
    """
    t = np.asarray(labels, dtype=np.float64)
    n = len(t)
    o = np.zeros(n) if offset is None else np.asarray(offset, dtype=np.float64)
    c = C * (np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64))
    K = np.asarray(gram, dtype=np.float64)
    a = np.zeros(n)
    f = o.copy()

    def objective(a: np.ndarray, f: np.ndarray) -> float:
        return 0.5 * float(a @ (f - o)) + float(np.sum(c * (np.logaddexp(0.0, f) - t * f)))

    value = objective(a, f)
    eye = np.eye(n)
    with one_blas_thread():
        for _ in range(max_iter):
            p = 0.5 * (1.0 + np.tanh(0.5 * f))  # the logistic function without overflow
            # The gradient is K (a + c (p - t)) and the Hessian K (I + diag(c p (1 - p)) K): the
            # common factor K cancels from the Newton system.
            step = np.linalg.solve(eye + (c * p * (1.0 - p))[:, None] * K, a + c * (p - t))
            rate = 1.0
            while True:
                a_new = a - rate * step
                f_new = K @ a_new + o
                new = objective(a_new, f_new)
                if new <= value or rate < 1e-4:
                    break
                rate *= 0.5
            done = value - new <= tol * max(1.0, abs(value))
            a, f, value = a_new, f_new, new
            if done:
                break
    return a
