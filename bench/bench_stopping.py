"""Is the stopping rule's "<= 1 left (95%)" true? The active simulator with its stopping rule on CISI,
Cranfield and SciFact, BM25-only features (tf-idf, BM25 score and rank: no embeddings, so nothing needs
building), the first `N` questions of each, up to `BUDGET` judgments per question, a sample of 20 at the knee.

Printed per collection: questions, judgments spent, how many questions each bound was made for and held
for, and of the questions where the model bound (prequential) or the sample's said "<= 1 left", how many
truly had at most one relevant document left then. The JSON goes to bench/results/stopping_<name>.json.
Run: nice -n 19 .venv/bin/python bench/bench_stopping.py [name[:questions[:budget]] ...]
(BENCH_DENSE=1: with the embeddings too, built once under LABELER_HOME, default BENCH_HOME; the JSON is
then stopping_<name>_dense.json)
"""
from __future__ import annotations

import json
import os
import sys
import time

from pathlib import Path

from _common import BENCH_HOME, DATASETS, REPO


DENSE = os.environ.get("BENCH_DENSE") == "1"
DEFAULTS = {"cisi": (76, 100), "cranfield": (225, 100), "scifact": (300, 100)}  # every question, 100 judgments
KEEP_SCALE = {"cranfield": True}


def bench(spec: str) -> dict:
    from labeler.config import RunConfig
    from labeler.judging.collection import open_collection
    from labeler.judging.run import stopping_summary, strategy_for
    from labeler.judging.simulate import simulate

    name, *rest = spec.split(":")
    n, budget = DEFAULTS[name]
    n = int(rest[0]) if rest else n
    budget = int(rest[1]) if len(rest) > 1 else budget
    t = time.perf_counter()
    mode = "hybrid" if DENSE else "bm25"
    col = open_collection(DATASETS / name, keep_scale=KEEP_SCALE.get(name, False), config=RunConfig(mode=mode))
    qids = col.query_ids[:n]
    results = simulate(qids, strategy_for(col, "active", budget=budget, stop_sample=20, patience=10), col.qrels)
    st = stopping_summary(results, col.qrels)
    judged = sum(len(r.judged) for r in results.values())
    spent_done = sum(r.stopped_at for r in results.values() if r.stopped_at is not None)
    print(f"{name} ({mode}): {len(qids)} questions, budget {budget}, {judged} judgments ({spent_done} by the {st['done']} "
          f"stopped questions) in {time.perf_counter() - t:.0f}s; sample bound made {st['estimated']} held "
          f"{st['bound_held']}; model bound made {st['model_estimated']} held {st['model_bound_held']}; "
          f"said <= 1 left: {st['done']} ({st['done_by_model_only']} by the model bound alone), truly <= 1 left: "
          f"{st['done_and_at_most_one_left']}", flush=True)
    out = {"collection": name, "questions": len(qids), "budget": budget, "judgments": judged,
           "judgments_of_stopped": spent_done, "stopping": st,
           "runs": {q: {"judged": r.judged, "stopped_at": r.stopped_at,
                        "model_estimate": r.model_estimate and r.model_estimate.to_dict()} for q, r in results.items()}}
    results_dir = REPO / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / f"stopping_{name}{'_dense' if DENSE else ''}.json").write_text(json.dumps(out))
    return st


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LABELER_HOME", str(BENCH_HOME))
    total = {}
    for spec in sys.argv[1:] or list(DEFAULTS):
        for k, v in bench(spec).items():
            total[k] = total.get(k, 0) + v
    print(f"pooled: said <= 1 left {total.get('done', 0)}, truly <= 1 left {total.get('done_and_at_most_one_left', 0)}")
