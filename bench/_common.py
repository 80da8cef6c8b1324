"""Shared helpers for benchmarks: where the datasets are, a persistent cache, timing."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATASETS = Path(os.environ.get("BENCH_DATASETS", REPO.parent / "shared" / "datasets"))  # a worktree's ../shared is not the house's
sys.path.insert(0, str(REPO))
import labeler  # noqa: E402,F401 - sets offline mode
# Benchmarks reuse one cache across runs (SciFact takes minutes to embed cold);
# set BENCH_HOME to move it.
BENCH_HOME = Path(os.environ.get("BENCH_HOME", REPO / ".labeler" / "bench"))


def grade_control(at, key: str):
    """AppTest: the grade control of card `key` ("cand-0"), as tests/browser_support.py finds it (bench/
    imports no pytest module): its widget key also names the question and document it grades."""
    sys.path.insert(0, str(REPO / "tests"))
    from browser_support import grade_control as find

    return find(at, key)


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


def prepare_scifact_home(home: Path) -> bool:
    """Make `home` and its shared cache folder; False (said on stdout) when SciFact is missing."""
    if not (DATASETS / "scifact").is_dir():
        print(f"SciFact not found at {DATASETS / 'scifact'}; this benchmark needs ../shared/datasets.")
        return False
    (home / "cache").mkdir(parents=True, exist_ok=True)
    return True


def fresh_app_home(home: Path, name: str, corpus: Path) -> Path:
    """`<home>/<name>` as LABELER_HOME with an empty database, the shared embedding cache
    (`<home>/cache`, so SciFact is embedded once ever) and `corpus` as the corpus to open."""
    case_home = home / name
    case_home.mkdir(parents=True, exist_ok=True)
    for leftover in case_home.glob("labeler.db*"):
        leftover.unlink()  # a fresh golden set each time, so every run does the same work
    cache = case_home / "cache"
    if not cache.exists():
        cache.symlink_to(home / "cache", target_is_directory=True)
    os.environ["LABELER_HOME"] = str(case_home)
    os.environ["LABELER_CORPUS"] = str(corpus)
    return case_home
