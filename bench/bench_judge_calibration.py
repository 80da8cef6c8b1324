"""The built-in embedding judge calibrated against real qrels: CISI and Cranfield.

Human pairs (per question with qrels): every judged pair of the qrels, plus the unjudged
documents of the Label page's pool (dense top 10 + BM25 top 10) taken as grade 0 — the pairs
an annotator would have been shown. Grades on the 0-3 scale: CISI's 1 (relevant) -> 2;
Cranfield's codes (cranqrel.readme: 1 complete answer, 2 high relevance, 3 useful, 4 minimum
interest, -1 no interest) -> 3, 2, 1, 1, 0.

The judge: the packaged MiniLM's cosine of question and document (`{title} {text}`), cut into
grades by thresholds maximizing quadratic kappa, CROSS-FITTED: questions split in two folds by a
hash of their id, each fold graded with the thresholds fitted on the other fold's pairs. The
baseline printed beside each figure: the same judge fitted and measured on ALL the pairs (in
sample), i.e. how much a figure measured on the fitting pairs flatters it.

Runs for tau (nDCG@10 order under human vs judge grades of the same pairs, and human-only vs
holes filled): the collection's BM25 file and four core pipelines (dense, bm25, hybrid, hybrid
with rrf_k 5). The gate's default bars: >= 100 pairs, binarized kappa (grade >= 1) >= 0.4, and
tau >= 0.9 with >= 4 runs.
Run: nice -n 19 .venv/bin/python bench/bench_judge_calibration.py [cisi cranfield]
"""
from __future__ import annotations

import json
import os
import sys
import time

from _common import BENCH_HOME, DATASETS, REPO

os.environ.setdefault("LABELER_HOME", str(BENCH_HOME))

GRADE_MAPS = {"cisi": {1: 2}, "cranfield": {1: 3, 2: 2, 3: 1, 4: 1, -1: 0}}
BARS = {"pairs": 100, "kappa_binary@1": 0.4, "kendall_tau": 0.9, "runs": 4}
RESULTS = REPO / "bench" / "results"


def runs_of(retriever, questions, folder) -> dict:
    from labeler.config import SearchParams
    from labeler.retrieval import retrieve_run
    from labeler.runfile import read_run

    runs = {"bm25s-file": read_run(next((folder / "runs").glob("*.trec")))}
    for name, params in {"dense": SearchParams(k=100, mode="dense"), "bm25": SearchParams(k=100, mode="bm25"),
                         "hybrid": SearchParams(k=100, mode="hybrid"),
                         "hybrid-rrf5": SearchParams(k=100, mode="hybrid", rrf_k=5)}.items():
        runs[name] = retrieve_run(retriever, questions, params)
    return runs


