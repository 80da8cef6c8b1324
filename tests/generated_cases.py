"""The one generator of metric test cases: qrels and a run over generated questions, shaped to
hit what trips metric code — graded (-1..3, negatives as in Cranfield) and binary labels, heavy
score ties, negative and infinite scores, doc ids whose string order differs from their numeric
order (d10 < d9) and non-ASCII ids, runs shorter than k, empty runs, questions missing from the
run, questions with judgments but nothing relevant, and (per `Shape`) mostly unjudged pools,
questions with no judgment at all, and run queries nobody judged.

Each oracle test (pytrec_eval, ir_measures) picks the `Shape` its oracle is defined on; the
draws are made in one order, so a seed gives the same collection every time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ODD_IDS = ["doc-é", "doc-ß", "文档1", "Doc", "doc", "a-1", "a_1", "A1"]


@dataclass(frozen=True)
class Shape:
    """What a generated collection holds beyond the common cases."""

    judged_shares: tuple[float, ...] = ()  # judge this share of each pool (empty: any number, 1..pool)
    no_judgments: float = 0.0  # share of questions with empty qrels
    empty_run_below: float = 0.14  # mode < 0.08: question missing from the run; < this: an empty run
    tie_style_below: float = 0.35  # share of runs with heavy integer ties
    tie_levels: int = 4  # integer scores 0..tie_levels-1 in a tied run
    infinities: float = 0.0  # share of runs whose top score is +inf or -inf
    unjudged_run_queries: bool = False  # n_queries // 20 run queries with no qrels


TREC_EVAL = Shape(infinities=0.03)  # pytrec_eval's cases (tests/core/test_metrics_exact.py)
COVERAGE = Shape(judged_shares=(0.0, 0.2, 0.5, 1.0), no_judgments=0.05, empty_run_below=0.12,
                 tie_style_below=0.4, tie_levels=3, unjudged_run_queries=True)  # judged@k, condensed nDCG


def random_collection(seed: int, n_queries: int, *, binary: bool = False,
                      shape: Shape = TREC_EVAL) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """(qrels, run) for `n_queries` generated questions of `shape` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        pool = [f"d{i}" for i in range(int(rng.integers(1, 40)))]
        if rng.random() < 0.3:
            pool += list(rng.choice(ODD_IDS, size=int(rng.integers(1, len(ODD_IDS))), replace=False))
        if shape.judged_shares:
            n_judged = max(1, int(round(rng.choice(shape.judged_shares) * len(pool))))
        else:
            n_judged = int(rng.integers(1, len(pool) + 1))
        judged = rng.choice(pool, size=n_judged, replace=False)
        grades = rng.integers(0, 2, n_judged) if binary else rng.integers(-1, 4, n_judged)
        if shape.no_judgments and rng.random() < shape.no_judgments:
            qrels[qid] = {}
        else:
            qrels[qid] = {str(d): int(g) for d, g in zip(judged, grades)}
        mode = rng.random()
        if mode < 0.08:
            continue                       # missing from the run
        if mode < shape.empty_run_below:
            run[qid] = {}                  # empty run
            continue
        retrieved = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
        style = rng.random()
        if style < shape.tie_style_below:
            scores = rng.integers(0, shape.tie_levels, len(retrieved)).astype(float)  # heavy ties
        elif style < 0.7:
            scores = np.round(rng.normal(size=len(retrieved)), 1)                   # some ties, negatives
        else:
            scores = rng.random(len(retrieved))
        if shape.infinities and rng.random() < shape.infinities:
            scores[0] = -np.inf if rng.random() < 0.5 else np.inf
        run[qid] = {str(d): float(s) for d, s in zip(retrieved, scores)}
    if shape.unjudged_run_queries:
        for extra in range(n_queries // 20):  # run queries nobody judged: ignored by both sides
            run[f"x{extra}"] = {"d0": 1.0, "d1": 0.5}
    return qrels, run
