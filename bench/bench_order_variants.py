"""Which active order? Variants of the model against today's pool order, each in the same run and process.

The variants the README's "Judging order" reports, each `budget` judgments per question from the whole corpus
(no stopping), with the two figures bench_judging_cost.py reports: judgments to reach 90% of the relevant
documents today's pool holds (every question's first b, summed), and relevant found with as many judgments as
the whole pool; also the relevant among every question's first 5, 10 and 20. An oracle grades from the qrels,
and each variant sees only the grades it asked for (they subclass ActiveOrder and read `judged` alone).
Run: nice -n 19 .venv/bin/python bench/bench_order_variants.py cisi [cranfield] [--budget 20] [--only C10,fuse2]
(hybrid: the embeddings are built once under LABELER_HOME, default BENCH_HOME)
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _common import BENCH_HOME, DATASETS


def variants() -> dict:
    from labeler.judging.active import ActiveOrder
    from labeler.judging.features import rank_of

    def rrf(scores: np.ndarray) -> np.ndarray:
        return 1.0 / (60 + rank_of(np.asarray(scores, dtype=np.float64)))

    def relevant(model, judged) -> list[int]:
        return [model._position[d] for d, g in judged.items() if d in model._position and g >= model.min_grade]

    def make(base=ActiveOrder, **kw):
        class Variant(base):
            def __init__(self, features, **more):
                super().__init__(features, **{**kw, **more})
        return Variant

    class Fused(ActiveOrder):
        """The model's rank fused with the retrievers' (reciprocal rank, the model weighted `weight`)."""
        weight = 2.0

        def scores(self, judged, positions=None):
            if not relevant(self, judged):
                return super().scores(judged, positions)
            total = self.weight * rrf(self.fitted_scores(judged)) + self.features.prior_scores()
            return total if positions is None else total[positions]

    class Rocchio(ActiveOrder):
        """Rocchio feedback on tf-idf and on the embeddings (question + mean relevant - 0.25 mean not
        relevant), each one's rank fused with the retrievers' and, with `with_model`, the model's."""
        with_model = False

        def scores(self, judged, positions=None):
            rel = relevant(self, judged)
            if not rel:
                return super().scores(judged, positions)
            f = self.features
            non = [self._position[d] for d, g in judged.items() if d in self._position and g < self.min_grade]
            m = f.text.matrix
            v = np.asarray(f.text.transform(f.question).todense()).ravel() + np.asarray(m[rel].mean(axis=0)).ravel()
            if non:
                v -= 0.25 * np.asarray(m[non].mean(axis=0)).ravel()
            total = rrf(np.asarray(m @ v).ravel()) + f.prior_scores()
            if f.vectors is not None:
                e = f.query_vector + f.vectors[rel].mean(axis=0) - (0.25 * f.vectors[non].mean(axis=0) if non else 0)
                total += rrf(f.vectors @ e)
            if self.with_model:
                total += rrf(self.fitted_scores(judged))
            return total if positions is None else total[positions]

    class Waits(ActiveOrder):
        """The retrievers' order until `wait` grades say relevant (1: the default)."""
        wait = 2

        def scores(self, judged, positions=None):
            if len(relevant(self, judged)) < self.wait:
                prior = self.features.prior_scores()
                return prior if positions is None else prior[positions]
            return self.fitted_scores(judged, positions)

    class FromTheStart(ActiveOrder):
        """BMI as published: the model from the first grade on, the question its one relevant row until then."""

        def scores(self, judged, positions=None):
            return super().scores(judged, positions) if not judged else self.fitted_scores(judged, positions)

    class Expanded(ActiveOrder):
        """A BM25 column for the question expanded by the 10 heaviest tf-idf terms of the documents graded relevant
        (pseudo-relevance feedback from judged documents only), refreshed at every fit; C = 10."""
        retriever = None  # set by `bench`

        def scores(self, judged, positions=None):
            from labeler.judging.features import doc_scores, question_features

            rel = relevant(self, judged)
            if not rel:
                return super().scores(judged, positions)
            f, r = self.features, self.retriever
            weights = np.asarray(f.text.matrix[rel].sum(axis=0)).ravel()
            names = f.text.vectorizer.get_feature_names_out()
            terms = " ".join(names[i] for i in np.argsort(-weights)[:10])
            bm25 = doc_scores(r.bm25.scores(f"{f.question} {terms}"), r.chunk_doc, len(f.doc_ids))
            expanded = question_features(f.text, f.question, {**f.scores, "bm25-expanded": bm25}, vectors=f.vectors,
                                         query_vector=f.query_vector)
            model = ActiveOrder(expanded, seed=self.seed, regularization=self.regularization,
                                pseudo_negatives=self.pseudo_negatives, dense_weight=self.dense_weight)
            return model.fitted_scores(judged, positions)

    return {
        "C10+bm25-expanded": make(Expanded, regularization=10.0),
        "C1": make(regularization=1.0), "C3": make(regularization=3.0), "C10": make(regularization=10.0),
        "C30": make(regularization=30.0),
        "fuse2": make(Fused, regularization=1.0), "C10+fuse2": make(Fused, regularization=10.0),
        "C10+fuse4": type("Fused4", (make(Fused, regularization=10.0),), {"weight": 4.0}),
        "rocchio": make(Rocchio, regularization=1.0),
        "rocchio+model": type("RocchioModel", (make(Rocchio, regularization=1.0),), {"with_model": True}),
        "dense2": make(regularization=1.0, dense_weight=2.0), "C10+dense0.5": make(regularization=10.0, dense_weight=0.5),
        "C10+dense0": make(regularization=10.0, dense_weight=0.0),
        "C10+negatives50": make(regularization=10.0, pseudo_negatives=50),
        "C10+wait2": make(Waits, regularization=10.0), "from-the-start": make(FromTheStart, regularization=1.0),
    }


