"""Shared helpers for benchmarks: where the datasets are, a persistent cache, timing."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO.parent / "shared" / "datasets"
sys.path.insert(0, str(REPO))
import labeler  # noqa: E402,F401 - sets offline mode
# Benchmarks reuse one cache across runs (SciFact takes minutes to embed cold);
# set BENCH_HOME to move it.
BENCH_HOME = Path(os.environ.get("BENCH_HOME", REPO / ".labeler" / "bench"))


def scifact_docs(limit: int | None = None):
    from labeler.corpus import Corpus, load_corpus

    corpus = load_corpus(DATASETS / "scifact")
    return corpus if limit is None else Corpus(corpus.documents[:limit], source=f"scifact[:{limit}]")


def scifact_queries() -> dict[str, str]:
    from labeler.jsonlines import read_json_lines

    out = {}
    for _, obj in read_json_lines(DATASETS / "scifact" / "queries.jsonl"):
        out[obj["_id"]] = obj["text"]
    return out


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - t0, value


def percentiles(samples: list[float]) -> tuple[float, float]:
    s = sorted(samples)
    return statistics.median(s), s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]
