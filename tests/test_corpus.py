"""Corpus loaders: good input in every format, and bad input named by file, line and fix."""
from __future__ import annotations

import json

import pytest

from labeler.corpus import Corpus, Document, load_corpus, parse_csv_corpus, parse_jsonl_corpus
from labeler.errors import CorpusError, LabelerError


def test_parse_jsonl_corpus_accepts_every_id_key_and_keeps_extra_fields_as_metadata():
    text = "\n".join([
        json.dumps({"doc_id": "a", "title": "A", "text": "alpha", "metadata": {"section": "leave"}}),
        json.dumps({"_id": "b", "text": "beta", "lang": "en"}),
        "",
        json.dumps({"id": 7, "title": "C", "text": "gamma"}),
    ])
    corpus = parse_jsonl_corpus(text, source="c.jsonl")
    assert [d.doc_id for d in corpus] == ["a", "b", "7"]
    assert corpus.get("a").metadata["section"] == "leave"
    assert corpus.get("b").metadata == {"lang": "en"} and corpus.get("b").title == ""
    assert corpus.doc_ids() == {"a", "b", "7"}


def test_parse_jsonl_corpus_reads_devanagari_and_line_separators_inside_strings():
    text = json.dumps({"_id": "hi-1", "title": "छुट्टी नीति", "text": "हर कर्मचारी को 25 दिन\u2028की छुट्टी"},
                      ensure_ascii=False)
    doc = parse_jsonl_corpus(text).get("hi-1")
    assert doc.title == "छुट्टी नीति" and "\u2028" in doc.text


@pytest.mark.parametrize("lines, line_no, words", [
    (['{"_id": "a", "text": "x"}', '{"_id": "a", "text": "y"}'], 2, "duplicate document id 'a'"),
    (['{"_id": "a", "text": "   "}'], 1, "empty text"),
    (['{"_id": "a", "text": "x"}', '{"_id": "b", "text": "x"'], 2, "broken JSON"),
    (['{"title": "no id", "text": "x"}'], 1, "missing document id"),
    (['{"_id": "a", "title": "no text"}'], 1, "no 'text' field"),
    (['["a", "b"]'], 1, "expected a JSON object"),
    (['{"_id": "a", "text": 3}'], 1, "'text' must be a string"),
    (['{"_id": "a", "text": "x", "metadata": [1]}'], 1, "'metadata' must be an object"),
    (['{"_id": true, "text": "x"}'], 1, "document id must be a non-empty string"),
])
def test_parse_jsonl_corpus_names_line_and_reason_of_bad_input(lines, line_no, words):
    with pytest.raises(CorpusError) as info:
        parse_jsonl_corpus("\n".join(lines), source="bad.jsonl")
    message = str(info.value)
    assert message.startswith(f"bad.jsonl:{line_no}: ") and words in message and "Hint:" in message


def test_parse_jsonl_corpus_refuses_an_empty_corpus():
    with pytest.raises(CorpusError, match="empty"):
        parse_jsonl_corpus("\n\n", source="e.jsonl")


def test_parse_csv_corpus_turns_extra_columns_into_metadata():
    text = 'id,title,text,section\nd1,Leave,"25 days, pro-rated",leave\nd2,Travel,Hotel cap,travel\n'
    corpus = parse_csv_corpus(text, source="c.csv")
    assert corpus.get("d1").text == "25 days, pro-rated"
    assert corpus.get("d2").metadata == {"section": "travel"}


@pytest.mark.parametrize("text, line_no, words", [
    ("title,text\nA,x\n", 1, "missing column(s) id"),
    ("id,title\nA,x\n", 1, "missing column(s) text"),
    ("id,text\na,x\na,y\n", 3, "duplicate document id"),
    ("id,text\na,\n", 2, "empty text"),
    ("id,text\n,x\n", 2, "empty document id"),
    ("id,text\na,x,extra\n", 2, "more fields"),
])
def test_parse_csv_corpus_names_line_and_reason_of_bad_input(text, line_no, words):
    with pytest.raises(CorpusError) as info:
        parse_csv_corpus(text, source="bad.csv")
    assert str(info.value).startswith(f"bad.csv:{line_no}: ") and words in str(info.value)


def test_load_corpus_reads_a_text_folder_with_relative_path_ids(tmp_path):
    (tmp_path / "leave").mkdir()
    (tmp_path / "leave" / "vacation.md").write_text("# Vacation\n\n25 days a year.", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Plain note.", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    corpus = load_corpus(tmp_path)
    assert sorted(corpus.doc_ids()) == ["leave/vacation.md", "notes.txt"]
    assert corpus.get("leave/vacation.md").title == "Vacation"
    assert corpus.get("notes.txt").title == "notes"


def test_load_corpus_reads_a_beir_folder(tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "1", "title": "T", "text": "body"}\n', encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text('{"_id": "q", "text": "?"}\n', encoding="utf-8")
    assert load_corpus(tmp_path).get("1").text == "body"


def test_load_corpus_reports_the_line_of_a_non_utf8_byte(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(CorpusError) as info:
        load_corpus(path)
    assert f"{path}:2:" in str(info.value) and "UTF-8" in str(info.value)


@pytest.mark.parametrize("name, content, words", [
    ("empty.jsonl", b"", "empty"),
    ("x.parquet", b"PAR1", "unknown corpus file type"),
    ("missing.jsonl", None, "no such file"),
])
def test_load_corpus_refuses_unusable_files(tmp_path, name, content, words):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(LabelerError, match=words):
        load_corpus(path)


def test_load_corpus_refuses_a_folder_without_documents(tmp_path):
    with pytest.raises(CorpusError, match="no .txt or .md"):
        load_corpus(tmp_path)


def test_corpus_fingerprint_ignores_file_order_but_not_content():
    a, b = Document("a", "A", "alpha"), Document("b", "B", "beta")
    assert Corpus((a, b)).fingerprint == Corpus((b, a)).fingerprint
    assert Corpus((a, b)).fingerprint != Corpus((a, Document("b", "B", "beta!"))).fingerprint
    assert Corpus((a,)).fingerprint.startswith("sha256:")


def test_document_metadata_is_read_only():
    doc = Document("a", "", "x", {"section": "leave"})
    with pytest.raises(TypeError):
        doc.metadata["section"] = "travel"


def test_load_corpus_keeps_empty_documents_of_a_beir_folder_and_says_so(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "1", "title": "T", "text": "body"}\n{"_id": "2", "title": "", "text": ""}\n'
        '{"_id": "3", "title": "Title only", "text": ""}\n', encoding="utf-8")
    corpus = load_corpus(tmp_path)
    # Kept, so the collection's statistics (BM25's N and average length) stay its own.
    assert sorted(corpus.doc_ids()) == ["1", "2", "3"] and corpus.empty == ("2",)
    # The same file given directly is the user's own file: an empty document is an error there.
    with pytest.raises(CorpusError, match="'2' has empty text"):
        load_corpus(tmp_path / "corpus.jsonl")
