"""The embedding judge: thresholds fitted for quadratic kappa, cross-fitted, cosines cut into grades."""
from __future__ import annotations

import numpy as np
import pytest

from labeler.errors import ConfigError
from labeler.judges import JudgePair, judge_spec_from_dict, make_judge
from labeler.judges.embedding import cross_fitted, fit_thresholds, fold_of, grades_of


class TinyEncoder:
    """Two-dimensional vectors worked out by hand: 'fleas' texts point at (1, 0), others at (0, 1)."""

    name = "tiny"

    def encode(self, texts):
        rows = [[1.0, 0.0] if "fleas" in t else [0.6, 0.8] if "cats" in t else [0.0, 1.0] for t in texts]
        return np.array(rows, dtype=np.float32)


def test_grades_of_counts_the_thresholds_reached():
    assert grades_of(np.array([0.1, 0.3, 0.5, 0.9, 0.5]), (0.3, 0.5, 0.8)).tolist() == [0, 1, 2, 3, 2]


def test_fit_thresholds_recovers_separable_grades():
    rng = np.random.default_rng(0)
    human = rng.integers(0, 4, 400)
    cosines = human * 0.2 + rng.random(400) * 0.15  # grade g lies in [0.2 g, 0.2 g + 0.15)
    cuts = fit_thresholds(cosines, human)
    assert (grades_of(cosines, cuts) == human).mean() > 0.97
    assert cuts[0] < cuts[1] < cuts[2]


def test_cross_fitted_grades_each_fold_with_the_other_folds_thresholds():
    rng = np.random.default_rng(1)
    keys = [(f"q{i}", f"d{j}") for i in range(20) for j in range(10)]
    human = {k: int(rng.integers(0, 4)) for k in keys}
    cosines = {k: human[k] * 0.2 + float(rng.random()) * 0.15 for k in keys}
    hole = ("q0", "unjudged")
    cosines[hole] = 0.99
    grades, fitted = cross_fitted(cosines, human, folds=2)
    assert set(grades) == set(cosines) and grades[hole] == 3 and set(fitted) == {0, 1}
    for f, cuts in fitted.items():  # the thresholds of fold f come from the pairs of the other fold only
        train = [k for k in human if fold_of(k[0], 2) != f]
        assert cuts == fit_thresholds([cosines[k] for k in train], [human[k] for k in train])


def test_embedding_judge_cuts_cosines_into_grades():
    spec = judge_spec_from_dict({"name": "cos", "kind": "embedding", "thresholds": [0.5, 0.7, 0.9]})
    judge = make_judge(spec, embedder=TinyEncoder())
    pairs = [JudgePair("q", "fleas", "a", "", "fleas breed"), JudgePair("q", "fleas", "b", "", "cats nap"),
             JudgePair("q", "fleas", "c", "", "solar")]
    # cosines: (1,0)·(1,0) = 1 -> 3; (1,0)·(0.6,0.8) = 0.6 -> 1; (1,0)·(0,1) = 0 -> 0
    got = {r.doc_id: r for r in judge.judge(pairs)}
    assert {d: r.grade for d, r in got.items()} == {"a": 3, "b": 1, "c": 0}
    assert got["b"].raw == "cosine 0.6000" and got["b"].params["thresholds"] == [0.5, 0.7, 0.9]


def test_embedding_judge_without_thresholds_says_how_to_get_them():
    judge = make_judge(judge_spec_from_dict({"name": "cos", "kind": "embedding"}), embedder=TinyEncoder())
    with pytest.raises(ConfigError, match="no thresholds"):
        list(judge.judge([JudgePair("q", "fleas", "a", "", "x")]))


def test_embedding_judge_with_the_packaged_model_offline():
    """The real MiniLM (packaged, no network): a document on the question's topic scores a higher
    cosine, so a higher grade, than one about something else."""
    judge = make_judge(judge_spec_from_dict({"name": "minilm", "kind": "embedding", "thresholds": [0.2, 0.4, 0.6]}))
    pairs = [JudgePair("q", "How do fleas reproduce?", "on", "Flea life cycle",
                       "Adult fleas lay eggs on the host; larvae hatch and spin cocoons."),
             JudgePair("q", "How do fleas reproduce?", "off", "Tax forms", "File your quarterly VAT return online.")]
    cosines = judge.cosines(pairs)
    assert cosines[0] > 0.4 > 0.2 > cosines[1]
    grades = {r.doc_id: r.grade for r in judge.judge(pairs)}
    assert grades["on"] >= 2 and grades["off"] == 0
