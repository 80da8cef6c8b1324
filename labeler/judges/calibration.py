"""How far a judge agrees with people: label agreement and system-ranking agreement, with CIs.

`calibrate(human, machine, runs)` takes the consensus grades people gave, `{(query_id, doc_id):
grade}`, a judge's grades in the same shape, and optionally saved runs `{name: {query_id:
{doc_id: score}}}`. The calibration pairs are the (question, document) pairs with both grades.

- Label agreement over the pairs (formulas in `labeler.judges.stats`): Cohen's kappa on the 4
  grades (unweighted and quadratic-weighted), binarized kappa at grade >= 1 and >= 2,
  Krippendorff's ordinal alpha, the confusion matrix (rows = human grade 0-3, columns = machine
  grade 0-3), `bias` = mean(machine - human) (> 0: the judge grades higher than people) and
  `bias_by_grade` = that mean per human grade.
- System-ranking agreement (with 2+ runs): every run's nDCG@10 (`labeler.metrics`, trec_eval
  semantics) under the human grades of the pairs and under the judge's grades of the SAME pairs,
  over the questions that have a pair; `kendall_tau` (tau-b) and `tau_ap` between the two orders
  of the runs. `kendall_tau_filled` / `tau_ap_filled`: the order under all the human grades vs
  under the human grades with the holes filled by the judge (machine grades of pairs no person
  graded, on the human questions only).
- `ci95`: percentile bootstrap 95% intervals, `bootstrap` resamples, fixed `seed`: pairs are
  resampled for the label statistics, questions for the tau statistics (a question's documents
  go together). A resample where a statistic is undefined is left out of its quantiles.

A statistic that is undefined (one grade only; fewer than 2 runs) is None (null in JSON).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labeler.errors import InputError
from labeler.judges import stats
from labeler.metrics import calc_per_query, nDCG

Pairs = Mapping[tuple[str, str], int]
Runs = Mapping[str, Mapping[str, Mapping[str, float]]]
LEVELS = 4
LABEL_STATS = ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias")
TAU_STATS = ("kendall_tau", "tau_ap", "kendall_tau_filled", "tau_ap_filled")
RANKING_MEASURE = nDCG @ 10


@dataclass(frozen=True)
class Calibration:
    """A judge's agreement with people (see the module docstring for each figure)."""

    pairs: int
    kappa: float | None
    kappa_quadratic: float | None
    kappa_binary: Mapping[int, float | None]
    alpha: float | None
    confusion: tuple[tuple[int, ...], ...]
    bias: float | None
    bias_by_grade: Mapping[int, float | None]
    kendall_tau: float | None = None
    tau_ap: float | None = None
    kendall_tau_filled: float | None = None
    tau_ap_filled: float | None = None
    ci95: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    run_scores: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # run -> {human, judge, ...}
    questions: int = 0
    bootstrap: int = 0
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The `labeler calibrate --json` object: the issue's keys (and the filled taus, per-grade bias)."""
        return {"pairs": self.pairs, "kappa": self.kappa, "kappa_quadratic": self.kappa_quadratic,
                "kappa_binary@1": self.kappa_binary[1], "kappa_binary@2": self.kappa_binary[2],
                "alpha": self.alpha, "confusion": [list(row) for row in self.confusion], "bias": self.bias,
                "kendall_tau": self.kendall_tau, "tau_ap": self.tau_ap,
                "kendall_tau_filled": self.kendall_tau_filled, "tau_ap_filled": self.tau_ap_filled,
                "bias_by_grade": {str(g): v for g, v in self.bias_by_grade.items()},
                "ci95": {k: list(v) for k, v in self.ci95.items()}}

    def value(self, name: str) -> float | None:
        """A statistic by its `--json` key ("kappa_binary@1", "tau_ap", ...)."""
        return self.to_dict()[name]


def _number(x: float) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _interval(samples: np.ndarray) -> tuple[float | None, float | None]:
    defined = samples[np.isfinite(samples)]
    if not len(defined):
        return None, None
    return float(np.quantile(defined, 0.025)), float(np.quantile(defined, 0.975))


def _grades(name: str, pairs: Pairs) -> None:
    for (query_id, doc_id), grade in pairs.items():
        if isinstance(grade, bool) or not isinstance(grade, (int, np.integer)) or not 0 <= grade < LEVELS:
            raise InputError(f"{name} grade {grade!r} of ({query_id!r}, {doc_id!r}) is not 0-3",
                             hint="calibration compares grades on the 0-3 scale.")


def label_statistics(confusion: np.ndarray) -> dict[str, np.ndarray]:
    """Every label statistic of confusion matrices (..., 4, 4), keyed as in `--json`."""
    c = np.asarray(confusion, dtype=np.float64)
    diff = np.arange(LEVELS)[None, :] - np.arange(LEVELS)[:, None]  # machine - human
    n = c.sum(axis=(-2, -1))
    return {"kappa": stats.cohen_kappa(c), "kappa_quadratic": stats.weighted_kappa(c),
            "kappa_binary@1": stats.cohen_kappa(stats.binarized(c, 1)),
            "kappa_binary@2": stats.cohen_kappa(stats.binarized(c, 2)),
            "alpha": stats.ordinal_alpha(c), "bias": stats.safe_divide((c * diff).sum(axis=(-2, -1)), n)}


