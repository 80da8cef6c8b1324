"""Benchmark: score 10,000 questions x 100-document runs with graded labels.

Times this engine, pytrec_eval and ranx on the same dict input in one process and prints
the ratios. ranx is run once before timing so numba's compilation is excluded (warm).

    .venv/bin/python bench/bench_metrics.py [--queries 10000] [--depth 100] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

CUTOFFS = (1, 3, 5, 10, 100)


def make_input(n_queries: int, depth: int, seed: int = 0):
    """Graded qrels and runs of `depth` documents, fixed seed.

    Per question: 20 judged documents, grades 0-3, half of them somewhere in the run (so every
    metric has something to count) and half never retrieved (recall and the nDCG ideal must
    see them); scores rounded to 2 decimals so ties occur, as in real run files; documents in
    random insertion order (no help from an already-sorted input).
    """
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    pool = 10 * depth
    for q in range(n_queries):
        qid = f"q{q}"
        docs = rng.choice(pool, size=depth, replace=False)
        scores = np.round(rng.random(depth) * 100, 2)
        run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
        outside = rng.choice(np.setdiff1d(np.arange(pool), docs), size=10, replace=False)
        judged = np.concatenate([rng.choice(docs, size=10, replace=False), outside])
        grades = rng.integers(0, 4, size=len(judged))
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(judged, grades)}
    return qrels, run


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import pytrec_eval
    from ranx import Qrels as RanxQrels, Run as RanxRun, evaluate as ranx_evaluate

    from labeler.metrics import calc_aggregate, parse_measures

    qrels, run = make_input(args.queries, args.depth)
    ours = [f"{m}@{k}" for m in ("recall", "precision", "ndcg", "hit") for k in CUTOFFS] + ["mrr", "map", "r_precision"]
    trec = {f"recall.{','.join(map(str, CUTOFFS))}", f"P.{','.join(map(str, CUTOFFS))}",
            f"ndcg_cut.{','.join(map(str, CUTOFFS))}", f"success.{','.join(map(str, CUTOFFS))}",
            "recip_rank", "map", "Rprec"}
    ranx_metrics = [f"{m}@{k}" for m in ("recall", "precision", "ndcg", "hit_rate") for k in CUTOFFS] + ["mrr", "map", "r-precision"]
    print(f"{args.queries:,} queries x {args.depth} docs, {len(ours)} measures, best of {args.repeat}")

    def run_ours():
        return calc_aggregate(parse_measures(ours), qrels, run)

    def run_pytrec():
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, trec)
        per_query = evaluator.evaluate(run)
        keys = next(iter(per_query.values())).keys()
        return {k: float(np.mean([v[k] for v in per_query.values()])) for k in keys}

    def run_ranx_full():
        return ranx_evaluate(RanxQrels(qrels), RanxRun(run), ranx_metrics, make_comparable=True)

    ranx_qrels, ranx_run = RanxQrels(qrels), RanxRun(run)

    def run_ranx_eval_only():
        return ranx_evaluate(ranx_qrels, ranx_run, ranx_metrics, save_results_in_run=False)

    run_ranx_full()  # numba compilation happens here, outside the timings
    t_ours, ours_values = best_of(run_ours, args.repeat)
    t_trec, trec_values = best_of(run_pytrec, args.repeat)
    t_ranx, ranx_values = best_of(run_ranx_full, args.repeat)
    t_ranx_eval, _ = best_of(run_ranx_eval_only, args.repeat)

    # Same numbers as pytrec_eval on every measure (ranx differs slightly: it breaks ties its own way).
    for name, trec_name in zip(ours, [f"{f}_{k}" for f in ("recall", "P", "ndcg_cut", "success") for k in CUTOFFS]
                               + ["recip_rank", "map", "Rprec"]):
        assert abs(ours_values[name] - trec_values[trec_name]) < 1e-9, name
    print(f"  ndcg@10 ours {ours_values['ndcg@10']:.6f}  pytrec_eval {trec_values['ndcg_cut_10']:.6f}  "
          f"ranx {ranx_values['ndcg@10']:.6f}")
    print(f"labeler.metrics (dicts -> means)      {t_ours:8.3f} s")
    print(f"pytrec_eval (dicts -> means)          {t_trec:8.3f} s")
    print(f"ranx warm (dicts -> Qrels/Run -> means) {t_ranx:6.3f} s")
    print(f"ranx warm, evaluate() only (pre-built Qrels/Run) {t_ranx_eval:.3f} s")
    print(f"ratio ours / pytrec_eval        = {t_ours / t_trec:.2f}  (target < 1)")
    print(f"ratio ours / ranx warm          = {t_ours / t_ranx:.2f}  (target <= 1.5)")
    print(f"ratio ours / ranx evaluate-only = {t_ours / t_ranx_eval:.2f}  (informational)")


if __name__ == "__main__":
    main()
