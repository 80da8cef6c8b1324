"""Which claim rule for the gain curve? Each rule's "<= 1 left (95%)" claims, judged against the qrels, on one
replay per collection: the active order to `budget` judgments, never stopping, with the knee's sample of 20 and a
check of the curve at the knee and every `patience` judgments after (the simulator's schedule). A rule claims at
the first check it accepts; the claim is right when at most one relevant document was left then.

Rules: one check (`curve_remaining(...).done`), the same at 99%, one check with at least 3 relevant found, and
2, 3 (the rule kept) or 4 checks in a row. Also how many claims' judged ranks the power law fitted better than
the exponential (a goodness-of-fit test could only refuse those).
Run: BENCH_DATASETS=... nice -n 19 .venv/bin/python bench/bench_stopping_rules.py [cisi cranfield scifact]
(BM25-only features, as bench_stopping.py; BENCH_DENSE=1: with the embeddings, built once under LABELER_HOME)
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from _common import BENCH_HOME, DATASETS

DENSE = os.environ.get("BENCH_DENSE") == "1"
BUDGET = 100


def replay(col, qid: str, rule) -> tuple[list[bool], list[dict]]:
    """The active order's own grades (no sample) and each check: grades given, ranked, unjudged, truth left."""
    from labeler.judging.active import ActiveOrder
    from labeler.judging.gain_curve import is_check
    from labeler.judging.simulate import Oracle
    from labeler.judging.stopping import draw_sample

    qrels = col.qrels.get(qid, {})
    relevant = {d for d, g in qrels.items() if g >= 1}
    model, oracle = ActiveOrder(col.features(qid), seed=qid), Oracle(qrels)
    flags, ranked, checks, last, found_in_sample = [], [], [], None, 0
    while len(flags) < BUDGET:
        if is_check(flags, last, rule):
            if last is None:  # the knee: its random sample, judged once
                unjudged = [d for d in model.features.doc_ids if d not in oracle.asked]
                sample = draw_sample(unjudged, min(rule.sample_size, BUDGET - len(flags)), seed=f"{qid}\x1fsample")
                grades = [oracle.grade(d) >= 1 for d in sample]
                flags += grades
                found_in_sample = sum(grades)
            last = len(flags)
            checks.append({"ranked": len(ranked), "unjudged": len(model.features.doc_ids) - len(oracle.asked),
                           "left": len(relevant - set(oracle.asked)), "sample_relevant": found_in_sample})
            continue
        doc = model.next(oracle.asked)
        if doc is None:
            break
        flags.append(oracle.grade(doc) >= 1)
        ranked.append(flags[-1])
    return ranked, checks


def power_fits_better(ranks: list[int], n: int) -> bool:
    """Whether the power law's maximum likelihood beats the exponential's on these ranks (both two parameters)."""
    from labeler.judging.gain_curve import _grid, _log_rate

    def best(shape: str) -> float:
        x, r, k = np.asarray(ranks, float), np.arange(1, n + 1, dtype=float), len(ranks)
        return max(k * np.log(k / np.exp(_log_rate(shape, b, r)).sum()) - k + _log_rate(shape, b, x).sum()
                   for b in _grid(shape))
    return bool(ranks) and best("power") > best("exponential")


def bench(name: str) -> None:
    from labeler.config import RunConfig
    from labeler.judging.collection import open_collection
    from labeler.judging.gain_curve import curve_remaining
    from labeler.judging.stopping import StoppingRule

    t = time.perf_counter()
    rule = StoppingRule()
    col = open_collection(DATASETS / name, keep_scale=name == "cranfield",
                          config=RunConfig(mode="hybrid" if DENSE else "bm25"))
    rules = {"one check": lambda e, s, r: e[-1].done, "one check, 99%": lambda e, s, r: s[-1].done,
             "one check, >= 3 relevant": lambda e, s, r: e[-1].done and r >= 3}
    for n in (2, 3, 4):
        rules[f"{n} checks in a row"] = lambda e, s, r, n=n: len(e) >= n and all(x.done for x in e[-n:])
    tally = {k: [0, 0, []] for k in rules}
    power = 0
    for qid in col.query_ids:
        ranked, checks = replay(col, qid, rule)
        seen, seen99, claimed = [], [], set()
        for c in checks:
            flags = ranked[:c["ranked"]]
            seen.append(curve_remaining(flags, c["unjudged"], sample_relevant=c["sample_relevant"]))
            seen99.append(curve_remaining(flags, c["unjudged"], sample_relevant=c["sample_relevant"], confidence=0.99))
            for k, accept in rules.items():
                if k not in claimed and accept(seen, seen99, seen[-1].relevant):
                    claimed.add(k)
                    tally[k][0] += 1
                    tally[k][1] += c["left"] <= 1
                    if c["left"] > 1:
                        tally[k][2].append(c["left"])
                    if k == "one check":
                        power += power_fits_better([i + 1 for i, f in enumerate(flags) if f], len(flags))
    print(f"== {name} ({'hybrid' if DENSE else 'bm25'}): {len(col.query_ids)} questions, up to {BUDGET} judgments, "
          f"{time.perf_counter() - t:.0f}s", flush=True)
    for k, (claims, right, wrong) in tally.items():
        share = f"{right / claims:.0%}" if claims else "no claim"
        print(f"{k}: {claims} claims, {right} right ({share}); the wrong ones left {sorted(wrong)}", flush=True)
    print(f"one check's claims whose ranks the power law fitted better than the exponential: {power}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("LABELER_HOME", str(BENCH_HOME))
    for name in sys.argv[1:] or ["cisi", "cranfield", "scifact"]:
        bench(name)