def bench(name: str) -> dict:
    from labeler.candidates import pool_candidates
    from labeler.config import RunConfig
    from labeler.corpus import load_corpus
    from labeler.golden import read_beir_golden
    from labeler.judges import JudgePair, judge_spec_from_dict, make_judge
    from labeler.judges.calibration import calibrate
    from labeler.judges.embedding import cross_fitted, fit_thresholds, grades_of
    from labeler.metrics import trec_ranked
    from labeler.retrieval import open_retriever

    t0 = time.perf_counter()
    folder = DATASETS / name
    corpus = load_corpus(folder)
    golden = read_beir_golden(folder, keep_scale=True, doc_ids=corpus.doc_ids())
    retriever = open_retriever(corpus, RunConfig(retriever="hybrid"))
    judged = [q for q in golden if q.relevance]
    questions = {q.query_id: q.question for q in judged}
    human = {(q.query_id, d): GRADE_MAPS[name][g] for q in judged for d, g in q.relevance.items()}
    n_qrels = len(human)
    for q in judged:
        for c in pool_candidates(retriever, q.question):
            human.setdefault((q.query_id, c.doc_id), 0)
    runs = runs_of(retriever, questions, folder)
    holes: set[tuple[str, str]] = set()
    for run in runs.values():
        for q, scores in run.items():
            if q in questions:
                holes |= {(q, d) for d, _ in trec_ranked(scores)[:10]} - set(human)
    keys = sorted(set(human) | holes)
    spec = judge_spec_from_dict({"name": "minilm-cosine", "kind": "embedding"})
    judge = make_judge(spec, embedder=retriever.embedder)
    pairs = [JudgePair(q, questions[q], d, corpus.get(d).title, corpus.get(d).text) for q, d in keys]
    t1 = time.perf_counter()
    cosines = dict(zip(keys, judge.cosines(pairs)))
    embed_s = time.perf_counter() - t1
    machine, fitted = cross_fitted(cosines, human, folds=2)
    result = calibrate(human, machine, runs, bootstrap=1000, seed=0)
    in_sample_cuts = fit_thresholds([cosines[k] for k in human], [human[k] for k in human])
    in_sample = dict(zip(keys, (int(g) for g in grades_of([cosines[k] for k in keys], in_sample_cuts))))
    baseline = calibrate(human, in_sample, runs, bootstrap=0)
    figures = result.to_dict()
    verdict = {"pairs": result.pairs >= BARS["pairs"],
               "kappa_binary@1": (result.kappa_binary[1] or -1) >= BARS["kappa_binary@1"],
               "kendall_tau": len(runs) < BARS["runs"] or (result.kendall_tau or -1) >= BARS["kendall_tau"]}
    print(f"\n== {name}: {len(judged)} questions with qrels, {result.pairs} human pairs ({n_qrels} from the qrels, "
          f"{result.pairs - n_qrels} pool documents unjudged -> 0), {len(holes)} holes in the runs' top 10; "
          f"cosines of {len(keys)} pairs in {embed_s:.0f}s (total {time.perf_counter() - t0:.0f}s)")
    print(f"thresholds (cross-fitted, per fold): {', '.join(f'{f}: ' + str([round(t, 3) for t in c]) for f, c in fitted.items())}; "
          f"in sample: {[round(t, 3) for t in in_sample_cuts]}")
    for stat in ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias",
                 "kendall_tau", "tau_ap", "kendall_tau_filled", "tau_ap_filled"):
        value, base = figures[stat], baseline.to_dict()[stat]
        lo, hi = figures["ci95"][stat]
        shown = "n/a" if value is None else f"{value:.3f} [{lo:.3f}, {hi:.3f}]"
        ratio = f"{value / base:.2f}x" if value is not None and base else "n/a"
        print(f"  {stat:<19} {shown:<26} in-sample baseline {base if base is None else round(base, 3)}  ({ratio})")
    print("  confusion (rows human 0-3, cols judge 0-3):", figures["confusion"])
    for run, s in result.run_scores.items():
        print(f"  {run:<12} nDCG@10 human {s['human']:.4f} judge {s['judge']:.4f} | all human {s['human_all']:.4f} "
              f"filled {s['filled']:.4f}")
    passed = all(verdict.values())
    print(f"  gate (>= {BARS['pairs']} pairs, binarized kappa@1 >= {BARS['kappa_binary@1']}, tau >= "
          f"{BARS['kendall_tau']} with {len(runs)} runs): {'PASSES' if passed else 'REFUSED'} {verdict}")
    return {"collection": name, "figures": figures, "in_sample": baseline.to_dict(), "thresholds": fitted,
            "human_pairs_from_qrels": n_qrels, "holes": len(holes), "run_scores": result.run_scores,
            "gate": verdict, "passes": passed}


def main(argv: list[str]) -> None:
    names = argv or ["cisi", "cranfield"]
    print(f"load average: {os.getloadavg()}")
    out = [bench(name) for name in names]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "judge_calibration.json").write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "bench"))
    main(sys.argv[1:])
