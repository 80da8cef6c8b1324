"""How good can a judging order over these retrievers be? Ceilings, and the bandit orderings of Losada et al.

The order targets of the README's "Judging order" ask for most of every question's first judgments to be
relevant. This bench measures, in one run against today's pool order, what orders built from the two
retrievers' own rankings (dense and BM25 over the whole corpus) can reach at best, known in hindsight:
- `best retriever`: for every question and budget b, the better of dense's and BM25's first b (a
  learned per-question fusion weight can do no better than choosing the better list at every b);
- `best merge`: for every question and b, the most relevant documents any b-document merge of the two
  rankings' heads holds (dense's first i and BM25's first j): the ceiling of every ordering that takes
  each next document from the head of one of the two runs, the bandits of Losada, Parapar & Barreiro
  (2016, "Feeling lucky? Multi-armed bandits for ordering judgements in pooling-based evaluation") among them;
- `perfect`: every relevant document first.
And, as real strategies graded by the oracle: each retriever alone, reciprocal-rank fusion (the active order before its first
relevant grade), move-to-front (Cormack, Palmer & Clarke 1998: stay on a run while it gives relevant
documents), Thompson sampling and max-mean over the two runs (Beta(1 + relevant, 1 + not relevant) per
run, Losada et al.'s best two), each taking a run's next unjudged document.
Printed per collection, each against the pool: judgments to reach 90% of the pool's relevant (every
question's first b, and each question until it has 90% of its own pool's), relevant found at the pool's budget.
Run: nice -n 19 .venv/bin/python bench/bench_order_ceiling.py cisi cranfield [scifact]
(the embeddings are built once under LABELER_HOME, default BENCH_HOME)
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from _common import BENCH_HOME, DATASETS

DEPTH = 200  # how far down each retriever's ranking an order or ceiling may reach
BUDGET = 40  # judgments per question for the strategies and ceilings (the pool: its own size, ~20)


def rankings(col, qid: str) -> tuple[list[str], list[str]]:
    """The question's dense and BM25 rankings over the whole corpus, first DEPTH documents."""
    f = col.features(qid)
    ids = f.doc_ids
    out = []
    for name in ("dense", "bm25"):
        s = np.asarray(f.scores[name], dtype=np.float64)
        out.append([ids[p] for p in np.lexsort((np.arange(len(s)), -s))[:DEPTH].tolist()])
    return out[0], out[1]


def hits(order, relevant) -> np.ndarray:
    """found[b] = relevant among the first b of `order` (b = 0..len)."""
    return np.concatenate([[0], np.cumsum([d in relevant for d in order])])


def best_merge(a, b, relevant, budget: int) -> np.ndarray:
    """found[n]: the most relevant documents in any union of a[:i] and b[:j] of n distinct documents."""
    best = np.zeros(budget + 1, dtype=np.int64)
    for i in range(min(len(a), budget) + 1):
        seen, found = set(a[:i]), sum(d in relevant for d in a[:i])
        best[len(seen)] = max(best[len(seen)], found)
        for d in b:
            if len(seen) >= budget:
                break
            if d not in seen:
                seen.add(d)
                found += d in relevant
                best[len(seen)] = max(best[len(seen)], found)
    return np.maximum.accumulate(best)


def bandit(a, b, relevant, budget: int, rule: str, seed: int) -> list[str]:
    """Judge `budget` documents, each the next unjudged one of the run `rule` picks; reward: the oracle's grade."""
    runs, heads, wins, losses = (a, b), [0, 0], [0, 0], [0, 0]
    rng, judged, current = np.random.default_rng(seed), [], 0
    seen: set[str] = set()
    while len(judged) < budget:
        live = [r for r in (0, 1) if heads[r] < len(runs[r])]
        if not live:
            break
        if rule == "mtf":
            pick = current if current in live else live[0]
        elif rule == "thompson":
            pick = max(live, key=lambda r: rng.beta(1 + wins[r], 1 + losses[r]))
        else:  # max-mean
            pick = max(live, key=lambda r: ((1 + wins[r]) / (2 + wins[r] + losses[r]), -r))
        doc = runs[pick][heads[pick]]
        heads[pick] += 1
        if doc in seen:
            continue
        seen.add(doc)
        judged.append(doc)
        good = doc in relevant  # the oracle's grade of a document the strategy asked for
        wins[pick] += good
        losses[pick] += not good
        if rule == "mtf" and not good:
            current = 1 - pick
    return judged


