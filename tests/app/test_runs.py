"""The one evaluation use case (labeler_app.runs): score, save, and read back exactly what was saved."""
from __future__ import annotations

import json

import pytest

from labeler.config import RunConfig
from labeler.errors import InputError
from labeler.evaluation import EvalReport
from labeler.golden import parse_golden_jsonl
from labeler_app.runs import RunOrigin, measures_for, report_of, require_judgments, save_report, score_run
from labeler_storage import open_store

GOLDEN = "".join(json.dumps(q) + "\n" for q in [
    {"query_id": "q1", "question": "Vacation days?", "query_type": "policy", "relevance": {"d1": 2, "d2": 0}},
    {"query_id": "q2", "question": "Hotel limit?", "query_type": "travel", "relevance": {"d3": 1}},
    {"query_id": "q3", "question": "Pets at work?", "unanswerable": True},
    {"query_id": "q4", "question": "Not judged yet"},
])
RUN = {"q1": {"d2": 0.9, "d1": 0.8, "d7": 0.1}, "q2": {"d9": 0.7}, "q3": {"d5": 0.4}}


@pytest.fixture
def report() -> EvalReport:
    return score_run(parse_golden_jsonl(GOLDEN), RUN, cutoffs=(1, 10), abstain_threshold=0.5)


def test_runs_report_round_trips_through_a_saved_run(db_url, report):
    golden = parse_golden_jsonl(GOLDEN)
    with open_store(db_url) as store:  # a SQLite file and a PostgreSQL database: JSON text, exact floats
        saved = save_report(store, report, RunOrigin(config=RunConfig(abstain_threshold=0.5)), golden,
                            corpus_fingerprint="sha256:x", name="baseline")
        again = report_of(store.runs.load(saved.run_id))
    assert again == report  # abstention, settings and question texts included
    assert again.abstention.at_threshold.unanswerable_abstained == 1.0  # q3's top 0.4 < 0.5
    assert again.questions["q3"] == "Pets at work?"
    assert saved.config_hash == RunConfig(abstain_threshold=0.5).config_hash
    assert RunOrigin.of_saved(saved.config) == RunOrigin(config=RunConfig(abstain_threshold=0.5))


def test_runs_a_run_saved_when_the_mode_was_called_retriever_still_reads(tmp_path, report):
    from labeler_app.evaluate import load_run, score_scale_note

    old = {**RunConfig(mode="hybrid").to_dict()}
    old["retriever"] = old.pop("mode")  # the config column as runs saved before the rename hold it
    with open_store(tmp_path / "old.db") as store:
        saved = save_report(store, report, RunOrigin(config=RunConfig(mode="hybrid")), parse_golden_jsonl(GOLDEN),
                            corpus_fingerprint="sha256:x")
        with store.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(old), saved.run_id))
        view = load_run(store, saved.run_id)
    assert view.record.config == old and view.record.config_hash == RunConfig(mode="hybrid").config_hash
    assert RunOrigin.of_saved(view.record.config) == RunOrigin(config=RunConfig(mode="hybrid"))
    assert score_scale_note(view.record.config).startswith("Hybrid retrieval: these scores are fused")


def test_runs_every_system_takes_one_path_and_records_its_origin(tmp_path):
    """The built-in pipeline is evaluated as a System, like a run file: the same report shape, and
    each run's origin read back as it was saved (the pipeline's config; the file's declaration)."""
    from types import SimpleNamespace

    from labeler.corpus import Corpus, Document
    from labeler.systems import RunFileSystem
    from labeler.systems.builtin import BuiltinSystem
    from labeler_app.runs import evaluate_retriever, evaluate_system

    golden = parse_golden_jsonl(GOLDEN)
    ranked = {q.query_id: {d: 1.0 / (i + 1) for i, d in enumerate(sorted(q.relevance))} for q in golden.queries}
    by_text = {q.question: q.query_id for q in golden.queries}
    corpus = Corpus(tuple(Document(d, "", d) for q in golden.queries for d in sorted(q.relevance)))
    retriever = SimpleNamespace(corpus=corpus, search_many=lambda questions, params, progress=None: [
        [SimpleNamespace(doc_id=d, score=s) for d, s in ranked[by_text[q]].items()] for q in questions])
    config = RunConfig(k=10)
    run, built_in = evaluate_retriever(golden, retriever, config)
    _, as_file = evaluate_system(golden, RunFileSystem(run, name="same"), k=10, corpus=corpus)
    assert built_in.metrics == as_file.metrics and built_in.settings["system"]["kind"] == "builtin"
    assert set(built_in.settings) == set(as_file.settings)
    origin = RunOrigin.of(BuiltinSystem("corpus.jsonl", config, retriever=retriever))
    assert origin == RunOrigin(config=config) and RunOrigin.of_saved(origin.to_dict()) == origin
    file_origin = RunOrigin.of(RunFileSystem(run, name="same"))
    assert file_origin.config is None and RunOrigin.of_saved(file_origin.to_dict()) == file_origin


def test_runs_report_to_dict_is_json_and_lossless(report):
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert EvalReport.from_dict(data) == report
    assert [p.threshold for p in EvalReport.from_dict(data).abstention.sweep] == [0.4, 0.7, 0.9]


def test_runs_reads_reports_saved_with_question_texts_inside_entries(report):
    data = report.to_dict()
    questions = data.pop("questions")
    data.pop("abstention")
    for query_id, entry in data["per_query"].items():
        entry["question"] = questions[query_id]  # the format saved runs had before
    old = EvalReport.from_dict(data)
    assert old.questions == questions
    assert old.per_query == report.per_query


def test_runs_measures_for_adds_bar_measures_once():
    names = measures_for((10,), ["ndcg@10", "recall@3", "recall@3"])
    assert names[:5] == ["recall@10", "precision@10", "mrr@10", "ndcg@10", "hit@10"]
    assert names.count("recall@3") == 1 and names.count("ndcg@10") == 1


def test_runs_refuses_a_golden_set_without_judgments():
    with pytest.raises(InputError, match="no labelled question"):
        require_judgments(parse_golden_jsonl('{"query_id": "q", "question": "x"}\n'))


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    ("{not json", "not JSON"),
    ('{"metrics": {}}', "not a saved evaluation report"),
])
def test_runs_a_bad_saved_report_is_an_input_error(tmp_path, text, message):
    from labeler.evaluation import read_report

    path = tmp_path / "report.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        read_report(path)