def _per_query(qrels: Mapping[str, Mapping[str, int]], runs: Runs, questions: list[str]) -> np.ndarray:
    """(runs, questions) nDCG@10 values."""
    name = str(RANKING_MEASURE)
    return np.array([[row[name] for row in calc_per_query([RANKING_MEASURE], qrels, run, query_ids=questions).values()]
                     for run in runs.values()], dtype=np.float64).reshape(len(runs), len(questions))


def _qrels(pairs: Pairs) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (query_id, doc_id), grade in pairs.items():
        out.setdefault(query_id, {})[doc_id] = int(grade)
    return out


def calibrate(human: Pairs, machine: Pairs, runs: Runs | None = None, *, bootstrap: int = 1000,
              seed: int = 0) -> Calibration:
    """The judge's agreement with people on the pairs both graded (module docstring)."""
    _grades("human", human)
    _grades("machine", machine)
    keys = sorted(set(human) & set(machine))
    h = np.array([human[k] for k in keys], dtype=np.int64)
    m = np.array([machine[k] for k in keys], dtype=np.int64)
    codes = h * LEVELS + m
    confusion = np.bincount(codes, minlength=LEVELS * LEVELS).reshape(LEVELS, LEVELS)
    values = {k: _number(v) for k, v in label_statistics(confusion).items()}
    rng = np.random.default_rng(seed)
    ci: dict[str, tuple[float | None, float | None]] = {}
    if keys and bootstrap:
        draws = rng.integers(0, len(keys), size=(bootstrap, len(keys)))
        offset = (np.arange(bootstrap) * LEVELS * LEVELS)[:, None]
        resampled = np.bincount((codes[draws] + offset).ravel(), minlength=bootstrap * LEVELS * LEVELS)
        samples = label_statistics(resampled.reshape(bootstrap, LEVELS, LEVELS))
        ci = {k: _interval(samples[k]) for k in LABEL_STATS}
    else:
        ci = {k: (None, None) for k in LABEL_STATS}
    rows = confusion.sum(axis=1)
    by_grade = {g: (float((confusion[g] * (np.arange(LEVELS) - g)).sum() / rows[g]) if rows[g] else None)
                for g in range(LEVELS)}
    taus: dict[str, float | None] = dict.fromkeys(TAU_STATS)
    ci.update({k: (None, None) for k in TAU_STATS})
    run_scores: dict[str, dict[str, float]] = {}
    questions = sorted({q for q, _ in keys})
    if runs and len(runs) >= 2 and questions:
        pair_h, pair_m = {k: human[k] for k in keys}, {k: machine[k] for k in keys}
        on_pairs = (_per_query(_qrels(pair_h), runs, questions), _per_query(_qrels(pair_m), runs, questions))
        human_questions = sorted({q for q, _ in human})
        filled = {**{k: g for k, g in machine.items() if k[0] in set(human_questions)}, **human}
        on_all = (_per_query(_qrels(human), runs, human_questions), _per_query(_qrels(filled), runs, human_questions))
        for suffix, (x, y), n_q in (("", on_pairs, len(questions)), ("_filled", on_all, len(human_questions))):
            taus["kendall_tau" + suffix] = _number(stats.kendall_tau_b(x.mean(axis=1), y.mean(axis=1)))
            taus["tau_ap" + suffix] = _number(stats.tau_ap(x.mean(axis=1), y.mean(axis=1)))
            if bootstrap:
                draws = rng.integers(0, n_q, size=(bootstrap, n_q))
                xs = x[:, draws].mean(axis=2).T  # (bootstrap, runs)
                ys = y[:, draws].mean(axis=2).T
                ci["kendall_tau" + suffix] = _interval(stats.kendall_tau_b(xs, ys))
                ci["tau_ap" + suffix] = _interval(stats.tau_ap(xs, ys))
        for i, name in enumerate(runs):
            run_scores[name] = {"human": float(on_pairs[0][i].mean()), "judge": float(on_pairs[1][i].mean()),
                                "human_all": float(on_all[0][i].mean()), "filled": float(on_all[1][i].mean())}
    return Calibration(pairs=len(keys), kappa=values["kappa"], kappa_quadratic=values["kappa_quadratic"],
                       kappa_binary={1: values["kappa_binary@1"], 2: values["kappa_binary@2"]},
                       alpha=values["alpha"], confusion=tuple(tuple(int(v) for v in row) for row in confusion),
                       bias=values["bias"], bias_by_grade=by_grade, ci95=ci, run_scores=run_scores,
                       questions=len(questions), bootstrap=bootstrap, seed=seed, **taus)