def rrf(a, b, budget: int) -> list[str]:
    score: dict[str, float] = {}
    for run in (a, b):
        for rank, d in enumerate(run, start=1):
            score[d] = score.get(d, 0.0) + 1.0 / (60 + rank)
    return sorted(score, key=lambda d: -score[d])[:budget]


def figures(found: dict[str, np.ndarray], pools: dict, targets: dict[str, int]) -> tuple:
    """(judgments to 90% of the pool's relevant at one budget b for all, the same each question on its own,
    relevant at the pool's budget) for per-question found[b] arrays."""
    total, b, last = 0.9 * sum(targets.values()), 0, max(len(f) for f in found.values()) - 1
    j90 = None
    while b < last:
        b += 1
        if sum(f[min(b, len(f) - 1)] for f in found.values()) >= total:
            j90 = sum(min(b, len(f) - 1) for f in found.values())
            break
    each = 0
    for q, t in targets.items():
        need = math.ceil(0.9 * t)
        if need:
            reach = np.flatnonzero(found[q] >= need)
            each += int(reach[0]) if len(reach) else len(found[q]) - 1
    at_pool = sum(int(found[q][min(len(pools[q]), len(found[q]) - 1)]) for q in found)
    return j90, each, at_pool


def bench(name: str) -> None:
    from labeler.judging.collection import open_collection

    col = open_collection(DATASETS / name, keep_scale=name == "cranfield")
    qrels, pools, qids = col.qrels, col.pools, col.query_ids
    budget = BUDGET
    relevant = {q: {d for d, g in qrels[q].items() if g >= 1} for q in qids}
    targets = {q: len(relevant[q].intersection(pools[q])) for q in qids}
    orders = {"pool": {q: pools[q] for q in qids}}
    ceilings: dict[str, dict] = {"best retriever": {}, "best merge": {}, "perfect": {}}
    for q in qids:
        a, b = rankings(col, q)
        orders.setdefault("dense alone", {})[q] = a[:budget]
        orders.setdefault("BM25 alone", {})[q] = b[:budget]
        orders.setdefault("fusion (RRF)", {})[q] = rrf(a, b, budget)
        for rule in ("mtf", "thompson", "max-mean"):
            orders.setdefault(f"bandit {rule}", {})[q] = bandit(a, b, relevant[q], budget, rule, seed=len(q))
        ha, hb = hits(a[:budget], relevant[q]), hits(b[:budget], relevant[q])
        ceilings["best retriever"][q] = np.maximum(ha, hb)
        ceilings["best merge"][q] = best_merge(a, b, relevant[q], budget)
        ceilings["perfect"][q] = np.minimum(np.arange(budget + 1), len(relevant[q]))
    found = {label: {q: hits(o, relevant[q]) for q, o in by_q.items()} for label, by_q in orders.items()}
    found.update(ceilings)
    p90, peach, _ = figures(found["pool"], pools, targets)
    print(f"== {name}: {len(qids)} questions, pool {sum(map(len, pools.values()))} judgments holding "
          f"{sum(targets.values())} relevant; the pool order: {p90} judgments to 90% of them (each question: "
          f"{peach}); the 0.5x target: <= {p90 // 2}", flush=True)
    for label, by_q in found.items():
        j90, each, at_pool = figures(by_q, pools, targets)
        ratio = f"{j90 / p90:.2f}x" if j90 else "never"
        print(f"{label:>18}: to 90% {j90} ({ratio}); each question {each} ({each / peach:.2f}x); "
              f"relevant at the pool's budget {at_pool} ({at_pool / sum(targets.values()):.2f}x)", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("LABELER_HOME", str(BENCH_HOME))
    for n in sys.argv[1:] or ["cisi", "cranfield"]:
        bench(n)
