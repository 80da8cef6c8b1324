"""Benchmark: rerun time of the Label page after a grade click with a team-sized golden set (200 SciFact
questions, 5 annotators) vs the sample corpus with its 62-question demo golden set, in one process,
printed as a ratio (target <= 1.5x).

Each case gets a fresh database (`<home>/team-<corpus>/`) seeded through the store API before the app
starts: sample = sample_corpus/golden.jsonl imported; SciFact = the first 200 queries with test qrels,
each graded by 5 annotators on its qrels docs (mostly 1-3) and on the candidates the Label page pools for it
(what they would have seen; mostly 0), so the page shows as many cards as a real team's would. The app then
runs under AppTest as a sixth annotator, on the middle question of the picker; timing is `click().run()`
of grade buttons (the whole rerun, database write included, browser excluded). The embedding cache
`<home>/cache` is shared with bench_label_page.py: SciFact is embedded once (~6-10 min on 2 cores).

    .venv/bin/python bench/bench_label_page_team.py [--home DIR (default $BENCH_HOME)]
        [--clicks 20] [--entry edge/streamlit_app.py] [--repo DIR (default: the repo this file is in)]

Before/after the app-layer refactor (issue 8), from the old checkout: `--repo OLD --entry app.py`.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from _common import BENCH_HOME, DATASETS, fresh_app_home, grade_control, prepare_scifact_home

HERE = Path(__file__).resolve().parents[1]
SCIFACT = DATASETS / "scifact"
TEAM = ("asha", "marco", "tomasz", "lena", "kofi")
N_QUESTIONS, SEED = 200, 20260101


def scifact_questions(n: int) -> list[tuple[str, str, list[str]]]:
    """(query id, text, qrels doc ids) of the first `n` queries.jsonl questions that have test qrels."""
    qrels: dict[str, list[str]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc_id, _ = line.split("\t")
        qrels.setdefault(qid, []).append(doc_id)
    out = []
    for line in (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["_id"] in qrels:
            out.append((obj["_id"], obj["text"], qrels[obj["_id"]]))
    return out[:n]


def seed_database(db: Path, corpus_path: Path, team: bool) -> tuple[list[str], int]:
    """Fill a fresh database through the store API; returns (question ids in order, judgments written)."""
    from labeler.corpus import load_corpus
    from labeler.golden import GoldenQuery, GoldenSet, read_golden
    from labeler_storage.store import open_store

    corp = load_corpus(corpus_path)
    where = dict(corpus_path=str(corpus_path.resolve()), corpus_fingerprint=corp.fingerprint)
    store = open_store(db, synchronous="NORMAL")  # seeding only: no fsync per commit; the app itself uses FULL
    try:
        if not team:
            golden = read_golden(corpus_path / "golden.jsonl", doc_ids=corp.doc_ids())
            store.golden.import_set(golden, **where)
            return [q.query_id for q in golden.queries], sum(len(q.relevance) for q in golden.queries)
        rows = scifact_questions(N_QUESTIONS)
        store.golden.import_set(GoldenSet(tuple(GoldenQuery(qid, text) for qid, text, _ in rows)), **where)
        from labeler.candidates import pool_candidates
        from labeler.config import RunConfig
        from labeler.retrieval import open_retriever

        retriever = open_retriever(corp, RunConfig())  # from the shared cache: the Label page's default pool
        rng, n = random.Random(SEED), 0
        for qid, text, relevant in rows:
            others = [c.doc_id for c in pool_candidates(retriever, text) if c.doc_id not in relevant]
            docs = [(d, (1, 3, 3, 2)) for d in relevant] + [(d, (6, 2, 1, 1)) for d in others]  # grade 0-3 weights
            for who, (doc_id, weights) in ((w, d) for w in TEAM for d in docs):
                # no bulk write per annotator in the store API: one transaction per grade
                store.judgments.set(qid, doc_id, rng.choices(range(4), weights)[0], annotator=who)
            n += len(TEAM) * len(docs)
        return [qid for qid, _, _ in rows], n
    finally:
        store.close()


# ---- everything AppTest- and widget-specific (adapt here when the app's keys or entry change)


def open_label_page(entry: Path, query_id: str) -> tuple[object, int, int]:
    """Start the app as annotator "bench" on `query_id`; returns (AppTest, questions in picker, candidates)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(entry), default_timeout=1800)
    at.run()
    at.sidebar.text_input(key="annotator").input("bench").run()
    at.selectbox(key="q").select(query_id).run()  # the question picker (bound to ?q=)
    assert not at.exception and at.selectbox(key="q").value == query_id, (at.exception, at.selectbox(key="q").value)
    n_candidates = sum(1 for g in at.segmented_control if g.key and g.key.startswith("cand-"))
    return at, len(at.selectbox(key="q").options), n_candidates


