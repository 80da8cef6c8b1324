"""AppTest: the Evaluate page — nothing to score yet, bad input, a run with metrics and CIs, per type,
abstention, worst questions, history, and comparing two runs."""
from __future__ import annotations

import re

from browser_support import app_home, grade_card, open_app, sample_embeddings, texts  # noqa: F401 - fixtures

from labeler_app.access import local_actor
from conftest import import_demo
from labeler.corpus import load_corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_storage.store import open_store

PAGE = "../pages/evaluate.py"
COMPARE = "../pages/compare.py"
RUN = "FormSubmitter:run-config-Run evaluation"


def load_demo():
    import_demo(open_store())


def assert_refused(at, *words: str) -> None:
    """Run: the page says why it cannot (an error holding every one of `words`), does not crash, saves no run."""
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    assert any(all(w in e for w in words) for e in texts(at.error)), texts(at.error)
    assert open_store().runs.list() == []


def test_evaluate_empty_database_says_there_is_nothing_to_score(app_home):
    at = open_app(PAGE)
    assert any("No runs yet" in m for m in texts(at.info))
    assert_refused(at, "no labelled question to score yet", "Hint:")


def test_evaluate_bad_threshold_and_bad_config_are_errors_not_crashes(app_home):
    load_demo()
    at = open_app(PAGE)
    at.text_input(key="cfg_threshold").input("high")
    assert_refused(at, "not a number")
    at.text_input(key="cfg_threshold").input("")
    at.selectbox(key="cfg_chunking").set_value("window")
    at.number_input(key="cfg_chunk_overlap").set_value(500)  # overlap >= chunk size 200
    assert_refused(at, "overlap")


def test_evaluate_run_shows_metrics_per_type_abstention_worst_and_saves_it(app_home):
    load_demo()
    at = open_app(PAGE)
    at.text_input(key="cfg_threshold").input("0.3")
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    assert any("Run #1 saved" in m for m in texts(at.success))
    metrics = at.dataframe[0].value
    assert list(metrics["metric"]) == ["recall@10", "precision@10", "mrr@10", "ndcg@10", "hit@10", "ndcg_condensed@10"]
    assert ((metrics["ci95_low"] <= metrics["mean"]) & (metrics["mean"] <= metrics["ci95_high"])).all()
    per_type = at.dataframe[1].value
    assert set(per_type["query_type"]) >= {"numeric-fact", "policy-lookup"}
    assert any("Unanswerable correctly left empty" in m.label for m in at.metric)
    assert not any("RRF" in c for c in texts(at.caption))  # dense scores: no fusion note
    assert any("first relevant" in e.label for e in at.expander)
    # The demo's grades come from a file: no stopping estimate says any question is likely complete.
    assert any(re.match(r"\d+ of \d+ scored questions rest on incomplete judging", w) for w in texts(at.warning))
    runs = open_store().runs.list()
    assert len(runs) == 1 and runs[0].summary["abstention"]["threshold"] == 0.3
    assert open_store().runs.load(runs[0].run_id).config["abstain_threshold"] == 0.3


def test_evaluate_second_run_is_compared_per_metric_and_per_question(app_home):
    load_demo()
    at = open_app(PAGE)
    at.button(key=RUN).click().run()
    assert any("two saved runs" in m for m in texts(open_app(COMPARE).info))
    at.selectbox(key="cfg_mode").set_value("bm25")
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    history = next(df.value for df in at.dataframe if "config" in df.value.columns and "run" in df.value.columns)
    assert list(history["run"]) == [2, 1]
    at = open_app(COMPARE)
    assert not at.exception, at.exception
    captions = texts(at.caption)
    assert any("mode: 'dense' → 'bm25'" in c for c in captions)
    frames = {tuple(df.value.columns): df.value for df in at.dataframe}
    compare = next(v for k, v in frames.items() if "p_value" in k)
    assert list(compare["metric"]) == ["recall@10", "precision@10", "mrr@10", "ndcg@10"]
    assert ((compare["p_value"] > 0) & (compare["p_value"] <= 1)).all()
    changed = compare["B better"].sum() + compare["B worse"].sum()
    assert changed > 0


def test_evaluate_cutoff_changes_the_table(app_home):
    load_demo()
    at = open_app(PAGE)
    at.button(key=RUN).click().run()
    at.selectbox(key="eval_cutoff").set_value(5).run()
    assert list(at.dataframe[0].value["metric"])[0] == "recall@5"


def test_evaluate_new_threshold_or_depth_reuses_the_open_retriever(app_home, monkeypatch):
    import labeler.retrieval as retrieval

    opened = []
    real_open = retrieval.open_retriever

    def counting_open(*args, **kwargs):
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(retrieval, "open_retriever", counting_open)
    load_demo()
    at = open_app(PAGE)
    at.text_input(key="cfg_threshold").input("0.3")
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    assert len(opened) == 1  # the Label page's default build is the Evaluate default: one retriever
    built = dict(opened[0].stats.steps)
    assert built["chunk"] == 1 and built["load_vectors"] == 1
    at.text_input(key="cfg_threshold").input("0.5")
    at.number_input(key="cfg_k").set_value(20)
    at.number_input(key="cfg_rrf_k").set_value(30)
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    assert len(opened) == 1 and dict(opened[0].stats.steps) == built  # nothing re-chunked or reloaded
    runs = open_store().runs.list()
    assert [r.summary["abstention"]["threshold"] for r in runs] == [0.5, 0.3]
    assert runs[0].config_hash != runs[1].config_hash


