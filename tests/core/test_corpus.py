"""Corpus loaders: good input in every format, and bad input named by file, line and fix."""
from __future__ import annotations

import json
import os

import pytest

from labeler.corpus import Corpus, Document, load_corpus, parse_csv_corpus, parse_jsonl_corpus
from labeler.errors import CorpusError
from labeler.ids import is_valid_id


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
    (['{"_id": true, "text": "x"}'], 1, "document id must be a string, got boolean true"),
    (['{"_id": "", "text": "x"}'], 1, "document id is empty"),
    (['{"_id": "a b", "text": "x"}'], 1, "document id 'a b' contains whitespace (U+0020)"),
    (['{"_id": "a\\u2028b", "text": "x"}'], 1, "contains whitespace (U+2028)"),
    (['{"_id": "a\\u0000", "text": "x"}'], 1, "contains a control character (U+0000)"),
    (['{"_id": "#a", "text": "x"}'], 1, "starts with '#'"),
    (['{"_id": "a", "text": "x"}', "[" * 100_000 + "]" * 100_000], 2, "broken JSON: nested too deeply"),
    (['{"_id": "a", "text": "x", "_id": "b"}'], 1, "broken JSON: duplicate key '_id'"),
    (['{"_id": "a", "text": "x", "score": NaN}'], 1, "broken JSON: NaN is not valid JSON"),
    (['{"_id": "a", "text": "\\udc00"}'], 1, "lone surrogate"),
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
    ("id,text\na b,x\n", 2, "document id 'a b' contains whitespace"),
    ("id,text\n#a,x\n", 2, "starts with '#'"),
    ("id,text\na,x\nb," + "y" * 200_000 + "\nc,z\n", 3, "longer than the csv module's limit of 131,072 characters"),
    ('id,text\na,x\nb,"two\nlines ' + "y" * 200_000 + '"\n', 3, "csv module's limit"),
    ("id," + "t" * 200_000 + "\na,x\n", 1, "csv module's limit"),
])
def test_parse_csv_corpus_names_line_and_reason_of_bad_input(text, line_no, words):
    with pytest.raises(CorpusError) as info:
        parse_csv_corpus(text, source="bad.csv")
    message = str(info.value)
    assert message.startswith(f"bad.csv:{line_no}: ") and words in message and "Hint:" in message


def test_load_corpus_reads_a_text_folder_with_relative_path_ids(tmp_path):
    (tmp_path / "leave").mkdir()
    (tmp_path / "leave" / "vacation.md").write_text("# Vacation\n\n25 days a year.", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Plain note.", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    corpus = load_corpus(tmp_path)
    assert sorted(corpus.doc_ids()) == ["leave/vacation.md", "notes.txt"]
    assert corpus.get("leave/vacation.md").title == "Vacation"
    assert corpus.get("notes.txt").title == "notes"


def test_load_corpus_text_folder_ids_percent_encode_spaces_and_a_leading_hash(tmp_path):
    (tmp_path / "team notes").mkdir()
    (tmp_path / "team notes" / "q3 plan.md").write_text("# Plan\n\nShip it.", encoding="utf-8")
    (tmp_path / "#tags.txt").write_text("tagged", encoding="utf-8")
    (tmp_path / "100%.txt").write_text("full", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert sorted(corpus.doc_ids()) == ["%23tags.txt", "100%25.txt", "team%20notes/q3%20plan.md"]
    doc = corpus.get("team%20notes/q3%20plan.md")
    assert doc.metadata["path"] == "team notes/q3 plan.md" and doc.title == "Plan"
    assert all(is_valid_id(d) for d in corpus.doc_ids())


def test_load_corpus_single_text_file_with_space_in_name(tmp_path):
    path = tmp_path / "my note.txt"
    path.write_text("hello", encoding="utf-8")
    assert load_corpus(path).doc_ids() == {"my%20note.txt"}


@pytest.mark.parametrize("line, words", [
    ("[" * 100_000 + "]" * 100_000, "broken JSON: nested too deeply"),
    ('{"_id": "a b", "text": "x"}', "contains whitespace"),
])
def test_load_corpus_file_and_beir_folder_report_bad_line(tmp_path, line, words):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "1", "text": "ok"}\n' + line + "\n", encoding="utf-8")
    for where in (tmp_path, tmp_path / "corpus.jsonl"):
        with pytest.raises(CorpusError) as info:
            load_corpus(where)
        assert str(info.value).startswith(f"{tmp_path / 'corpus.jsonl'}:2: ") and words in str(info.value)


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
    ("x.tsv", b"id\ttext\n", "TSV corpora are not supported"),
    ("missing.jsonl", None, "no such file"),
    ("x" * 5000, None, "no such file"),
    ("", None, "no .txt or .md"),  # the folder itself, holding no documents
    ("pipe.csv", "fifo", "not a regular file"),  # reading would wait for a writer forever
])
def test_load_corpus_refuses_unusable_files(tmp_path, name, content, words):
    path = tmp_path / name
    if content == "fifo":
        os.mkfifo(path)
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(CorpusError, match=words):
        load_corpus(path)


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