def bench(name: str, budget: int, only: list[str] | None) -> None:
    from labeler.judging.collection import open_collection
    from labeler.judging.simulate import run_active, simulate
    from labeler.judging.summary import summarize

    col = open_collection(DATASETS / name, keep_scale=name == "cranfield")
    qrels, pools, qids = col.qrels, col.pools, col.query_ids
    each = {q: sum(qrels[q].get(d, 0) >= 1 for d in pools[q]) for q in qids}

    def summary(judged):
        return summarize(judged, qrels, pool_sizes={q: len(pools[q]) for q in qids},
                         pool_relevant=sum(each.values()))["pool"]

    base = summary({q: pools[q] for q in qids})
    b90, bfound = base["judgments_to_reach_90%_of_pool_relevant"], base["relevant_found_within_pool_budget"]
    print(f"== {name}: {len(qids)} questions; pool: {base['judgments']} judgments, {base['relevant']} relevant, "
          f"{b90} judgments to 90% of them", flush=True)
    for label, cls in variants().items():
        if only and label not in only:
            continue
        cls.retriever = col.retriever
        t = time.perf_counter()
        runs = simulate(qids, lambda q, oracle: run_active(cls(col.features(q), seed=q), oracle, budget, seed=q), qrels)
        s = summary({q: r.judged for q, r in runs.items()})
        j90, found = s["judgments_to_reach_90%_of_pool_relevant"], s["relevant_found_within_pool_budget"]
        at = {b: sum(sum(qrels[q].get(d, 0) >= 1 for d in r.judged[:b]) for q, r in runs.items()) for b in (5, 10, 20)}
        print(f"{label}: to 90% {j90} ({j90 / b90:.2f}x), relevant at the pool's budget {found} ({found / bfound:.2f}x), "
              f"relevant in each question's first 5/10/20: {at[5]}/{at[10]}/{at[20]} "
              f"[{time.perf_counter() - t:.0f}s]", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*", default=["cisi", "cranfield"])
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    os.environ.setdefault("LABELER_HOME", str(BENCH_HOME))
    for n in args.names:
        bench(n, args.budget, args.only.split(",") if args.only else None)