def grade_click(at, candidate: int, grade: int) -> None:
    control = grade_control(at, f"cand-{candidate}")
    control.set_value(None if control.value == grade else grade).run()  # the selected grade again clears it
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])


def time_case(home: Path, corpus: Path, team: bool, entry: Path, clicks: int) -> dict[str, float]:
    import streamlit as st

    case_home = fresh_app_home(home, f"team-{corpus.name}", corpus)
    st.cache_resource.clear()

    t0 = time.perf_counter()
    ids, n_judgments = seed_database(case_home / "labeler.db", corpus, team)
    t1 = time.perf_counter()
    at, n_picker, n_candidates = open_label_page(entry, ids[len(ids) // 2])
    seeded, opened = t1 - t0, time.perf_counter() - t1
    assert n_picker == len(ids), (n_picker, len(ids))

    grade_click(at, 0, 1)  # warm: first click after opening
    times = []
    for i in range(clicks):
        t = time.perf_counter()
        grade_click(at, i % n_candidates, (i // n_candidates + i) % 4)
        times.append(time.perf_counter() - t)
    return {"median": statistics.median(times), "p90": sorted(times)[int(0.9 * (len(times) - 1))],
            "seed": seeded, "open": opened, "questions": n_picker, "judgments": n_judgments,
            "candidates": n_candidates}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=BENCH_HOME)
    parser.add_argument("--clicks", type=int, default=20)
    parser.add_argument("--entry", default="edge/streamlit_app.py", help="the Streamlit entry script, relative to --repo")
    parser.add_argument("--repo", type=Path, default=HERE)
    args = parser.parse_args()
    if not prepare_scifact_home(args.home):
        return 2
    repo = args.repo.resolve()
    sys.path.insert(0, str(repo))

    cases = [("62-question sample", repo / "sample_corpus", False),
             ("200 questions x 5 annotators over SciFact", SCIFACT, True)]
    results = {}
    for name, corpus, team in cases:
        print(f"{name}: seeding, then opening (SciFact embeds once, ~6-10 min, when {args.home / 'cache'} "
              "lacks it)…", flush=True)
        results[name] = r = time_case(args.home, corpus, team, repo / args.entry, args.clicks)
        print(f"  {r['questions']} questions, {r['judgments']:,} judgments seeded in {r['seed']:.1f}s · opened in "
              f"{r['open']:.1f}s · {r['candidates']} candidates · rerun after a grade click: median "
              f"{r['median'] * 1000:.0f} ms, p90 {r['p90'] * 1000:.0f} ms ({args.clicks} clicks)", flush=True)
    base, big = (results[name]["median"] for name, _, _ in cases)
    ratio = big / base
    print(f"Label page rerun after a grade click, 200 questions x 5 annotators over SciFact / 62-question sample "
          f"= {big * 1000:.0f} ms / {base * 1000:.0f} ms = {ratio:.2f} x (target <= 1.5x: "
          f"{'met' if ratio <= 1.5 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
