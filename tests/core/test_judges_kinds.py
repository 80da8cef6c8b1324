"""File judges (TREC qrels, JSONL, UMBRELA's output) and python judges."""
from __future__ import annotations

import json

import pytest

from labeler.errors import ConfigError, InputError
from labeler.judges import JudgeFailure, JudgePair, MachineGrade, judge_spec_from_dict, make_judge
from labeler.judges.filejudge import JudgmentsFormatError, read_judgments

PAIRS = [JudgePair("q1", "fleas", "d1", "", "fleas breed", "sha256:1"),
         JudgePair("q1", "fleas", "d2", "", "cats", "sha256:2"),
         JudgePair("q2", "solar", "d3", "", "panels", "sha256:3")]


def lines(*objects) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


def test_read_judgments_trec_qrels_and_jsonl_agree():
    qrels = read_judgments("q1 0 d1 3\nq1\t0\td2\t0\n\nq2 0 d3 2\n")
    jsonl = read_judgments(lines({"query_id": "q1", "doc_id": "d1", "grade": 3, "judge": "j"},
                                 {"query_id": "q1", "doc_id": "d2", "grade": 0, "judge": "j"},
                                 {"qid": "q2", "docid": "d3", "judgment": 2, "judge": "j", "model": "gpt-4o"}))
    assert qrels.grades() == jsonl.grades() == {("q1", "d1"): 3, ("q1", "d2"): 0, ("q2", "d3"): 2}
    assert jsonl.judge == "j" and jsonl.model == "gpt-4o"


def test_read_judgments_takes_numeric_json_ids_as_the_qrels_text_would_have_them():
    # TREC DL's ids are numbers, and a tool judging elsewhere may write them as JSON numbers
    got = read_judgments(lines({"qid": 19335, "docid": 7, "judgment": 2},
                               {"qid": "19335", "docid": "8", "judgment": 0}))
    qrels = read_judgments("19335 0 7 2\n19335 0 8 0\n")
    assert got.grades() == qrels.grades() == {("19335", "7"): 2, ("19335", "8"): 0}
    for bad in (1.5, True):
        with pytest.raises(JudgmentsFormatError, match="must be a string"):
            read_judgments(lines({"qid": bad, "docid": "7", "judgment": 2}))


def test_read_judgments_umbrela_fallback_is_a_failure_not_a_zero():
    got = read_judgments(lines({"qid": "q1", "docid": "d1", "judgment": 3, "result_status": 1, "prediction": "##final score: 3"},
                               {"qid": "q1", "docid": "d2", "judgment": 0, "result_status": 0, "prediction": "unsure"}))
    assert got.grades() == {("q1", "d1"): 3}
    assert "result_status 0" in got.failures["q1", "d2"]


def test_read_judgments_reports_every_bad_line(tmp_path):
    path = tmp_path / "bad.qrels"
    path.write_text("q1 0 d1 3\nq1 0 d2 4\nq1 d3 1\nq1 0 d1 2\nq2 0 d4 x\n")
    with pytest.raises(JudgmentsFormatError) as caught:
        read_judgments(path)
    report = caught.value.report().split("\n")
    assert [r.split(":")[1] for r in report] == ["2", "3", "4", "5"]
    assert "grade '4' is not 0-3" in report[0] and "listed twice" in report[2] and "(first on line 1)" in report[2]
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text(lines({"query_id": "q1", "doc_id": "d1", "grade": 1}) + "{oops\n"
                        + lines({"query_id": "q1", "grade": 1}, {"query_id": "q1", "doc_id": "d9", "grade": True}))
    with pytest.raises(JudgmentsFormatError) as caught:
        read_judgments(bad_json)
    assert [p.line for p in caught.value.problems] == [2, 3, 4]
    assert "doc_id is missing" in caught.value.report() and "grade True is not 0-3" in caught.value.report()


def test_read_judgments_several_judges_need_a_choice():
    text = lines({"query_id": "q1", "doc_id": "d1", "grade": 3, "judge": "a"},
                 {"query_id": "q1", "doc_id": "d1", "grade": 1, "judge": "b"})
    with pytest.raises(InputError, match=r"several judges \(a, b\)"):
        read_judgments(text)
    assert read_judgments(text, judge="b").grades() == {("q1", "d1"): 1}
    with pytest.raises(InputError, match="no judgments found for judge 'c'"):
        read_judgments(text, judge="c")


def test_file_judge_grades_what_it_has_and_fails_the_rest(tmp_path):
    path = tmp_path / "umbrela.jsonl"
    path.write_text(lines({"qid": "q1", "docid": "d1", "judgment": 3, "model": "gpt-4o",
                           "prediction": "M 2 T 2\n##final score: 3", "reasoning": "on topic"}))
    judge = make_judge(judge_spec_from_dict({"name": "umbrela", "kind": "file", "path": str(path)}))
    results = {r.doc_id: r for r in judge.judge(PAIRS[:2])}
    assert isinstance(results["d1"], MachineGrade) and results["d1"].grade == 3
    assert (results["d1"].model, results["d1"].rationale, results["d1"].doc_hash) == ("gpt-4o", "on topic", "sha256:1")
    assert isinstance(results["d2"], JudgeFailure) and "no judgment of this pair" in results["d2"].error


def test_python_judge_checks_what_the_function_returns(tmp_path):
    (tmp_path / "my_judge_mod.py").write_text(
        "def grade(question, title, text):\n"
        "    if text == 'cats':\n        return 7\n"
        "    if text == 'panels':\n        raise RuntimeError('no idea')\n"
        "    return 2, 'shares words'\n"
        "def answer(question, title, text):\n    return '##final score: 1'\n"
        "def search(question, k):\n    return []\n")
    spec = judge_spec_from_dict({"name": "py", "kind": "python", "target": "my_judge_mod:grade", "path": str(tmp_path)})
    results = {r.doc_id: r for r in make_judge(spec).judge(PAIRS)}
    assert results["d1"].grade == 2 and results["d1"].rationale == "shares words"
    assert isinstance(results["d2"], JudgeFailure) and "returned 7, not a grade 0-3" in results["d2"].error
    assert isinstance(results["d3"], JudgeFailure) and "raised RuntimeError: no idea" in results["d3"].error
    spec = judge_spec_from_dict({**spec.to_dict(), "target": "my_judge_mod:answer"})
    assert [r.grade for r in make_judge(spec).judge(PAIRS[:1])] == [1]
    with pytest.raises(ConfigError, match=r"cannot be called as search\(question, title, text\)"):
        make_judge(judge_spec_from_dict({**spec.to_dict(), "target": "my_judge_mod:search"}))


def test_judge_pair_of_document_carries_its_content_hash():
    from labeler.corpus import Document

    doc = Document("d1", "Fleas", "fleas breed")
    pair = JudgePair.of_document("q1", "fleas", doc)
    assert (pair.doc_id, pair.title, pair.text, pair.doc_hash) == ("d1", "Fleas", "fleas breed", doc.content_hash)


def test_read_judgments_takes_golden_style_lines():
    got = read_judgments(lines({"query_id": "q1", "question": "fleas", "relevance": {"d1": 3, "d2": 0}, "judge": "j"},
                               {"query_id": "q2", "relevance": {"d3": 1}}))
    assert got.grades() == {("q1", "d1"): 3, ("q1", "d2"): 0, ("q2", "d3"): 1}
    with pytest.raises(JudgmentsFormatError, match="grade 5 is not 0-3"):
        read_judgments(lines({"query_id": "q1", "relevance": {"d1": 5}}))
