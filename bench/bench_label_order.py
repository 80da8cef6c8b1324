"""Benchmark: what the judging order adds to the Label page's rerun after a grade.

1. The page (AppTest, sample corpus): the rerun after a grade click with "Most likely relevant first"
   against "Retriever order", in one process, as a difference and a ratio. AppTest reruns the whole
   script where the browser reruns only the judging fragment: the difference is the order's own cost.
2. The app layer alone (labeler_app.judging_order: the model's re-fit and re-order of the cards after the
   one just graded, and the stopping estimate), on the sample corpus and on SciFact, BM25 and tf-idf
   features (SciFact's embedding takes over an hour on this machine): per grade, CPU and wall time; and the
   stopping note once the gain curve has three checks to read, first and on a rerun.

    nice -n 19 .venv/bin/python bench/bench_label_order.py [--clicks 12] [--skip-page] [--skip-scifact]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _common import DATASETS, REPO, fresh_app_home, grade_control

QUESTION = "How many vacation days do new employees get?"


def page_reruns(home: Path, mode: str, clicks: int) -> list[float]:
    """Rerun times (s) of `clicks` grade clicks on a new question, the cards in `mode` order."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from labeler_pages._cards import new_question_keys

    fresh_app_home(home, f"page-{mode}", REPO / "sample_corpus")
    st.cache_resource.clear()
    at = AppTest.from_file(str(REPO / "edge" / "streamlit_app.py"), default_timeout=1800)
    at.run()
    at.sidebar.text_input(key="annotator").input("bench").run()
    keys = new_question_keys(at.session_state)
    at.text_input(key=keys.text).input(QUESTION)
    at.button(key=keys.submit).click().run()
    at.selectbox(key="judging_order").set_value(mode).run()
    grade_control(at, "cand-0").set_value(2).run()  # warm: the first fit, features cached
    times = []
    for i in range(1, clicks + 1):  # grade the next card each time, as an annotator does
        t = time.perf_counter()
        grade_control(at, f"cand-{i}").set_value(i % 2 * 2).run()
        times.append(time.perf_counter() - t)
        assert not at.exception, at.exception
    return times


def layer_costs(corpus_path: Path, question: str, relevant: set[str], grades: int, cache: Path) -> dict:
    """CPU and wall time (s) of the order + stopping estimate after each of `grades` grades."""
    from labeler.candidates import pool_candidates
    from labeler.config import RunConfig
    from labeler.corpus import load_corpus
    from labeler.judging import CorpusText, question_features
    from labeler.judging.features import retriever_scores
    from labeler.retrieval import Retriever
    from labeler_app import judging_order as jo
    from labeler_storage import open_store

    corpus = load_corpus(corpus_path)
    retriever = Retriever(corpus, RunConfig().build(), cache_root=cache).prepare("bm25")
    t0 = time.perf_counter()
    text = CorpusText.of(corpus)
    t_text = time.perf_counter() - t0
    t0 = time.perf_counter()
    features = question_features(text, question, retriever_scores(retriever, [question], dense=False)[0])
    features.matrix  # noqa: B018 - built on first use, once per question
    t_features = time.perf_counter() - t0
    pool = [c.doc_id for c in pool_candidates(retriever, question, k_dense=0, k_bm25=20)]
    store = open_store(cache / f"{corpus_path.name}.db")
    qid = store.questions.add(question, author="bench").query_id
    layout, cpu, wall, stop_cpu = None, [], [], []
    for n in range(grades):
        status = store.questions.status(qid)
        mine = jo.my_grades(status, "bench")
        c0, w0 = time.process_time(), time.perf_counter()
        layout = jo.arrange(layout, pool, mine, jo.model_order(features, qid, mine), focus=n)
        c1 = time.process_time()
        jo.stopping(status, "bench", features.doc_ids)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        stop_cpu.append(time.process_time() - c1)
        doc = next(d for d in layout.doc_ids if d not in mine)
        # The first card counts as relevant (as bench_judging_cost does), so every later grade re-fits the model:
        # with no relevant grade the order is the retrievers' and costs nothing (the bench measured 0 ms).
        store.judgments.set(qid, doc, 2 if doc in relevant or n == 0 else 0, annotator="bench")
    return {"docs": len(corpus), "text": t_text, "features": t_features, "cpu": cpu[1:], "wall": wall[1:], "stop": stop_cpu[1:]}


