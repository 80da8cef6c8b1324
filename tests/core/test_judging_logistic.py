"""The judging model's logistic regression, fitted in the span of its training rows: the same model as
scikit-learn's liblinear (same objective), at a cost that does not grow with the tf-idf width."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import random as sparse_random

from labeler.judging.logistic import fit_dual


def _gram(rows):
    return np.asarray((rows @ rows.T).todense()) + 1.0


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_logistic_dual_is_liblinears_model(C):
    from sklearn.linear_model import LogisticRegression

    rows = sparse_random(120, 20_000, density=0.003, format="csr", random_state=3, dtype=np.float64)
    labels = (np.random.default_rng(3).random(120) < 0.2).astype(int)
    labels[0] = 1
    a = fit_dual(_gram(rows), labels, C=C)
    model = LogisticRegression(C=C, solver="liblinear", tol=1e-10, max_iter=10_000).fit(rows, labels)
    unseen = sparse_random(50, 20_000, density=0.003, format="csr", random_state=4)
    ours = unseen @ (rows.T @ a) + a.sum()
    assert np.allclose(ours, model.decision_function(unseen), atol=1e-5)


def test_logistic_dual_weights_and_offset():
    # Two identical rows, one relevant, one not: the fit can only split the difference. With weight
    # 3 on the relevant row the loss is 3 log(1 + e^-f) + log(1 + e^f) + |w|^2/2, minimized where
    # 3 / (1 + e^f) - 1 / (1 + e^-f) = f / (x.x + 1) (the regularizer's gradient), so f > 0; and an
    # offset of +2 on both moves the decision value of the same row by less than 2 (the model
    # pulls back toward the balance the labels ask for).
    x = np.array([[1.0, 0.0], [1.0, 0.0]])
    gram = x @ x.T + 1.0
    even = fit_dual(gram, np.array([1, 0]), C=1.0)
    weighted = fit_dual(gram, np.array([1, 0]), C=1.0, weights=np.array([3.0, 1.0]))
    assert abs(gram[0] @ even) < 1e-9 and gram[0] @ weighted > 0.3
    shifted = fit_dual(gram, np.array([1, 0]), C=1.0, offset=np.array([2.0, 2.0]))
    f = gram[0] @ shifted + 2.0
    assert 0.0 < f < 2.0
