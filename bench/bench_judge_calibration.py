"""The built-in embedding judge calibrated against real qrels: CISI and Cranfield.

Human pairs (per question with qrels): every judged pair of the qrels plus unjudged documents
taken as grade 0, two ways, each reported: "pool" — the unjudged documents of the Label page's
pool (dense top 10 + BM25 top 10), the pairs an annotator would have been shown (hard
negatives: chosen by the very cosine the judge reads); "random" — 10 unjudged documents per
question drawn at random from the corpus (seed 0). Grades on the 0-3 scale: CISI's 1 (relevant) -> 2;
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
import random
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


class IndexedEncoder:
    """The retriever's own cached document vectors for the texts it embedded (whole documents,
    `{title} {text}`: the judge's text exactly), the model for anything else (the questions)."""

    def __init__(self, retriever) -> None:
        self.retriever = retriever
        self.name = retriever.embedder.name
        self.rows = {text: i for i, text in enumerate(retriever.texts)}

    def encode(self, texts):
        import numpy as np

        vectors = self.retriever.vectors
        missing = [t for t in texts if t not in self.rows]
        encoded = dict(zip(missing, self.retriever.embedder.encode(missing))) if missing else {}
        return np.array([vectors[self.rows[t]] if t in self.rows else encoded[t] for t in texts])


def report(name: str, variant: str, human: dict, cosines: dict, runs: dict, n_qrels: int) -> dict:
    from labeler.judges.calibration import calibrate
    from labeler.judges.embedding import cross_fitted, fit_thresholds, grades_of

    keys = [k for k in cosines if k in human or k not in HUMAN_ANY]
    cos = {k: cosines[k] for k in keys}
    machine, fitted = cross_fitted(cos, human, folds=2)
    result = calibrate(human, machine, runs, bootstrap=1000, seed=0)
    in_sample_cuts = fit_thresholds([cos[k] for k in human], [human[k] for k in human])
    in_sample = dict(zip(keys, (int(g) for g in grades_of([cos[k] for k in keys], in_sample_cuts))))
    baseline = calibrate(human, in_sample, runs, bootstrap=0)
    figures = result.to_dict()
    verdict = {"pairs": result.pairs >= BARS["pairs"],
               "kappa_binary@1": (result.kappa_binary[1] or -1) >= BARS["kappa_binary@1"],
               "kendall_tau": len(runs) < BARS["runs"] or (result.kendall_tau or -1) >= BARS["kendall_tau"]}
    relevant = [cos[k] for k in human if human[k] >= 1]
    negative = [cos[k] for k in human if human[k] == 0]
    print(f"\n-- {name}, {variant} negatives: {result.pairs} human pairs ({n_qrels} from the qrels, "
          f"{result.pairs - n_qrels} unjudged -> 0); mean cosine relevant {sum(relevant) / len(relevant):.3f}, "
          f"grade 0 {sum(negative) / len(negative):.3f}")
    print(f"thresholds (cross-fitted, per fold): "
          f"{', '.join(f'{f}: ' + str([round(t, 3) for t in c]) for f, c in fitted.items())}; "
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
          f"{BARS['kendall_tau']} with {len(runs)} runs): {'PASSES' if passed else 'REFUSED'} {verdict}", flush=True)
    return {"collection": name, "negatives": variant, "figures": figures, "in_sample": baseline.to_dict(),
            "thresholds": fitted, "human_pairs_from_qrels": n_qrels, "run_scores": result.run_scores,
            "gate": verdict, "passes": passed}


HUMAN_ANY: set = set()  # every pair some variant's people graded: not a hole in any variant


def bench(name: str) -> list[dict]:
    from labeler.candidates import pool_candidates
    from labeler.config import RunConfig
    from labeler.corpus import load_corpus
    from labeler.golden import read_beir_golden
    from labeler.judges import JudgePair, judge_spec_from_dict, make_judge
    from labeler.metrics import trec_ranked
    from labeler.retrieval import open_retriever

    t0 = time.perf_counter()
    folder = DATASETS / name
    corpus = load_corpus(folder)
    golden = read_beir_golden(folder, keep_scale=True, doc_ids=corpus.doc_ids())
    retriever = open_retriever(corpus, RunConfig(mode="hybrid"))
    judged = [q for q in golden if q.relevance]
    questions = {q.query_id: q.question for q in judged}
    qrels = {(q.query_id, d): GRADE_MAPS[name][g] for q in judged for d, g in q.relevance.items()}
    pool = dict(qrels)
    for q in judged:
        for c in pool_candidates(retriever, q.question):
            pool.setdefault((q.query_id, c.doc_id), 0)
    rng = random.Random(0)
    ids = sorted(corpus.doc_ids())
    drawn = dict(qrels)
    for q in judged:
        unjudged = [d for d in rng.sample(ids, 40) if d not in q.relevance]
        drawn.update({(q.query_id, d): 0 for d in unjudged[:10]})
    HUMAN_ANY.clear()
    HUMAN_ANY.update(pool, drawn)
    runs = runs_of(retriever, questions, folder)
    holes: set[tuple[str, str]] = set()
    for run in runs.values():
        for q, scores in run.items():
            if q in questions:
                holes |= {(q, d) for d, _ in trec_ranked(scores)[:10]} - HUMAN_ANY
    keys = sorted(HUMAN_ANY | holes)
    judge = make_judge(judge_spec_from_dict({"name": "minilm-cosine", "kind": "embedding"}),
                       embedder=IndexedEncoder(retriever))
    t1 = time.perf_counter()
    cosines = dict(zip(keys, judge.cosines([JudgePair.of_document(q, questions[q], corpus.get(d))
                                            for q, d in keys])))
    print(f"\n== {name}: {len(judged)} questions with qrels, {len(holes)} holes in the runs' top 10; cosines of "
          f"{len(keys)} pairs in {time.perf_counter() - t1:.0f}s (total {time.perf_counter() - t0:.0f}s)", flush=True)
    return [report(name, variant, human, cosines, runs, len(qrels)) for variant, human in (("pool", pool),
                                                                                           ("random", drawn))]


def main(argv: list[str]) -> None:
    names = argv or ["cisi", "cranfield"]
    print(f"load average: {os.getloadavg()}")
    out = [r for name in names for r in bench(name)]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"judge_calibration_{'_'.join(names)}.json").write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "bench"))
    main(sys.argv[1:])
