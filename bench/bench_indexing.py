"""Indexing throughput against a bare SentenceTransformer.encode, and re-open against cold build.

Both baselines are measured in this run, on the same 1,000-document slice of SciFact:
- throughput ratio = bare encode time / our cold build time (target >= 0.95);
- re-open ratio    = re-open of the cached corpus / cold build (target <= 2%).
Run: .venv/bin/python bench/bench_indexing.py [n_docs]
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _common import scifact_docs, timed


def main(n_docs: int = 1000) -> None:
    from labeler.config import RunConfig
    from labeler.retrieval import open_retriever
    from labeler.retrieval.chunking import render
    from labeler.retrieval.embedding import load_model

    corpus = scifact_docs(n_docs)
    config = RunConfig()
    texts = [render(config.template, d.title, d.text) for d in corpus]
    model = load_model(config.model)
    model.encode(texts[:64], normalize_embeddings=True)  # warm-up: first-call overheads out of both timings

    bare, _ = timed(model.encode, texts, normalize_embeddings=True, convert_to_numpy=True)
    with tempfile.TemporaryDirectory() as tmp:
        cold, retriever = timed(open_retriever, corpus, config, cache_root=Path(tmp))
        assert retriever.stats.embedded
        reopen, again = timed(open_retriever, corpus, config, cache_root=Path(tmp))
        assert not again.stats.embedded
    print(f"documents: {len(corpus)}")
    print(f"bare SentenceTransformer.encode: {bare:8.2f} s  ({len(texts) / bare:6.1f} docs/s)")
    print(f"labeler cold build (embed+index): {cold:8.2f} s  ({len(texts) / cold:6.1f} docs/s)")
    print(f"labeler re-open from cache:      {reopen:8.3f} s")
    print(f"throughput ratio (bare / ours):  {bare / cold:.3f}   target >= 0.95")
    print(f"re-open / cold build:            {reopen / cold:.2%}   target <= 2%")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