def test_every_score_table_shows_four_decimals_as_trec_eval_prints():
    import pandas as pd

    from labeler_pages._common import score_columns

    frame = pd.DataFrame([{"metric": "ndcg@10", "mean": 0.85987, "questions": 3}])
    config = score_columns(frame)
    assert list(config) == ["mean"] and config["mean"]["type_config"]["format"] == "%.4f"


def run_detail(store, run_id):
    """query_id -> the saved per-question row, for the questions whose top 10 has a hole."""
    from labeler_app.holes import find_holes

    return find_holes(store, run_id).by_question


def test_judge_the_holes_of_a_run_from_the_label_page(app_home):
    load_demo()
    at = open_app(PAGE, annotator="asha")
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    store = open_store()
    [run] = store.runs.list()
    judged_before = run.summary["metrics"]["judged@10"]
    [link] = [el for el in at.main if getattr(el, "proto", None) is not None and "Judge the holes: " in
              getattr(el.proto, "label", "")]
    assert f"of run #{run.run_id}" in link.proto.label and link.proto.query_string.startswith(f"holes={run.run_id}&q=")
    from streamlit.testing.v1 import AppTest

    from browser_support import APP

    label = AppTest.from_file(str(APP), default_timeout=120)  # where the link leads: ?holes=<run>&q=<question>
    label.session_state["annotator"] = "asha"
    label.query_params["holes"] = str(run.run_id)
    first = next(q for q, row in run_detail(store, run.run_id).items())
    label.query_params["q"] = first
    label.run()
    assert not label.exception, label.exception
    assert any("Judging the holes:" in m for m in texts(label.info))
    card = next(m.value for m in label.markdown if "**1." in m.value)
    assert f"run {run.run_id} #" in card  # the hole comes first, marked with the run's rank
    holes = int(next(m for m in texts(label.info) if "Judging the holes:" in m).split(" unjudged")[0].split(": ")[1])
    grade_card(label, 0, 0)
    after = int(next(m for m in texts(label.info) if "Judging the holes:" in m).split(" unjudged")[0].split(": ")[1])
    assert after == holes - 1
    again = open_app(PAGE, annotator="asha")
    again.button(key=RUN).click().run()
    assert store.runs.list()[0].summary["metrics"]["judged@10"] > judged_before


def test_worst_questions_show_each_document_title_beside_its_id():
    from labeler.corpus import Corpus, Document
    from labeler.evaluation import evaluate
    from labeler_app.evaluate import worst_questions

    report = evaluate({"q1": {"d1": 2}}, {"q1": {"d2": 0.9, "d1": 0.5}}, questions={"q1": "Who?"})
    corpus = Corpus((Document("d1", "Doc one", "One text."),))
    [row] = worst_questions(report, "ndcg@10", 10, corpus)
    assert [(d["doc_id"], d["title"]) for d in row["retrieved"]] == [("d2", "(not in the corpus)"), ("d1", "Doc one")]
    assert list(row["retrieved"][0]) == ["rank", "doc_id", "title", "score", "grade"]


def test_evaluate_worst_questions_titles_come_from_the_corpus_the_run_searched(app_home, tmp_path, monkeypatch):
    from labeler_app.workspace import use_corpus

    load_demo()
    at = open_app(PAGE)
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    sample = load_corpus(SAMPLE_CORPUS)
    worst = at.expander[-1].dataframe[0].value
    assert list(worst.columns)[:3] == ["rank", "doc_id", "title"]
    assert list(worst["title"]) == [sample.get(d).title for d in worst["doc_id"]]
    root = tmp_path / "corpora"  # another corpus opened since: the run's documents keep their titles
    root.mkdir()
    (root / "tiny.csv").write_text("id,title,text\na,Alpha,alpha text here\n", encoding="utf-8")
    use_corpus(open_store(), local_actor("tester"), root / "tiny.csv", load_corpus(root / "tiny.csv"))
    again = open_app(PAGE)
    assert not again.exception, again.exception
    assert list(again.expander[-1].dataframe[0].value["title"]) == list(worst["title"])


def _scripts(at) -> list[str]:
    return [h.proto.body for h in at.get("html") if "scrollIntoView" in h.proto.body]


def test_evaluate_results_say_once_what_they_rest_on_and_come_into_view_after_a_run(app_home):
    load_demo()
    at = open_app(PAGE)
    at.selectbox(key="cfg_mode").set_value("hybrid")
    at.text_input(key="cfg_threshold").input("0.03")
    at.button(key=RUN).click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value.columns) == ["metric", "mean", "ci95_low", "ci95_high"]  # judged@10 not repeated
    report = open_store().runs.list()[0].summary
    captions = texts(at.caption)
    judged = [c for c in captions if c.startswith("judged@10 = ")]
    assert len(judged) == 1 and f"{report['metrics']['judged@10']:.4f}" in judged[0]
    assert any("95% percentile bootstrap CI" in c and "2,000 resamples" in c and "seed 0" in c for c in captions)
    assert any("fused (RRF) ranks" in c and "not similarities" in c for c in captions)
    scripts = _scripts(at)
    assert len(scripts) == 1 and "st-key-eval-results" in scripts[0]  # the constant selector, no data
    at.selectbox(key="eval_cutoff").set_value(5).run()
    assert not at.exception and _scripts(at) == []  # once after a run, not on every rerun
    assert any(c.startswith("judged@5 = ") for c in texts(at.caption))

