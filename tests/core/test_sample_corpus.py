"""Sanity checks for the bundled sample corpus and demo golden set (standard library only)."""
import json
import re
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
SECTIONS = {
    "leave", "travel", "expenses", "it-security", "benefits",
    "onboarding", "workplace", "payroll", "conduct", "remote-work",
}


def _read_jsonl(path):
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def docs():
    return _read_jsonl(SAMPLE / "corpus.jsonl")


@pytest.fixture(scope="module")
def golden():
    return _read_jsonl(SAMPLE / "golden.jsonl")


def _is_grade(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 3


def test_doc_count(docs):
    assert 80 <= len(docs) <= 150


def test_doc_ids_unique(docs):
    ids = [d["_id"] for d in docs]
    assert len(ids) == len(set(ids))


def test_docs_have_title_text_section(docs):
    for d in docs:
        assert isinstance(d.get("title"), str) and d["title"].strip(), d["_id"]
        assert isinstance(d.get("text"), str) and d["text"].strip(), d["_id"]
        section = d.get("metadata", {}).get("section")
        assert section in SECTIONS, d["_id"]
        assert re.fullmatch(re.escape(section) + r"-\d{3}", d["_id"]), d["_id"]


def test_doc_lengths(docs):
    for d in docs:
        assert 60 <= len(d["text"].split()) <= 250, d["_id"]


def test_corpus_has_devanagari(docs):
    assert any(re.search("[\u0900-\u097F]", d["title"] + d["text"]) for d in docs)


def test_exactly_one_html_looking_doc(docs):
    html = [d for d in docs if "<" in d["title"] + d["text"]]
    assert len(html) == 1
    assert html[0]["_id"].startswith("it-security-")
    assert "phishing" in html[0]["title"].lower()
    assert "<script>" in html[0]["text"]


def test_golden_line_count(golden):
    assert 55 <= len(golden) <= 65


def test_golden_query_ids_unique(golden):
    ids = [q["query_id"] for q in golden]
    assert len(ids) == len(set(ids))
    assert all(q["question"].strip() for q in golden)


def test_golden_has_no_fingerprint(golden):
    assert all("corpus_fingerprint" not in q for q in golden)


def test_relevance_doc_ids_exist(docs, golden):
    ids = {d["_id"] for d in docs}
    missing = {(q["query_id"], d) for q in golden for d in q["relevance"] if d not in ids}
    assert not missing


def test_grades_are_ints_0_to_3(golden):
    for q in golden:
        for doc_id, grade in q["relevance"].items():
            assert _is_grade(grade), (q["query_id"], doc_id, grade)


def test_unanswerable_share(golden):
    share = sum(q["unanswerable"] is True for q in golden) / len(golden)
    assert 0.10 <= share <= 0.20


def test_unanswerable_have_no_relevant_doc(golden):
    for q in golden:
        if q["unanswerable"]:
            assert all(g < 1 for g in q["relevance"].values()), q["query_id"]


def test_query_types(golden):
    types = {q["query_type"] for q in golden}
    assert 4 <= len(types) <= 6


def test_answerable_have_a_relevant_doc(golden):
    for q in golden:
        if not q["unanswerable"]:
            assert any(g >= 1 for g in q["relevance"].values()), q["query_id"]
