"""What judging costs: today's pool order against the active order, on CISI, Cranfield and SciFact.

Both strategies run in this one process on the same collection objects (one retriever, one cache),
an oracle grading from the full qrels. Printed per collection, each figure beside its baseline:
- judgments to reach 90% of the relevant documents today's pool holds (target: active <= 0.5x pool,
  CISI and Cranfield);
- relevant found with as many judgments as the whole pool (target: >= 1.5x on CISI, >= 1x SciFact), each
  question its pool's number, and in all, spread over the questions by what each still finds (allocation);
- the stopping estimate (active, with its sample): of the questions where it said "<= 1 left
  (95%)", how many really had at most one left (target >= 90%), and how often the bound held;
- Kendall tau of five systems' nDCG@10 order on the judgments so far against the full qrels;
- one re-order of 100 SciFact candidates (target <= 20 ms, p95).
The simulations' JSON (the `labeler simulate --json` shape) goes to bench/results/, the plot to
docs/screenshots/judging_cost.png. Embeddings are cached under LABELER_HOME (default BENCH_HOME).
Run: nice -n 19 .venv/bin/python bench/bench_judging_cost.py [collection ...]   (`--plot`: only redraw;
`--latency-only scifact`: only the re-order latency, BM25-only)
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from _common import BENCH_HOME, DATASETS, REPO, percentiles

BUDGETS = {"cisi": 40, "cranfield": 20, "scifact": 20}  # judgments per question for `active` (CISI: as measured in README)
KEEP_SCALE = {"cranfield": True}  # Cranfield's -1 and 1..4 (relevant: grade >= 1, as the core reads it)
RESULTS = Path(os.environ.get("BENCH_RESULTS", REPO / "bench" / "results"))
REGULARIZATION = float(os.environ.get("BENCH_C", 0)) or None  # another C for the active model, to compare
PLOT = REPO / "docs" / "screenshots" / "judging_cost.png"


def systems(col) -> dict:
    """Five runs to rank by nDCG@10: the collection's BM25 file and four of the core's pipelines."""
    from labeler.config import SearchParams
    from labeler.retrieval import retrieve_run
    from labeler.runfile import read_run

    questions = col.golden.questions()
    runs = {"bm25s-file": read_run(next((col.folder / "runs").glob("*.trec")))}
    for name, params in {"dense": SearchParams(k=100, mode="dense"), "bm25": SearchParams(k=100, mode="bm25"),
                         "hybrid": SearchParams(k=100, mode="hybrid"),
                         "hybrid-rrf5": SearchParams(k=100, mode="hybrid", rrf_k=5)}.items():
        runs[name] = retrieve_run(col.retriever, questions, params)
    return runs


def reorder_latency(col, n: int = 60, features_for=None) -> tuple[float, float, float, float]:
    """p50 and p95 of one re-order of 100 candidates (the first 10 graded, plus the first relevant one
    if none of those is, so the model is fitted), features built beforehand: wall-clock seconds, then
    CPU seconds of this process (on a busy machine the wall clock mostly measures the wait for a core)."""
    from labeler.judging import ActiveOrder

    samples, cpu = [], []
    for qid in col.query_ids[:n]:
        model = ActiveOrder((features_for or col.features)(qid), seed=qid)
        ranked = [col.text.doc_ids[p] for p in model.features.prior_order()[:100]]
        judged = {d: col.qrels[qid].get(d, 0) for d in ranked[:10]}
        relevant = [d for d in ranked if col.qrels[qid].get(d, 0) >= 1]
        if not relevant:
            continue
        judged.setdefault(relevant[0], col.qrels[qid][relevant[0]])
        model.order(judged, ranked)  # the first call builds the question's feature matrix (once per question)
        t, c = time.perf_counter(), time.process_time()
        model.order(judged, ranked)
        samples.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return (*percentiles(samples), *percentiles(cpu))


def ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "n/a"


def bench(name: str) -> None:
    from labeler.judging.collection import open_collection
    from labeler.judging.run import simulate_collection

    t0 = time.perf_counter()
    col = open_collection(DATASETS / name, keep_scale=KEEP_SCALE.get(name, False))
    runs = systems(col)
    _ = col.pools
    print(f"\n== {name}: {len(col.query_ids)} questions, opened in {time.perf_counter() - t0:.0f}s", flush=True)
    out = {}
    tuned = {"regularization": REGULARIZATION} if REGULARIZATION else {}
    for label, kwargs in {"pool": dict(strategy="pool"),
                          "active": dict(strategy="active", budget=BUDGETS[name], stop_sample=0, **tuned),
                          "active+stop": dict(strategy="active", budget=2 * BUDGETS[name], stop_sample=20,
                                              **tuned),
                          "active+allocate": dict(strategy="active", allocate=True, stop_sample=0, **tuned)}.items():
        t = time.perf_counter()
        out[label] = simulate_collection(col.folder, collection=col, runs=runs, **kwargs)
        print(f"{label}: simulated in {time.perf_counter() - t:.0f}s", flush=True)
        (RESULTS / f"judging_{name}_{label}.json").write_text(json.dumps(out[label]))
    pool, active = out["pool"]["summary"], out["active"]["summary"]
    p, a = pool["pool"], active["pool"]
    print(f"relevant: {pool['relevant']}; in today's pool: {p['relevant']} "
          f"({p['relevant'] / pool['relevant']:.0%}); pool judgments: {p['judgments']}")
    j_pool, j_active = p["judgments_to_reach_90%_of_pool_relevant"], a["judgments_to_reach_90%_of_pool_relevant"]
    print(f"judgments to reach 90% of the pool's relevant (every question's first b): pool {j_pool}, "
          f"active {j_active} -> {ratio(j_active, j_pool)}")
    e_pool, e_active = (s["pool"]["judgments_to_reach_90%_of_pool_relevant_each"] for s in (pool, active))
    print(f"judgments to reach 90% of the pool's relevant (each question until it has 90% of its pool's): "
          f"pool {e_pool['judgments']}, active {e_active['judgments']} ({e_active['not_reached']} questions "
          f"never got there) -> {ratio(e_active['judgments'], e_pool['judgments'])}")
    print(f"relevant found in {p['judgments']} judgments: pool {p['relevant_found_within_pool_budget']}, active "
          f"{a['relevant_found_within_pool_budget']} -> "
          f"{ratio(a['relevant_found_within_pool_budget'], p['relevant_found_within_pool_budget'])}")
    allocated = out["active+allocate"]["summary"]["allocation"]["relevant_found"]
    print(f"relevant found in {p['judgments']} judgments spread over the questions by what each still finds "
          f"(every question's first 10, then 10 at a time): {allocated} -> "
          f"{ratio(allocated, p['relevant_found_within_pool_budget'])}")
    for label in ("pool", "active"):
        reach = out[label]["summary"]["judgments_to_reach"]
        print(f"{label}: judgments to reach 50/80/90/95% of all relevant: "
              + " / ".join(str(reach[k]) for k in ("50%", "80%", "90%", "95%")))
        print(f"{label}: tau by judgments: " + ", ".join(f"{t['judgments']}: {t['tau']}"
                                                         for t in out[label]["summary"]["tau"]))
    st = out["active+stop"]["summary"]["stopping"]
    print(f"stopping (sample 20 at the knee, patience 10): {st['estimated']} estimates, bound held for "
          f"{st['bound_held']}; said <= 1 left for {st['done']}, of which {st['done_and_at_most_one_left']} "
          f"had at most one left")
    if name == "scifact":
        print(latency_line(col))


def plot(results: dict) -> None:
    try:
        import matplotlib
    except ModuleNotFoundError:
        print("matplotlib is not installed: no plot")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4), squeeze=False)
    for ax, (name, out) in zip(axes[0], results.items()):
        for label, style in (("pool", "--"), ("active", "-")):
            s = out[label]["summary"]
            ax.plot([0] + [c["judgments"] for c in s["curve"]],
                    [0] + [c["relevant_found"] / s["relevant"] for c in s["curve"]], style, label=label)
        ax.axvline(out["pool"]["summary"]["pool"]["judgments"], color="grey", lw=0.8)
        if "active+allocate" in out:  # one point: the pool's judgments spread over the questions by yield
            s = out["active+allocate"]["summary"]
            ax.plot([s["allocation"]["total"]], [s["allocation"]["relevant_found"] / s["relevant"]], "o",
                    label="active, spread by yield")
        ax.set_title(f"{name} ({out['pool']['summary']['questions']} questions)")
        ax.set_xlabel("judgments spent (grey: today's whole pool)")
        ax.set_ylabel("share of the known relevant found")
        ax.legend()
    fig.tight_layout()
    fig.savefig(PLOT, dpi=90)
    print(f"plot: {PLOT.relative_to(REPO)}")


def saved(name: str) -> dict | None:
    """The pool and active results a run of this bench saved for a collection, if both are there."""
    paths = {label: RESULTS / f"judging_{name}_{label}.json" for label in ("pool", "active")}
    if not all(p.is_file() for p in paths.values()):
        return None
    paths["active+allocate"] = RESULTS / f"judging_{name}_active+allocate.json"
    return {label: json.loads(p.read_text()) for label, p in paths.items() if p.is_file()}


def latency_only(name: str) -> None:
    """The re-order latency alone, on a collection opened BM25-only (while its embedding is not built):
    tf-idf and BM25 columns, plus random unit vectors of the packaged model's width (384) and a dense
    score column in place of the embeddings, so the model does the same arithmetic as with them."""
    import numpy as np

    from labeler.config import RunConfig
    from labeler.judging.collection import open_collection
    from labeler.judging.features import question_features

    col = open_collection(DATASETS / name, config=RunConfig(mode="bm25"))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(col.text.doc_ids), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    questions = col.golden.questions()

    def features_for(qid: str):
        query = vectors[rng.integers(len(vectors))]
        scores = {**col._scores[qid], "dense": vectors @ query}
        return question_features(col.text, questions[qid], scores, vectors=vectors, query_vector=query)

    print(f"{name} (tf-idf, BM25, stand-in embeddings): {latency_line(col, features_for)}")


def latency_line(col, features_for=None) -> str:
    p50, p95, c50, c95 = reorder_latency(col, features_for=features_for)
    return (f"re-order of 100 candidates: wall p50 {p50 * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms; CPU p50 "
            f"{c50 * 1e3:.1f} ms, p95 {c95 * 1e3:.1f} ms (target <= 20 ms)")


def main(names: list[str]) -> None:
    """Simulate the named collections (`--plot` alone: none), then plot every collection with saved results."""
    os.environ.setdefault("LABELER_HOME", str(BENCH_HOME))
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in names:
        bench(name)
    plot({name: out for name in ("cisi", "cranfield", "scifact") if (out := saved(name))})


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--latency-only"]:
        latency_only(args[1] if len(args) > 1 else "scifact")
    else:
        main([] if args == ["--plot"] else args or ["cisi", "cranfield", "scifact"])