def curve_costs(n_docs: int, questions: int = 20) -> dict:
    """CPU of the Label page's stopping note once the gain curve has three checks to read (a question past its knee:
    3 relevant, 10 not, the sample of 20, then 20 more not relevant), over a corpus of `n_docs`: the first time
    (the curve fitted at each of its last three checks) and a rerun with the same grades (remembered)."""
    from labeler_app import judging_order as jo

    rule = jo.RULE
    cold, warm = [], []
    for q in range(questions):
        flags = (True,) * 3 + (False,) * (10 + q)  # each question its own grades: nothing remembered across them
        marks = (False,) * len(flags) + (True,) * rule.sample_size + (False,) * 20
        flags += (False,) * (rule.sample_size + 20)
        est = jo.estimate_remaining(n_docs - 13 - q, [0] * rule.sample_size)
        for out in (cold, warm):
            stop = jo.Stopping(len(flags), len(flags) - 3, 13 + q, ("x",) * rule.sample_size, rule.sample_size, est,
                               0, rule, flags, marks, 13 + q + rule.sample_size, n_docs)
            c0 = time.process_time()
            _ = stop.likely_complete, stop.note
            out.append(time.process_time() - c0)
    return {"cold": cold, "warm": warm}


def ms(values: list[float]) -> str:
    s = sorted(values)
    return f"median {statistics.median(s) * 1000:.0f} ms, p90 {s[int(0.9 * (len(s) - 1))] * 1000:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=12)
    parser.add_argument("--skip-page", action="store_true")
    parser.add_argument("--skip-scifact", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-label-order-") as tmp:
        home = Path(tmp)
        if not args.skip_page:
            from labeler.config import RunConfig
            from labeler.retrieval import open_retriever

            (home / "cache").mkdir()
            open_retriever(REPO / "sample_corpus", RunConfig(), cache_root=home / "cache").bm25  # noqa: B018 - both modes load it
            times = {mode: page_reruns(home, mode, args.clicks) for mode in ("retriever", "active")}
            base, active = (statistics.median(times[m]) for m in ("retriever", "active"))
            print(f"Label page rerun after a grade (AppTest, sample corpus, {args.clicks} clicks): retriever order "
                  f"{ms(times['retriever'])}; most likely relevant first {ms(times['active'])}; "
                  f"the order adds {(active - base) * 1000:.0f} ms ({active / base:.2f}x)", flush=True)
        cases = [("sample", REPO / "sample_corpus", QUESTION, set())]
        if not args.skip_scifact and (DATASETS / "scifact").is_dir():
            from labeler.golden.beir import read_beir_golden

            golden = read_beir_golden(DATASETS / "scifact")
            q = golden.queries[0]
            cases.append(("SciFact", DATASETS / "scifact", q.question, set(golden.qrels().get(q.query_id, {}))))
        for name, path, question, relevant in cases:
            (home / name).mkdir()
            r = layer_costs(path, question, relevant, args.clicks + 1, home / name)
            print(f"{name} ({r['docs']:,} docs): tf-idf once per corpus {r['text']:.2f} s, features once per question "
                  f"{r['features'] * 1000:.0f} ms; per grade (re-order 20 cards + stopping estimate): CPU {ms(r['cpu'])} "
                  f"(the stopping estimate: {ms(r['stop'])}), wall {ms(r['wall'])}", flush=True)
            c = curve_costs(r["docs"])
            print(f"{name}: the stopping note with the gain curve's three checks, CPU: first {ms(c['cold'])}, "
                  f"a rerun with the same grades {ms(c['warm'])}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
