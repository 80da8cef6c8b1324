"""Latency of one question -> pooled candidates, against a bare encode + FAISS search.

On SciFact (5,183 documents; the first run embeds it, about 6 minutes, then the cache under
BENCH_HOME is reused). Both are measured in this run over the same questions; the baseline is
the least any dense lookup can cost: `model.encode([q])` + `IndexFlatIP.search`.
Target: pooled candidates <= 1.5x the baseline at p50 and p95.
Run: .venv/bin/python bench/bench_candidates.py [n_questions]
"""
from __future__ import annotations

import os
import sys
import time

from _common import BENCH_HOME, percentiles, scifact_docs, scifact_queries


def main(n_questions: int = 200) -> None:
    os.environ["LABELER_HOME"] = str(BENCH_HOME)
    from labeler.candidates import pool_candidates
    from labeler.config import RunConfig
    from labeler.retrieval import open_retriever
    from labeler.retrieval.embedding import load_model

    corpus = scifact_docs()
    t0 = time.perf_counter()
    retriever = open_retriever(corpus, RunConfig(), progress=lambda d, n, s: print(f"\r{s} {d}/{n}", end="", file=sys.stderr))
    print(f"opened SciFact in {time.perf_counter() - t0:.1f}s (embedded: {retriever.stats.embedded})")
    model = load_model(RunConfig().model)
    questions = list(scifact_queries().values())[:n_questions]
    retriever.prepare("hybrid")  # BM25 built/loaded once too, as the app does at start
    for q in questions[:5]:  # warm both paths
        pool_candidates(retriever, q)
        retriever.index.search(model.encode([q], normalize_embeddings=True), 10)

    bare, ours = [], []
    for q in questions:  # interleaved so machine noise hits both alike
        t = time.perf_counter()
        v = model.encode([q], normalize_embeddings=True, convert_to_numpy=True)
        retriever.index.search(v, 10)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        pool_candidates(retriever, q, k_dense=10, k_bm25=10)
        ours.append(time.perf_counter() - t)
    (b50, b95), (o50, o95) = percentiles(bare), percentiles(ours)
    print(f"questions: {len(questions)}")
    print(f"bare encode + FAISS search: p50 {b50 * 1e3:7.2f} ms  p95 {b95 * 1e3:7.2f} ms")
    print(f"pooled candidates:          p50 {o50 * 1e3:7.2f} ms  p95 {o95 * 1e3:7.2f} ms")
    print(f"ratio p50 {o50 / b50:.2f}x  p95 {o95 / b95:.2f}x   target <= 1.5x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
