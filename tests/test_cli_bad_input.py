"""Bad corpora and bad places, through the CLI: each is one line, exit 2, and nothing written.
(The golden-file matrix is in test_cli_golden.py; these are the corpus and data-directory cases.)"""
from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from conftest import snapshot
from labeler.cli import cli
from test_cli_golden import CORPUS, GOOD


def _corpus_cases(tmp_path):
    big = tmp_path / "big-cell.csv"
    big.write_text("id,title,text\nd1,One,fine\nd2,Two," + "x" * (csv.field_size_limit() + 10) + "\n")
    deep = tmp_path / "deep.jsonl"
    deep.write_text(json.dumps({"_id": "d1", "text": "fine"}) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text(json.dumps({"_id": "d1", "text": "a"}) + "\n" + json.dumps({"_id": "d 2", "text": "b"}) + "\n")
    return {"csv-cell-over-field-limit": (big, 3, "cell is longer"), "json-nested-100000-deep": (deep, 2, "nested too deep"),
            "doc-id-with-a-space": (spaced, 2, "contains whitespace")}


@pytest.mark.parametrize("case", ["csv-cell-over-field-limit", "json-nested-100000-deep", "doc-id-with-a-space"])
def test_cli_import_against_a_bad_corpus_is_one_line_and_changes_nothing(tmp_path, case):
    golden = tmp_path / "good.jsonl"
    golden.write_text(GOOD)
    corpus, line, reason = _corpus_cases(tmp_path)[case]
    db = tmp_path / "labeler.db"
    good_corpus = tmp_path / "corpus.jsonl"
    good_corpus.write_text(CORPUS)
    assert CliRunner().invoke(cli, ["import", str(golden), "--corpus", str(good_corpus), "--db", str(db)]).exit_code == 0
    before = snapshot(db)
    result = CliRunner().invoke(cli, ["import", str(golden), "--corpus", str(corpus), "--db", str(db)])
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and f"{corpus}:{line}" in message and reason in message.lower()
    assert "Hint:" in message and "Traceback" not in result.output
    assert snapshot(db) == before


def test_cli_search_a_corpus_without_an_indexable_word_exits_2(tmp_path):
    corpus = tmp_path / "stopwords.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": "the of and ... !"}) + "\n" for i in range(3)))
    result = CliRunner().invoke(cli, ["search", str(corpus), "anything", "--retriever", "bm25"])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and str(corpus) in result.stderr and "Hint:" in result.stderr


@pytest.mark.parametrize("where", ["missing-parent", "parent-is-a-file", "home-under-a-file"])
def test_cli_a_bad_database_place_is_one_line_and_creates_nothing(tmp_path, monkeypatch, where):
    golden = tmp_path / "good.jsonl"
    golden.write_text(GOOD)
    args = ["import", str(golden)]
    if where == "missing-parent":
        db = tmp_path / "no-such-folder" / "labeler.db"
        args += ["--db", str(db)]
    elif where == "parent-is-a-file":
        db = golden / "labeler.db"
        args += ["--db", str(db)]
    else:
        db = golden / "home" / "labeler.db"
        monkeypatch.setenv("LABELER_HOME", str(golden / "home"))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Hint:" in message and "Traceback" not in result.output
    assert str(db.parent) in message or str(db) in message
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no folder, no empty database
