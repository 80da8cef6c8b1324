"""`labeler index` and `labeler search` on the bundled sample corpus with the real model."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from labeler_edge.cli import cli


def test_cli_index_then_search_reuses_the_cache(tmp_path):
    runner = CliRunner()
    first = runner.invoke(cli, ["index", str(SAMPLE)])
    assert first.exit_code == 0, first.output
    assert "embedded 116 documents as 116 chunks" in first.output
    assert "cache:" in first.output
    second = runner.invoke(cli, ["index", str(SAMPLE)])
    assert "reused cached embeddings" in second.output

    result = runner.invoke(cli, ["search", str(SAMPLE), "What is the hotel limit on business travel?", "-k", "3", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert [r["rank"] for r in payload["results"]] == [1, 2, 3]
    assert payload["results"][0]["doc_id"].startswith("travel-")
    assert payload["config"]["k"] == 3 and len(payload["config_hash"]) == 12

    table = runner.invoke(cli, ["search", str(SAMPLE), "stolen laptop", "--depth", "2", "--filter", "section=it-security"])
    lines = table.output.strip().splitlines()
    assert len(lines) == 2 and all("it-security-" in line for line in lines)


@pytest.mark.parametrize("flag", ["--mode", "--retriever"])  # --retriever: the old name, still read
def test_cli_index_bm25_builds_no_embeddings(flag):
    result = CliRunner().invoke(cli, ["index", str(SAMPLE), flag, "bm25"])
    assert result.exit_code == 0, result.output
    assert "BM25 index over 116 documents as 116 chunks" in result.output


def test_cli_help_names_the_mode_not_its_old_name():
    shown = CliRunner().invoke(cli, ["eval", "--help"]).output
    assert "--mode [dense|bm25|hybrid]" in shown and "--retriever" not in shown


def test_cli_search_bad_corpus_exits_2_with_file_and_hint(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["search", str(bad), "anything"])
    assert result.exit_code == 2
    assert f"{bad}:2: duplicate document id 'a'" in result.output and "Hint:" in result.output


@pytest.mark.parametrize("args", [
    ["index", "{corpus}", "--mode", "bm25"],
    ["index", "{corpus}", "--hybrid"],
    ["search", "{corpus}", "the", "--retriever", "bm25"],
])
def test_cli_corpus_with_no_indexable_word_exits_2_with_one_line(tmp_path, args):
    corpus = tmp_path / "stop.jsonl"
    corpus.write_text('{"_id": "a", "text": "the of and"}\n{"_id": "b", "text": "!!! ?"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, [a.format(corpus=corpus) for a in args])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert f"{corpus}: no document has a word BM25 can index" in line and "Hint:" in line


@pytest.mark.parametrize("args, message", [
    (["--filter", "nokey"], "key=value"),
    (["-k", "10,100"], "--cutoffs"),  # -k is the depth, one number, in every command
    (["-k", "0"], "positive whole number"),
])
def test_cli_search_bad_option_exits_2(args, message):
    result = CliRunner().invoke(cli, ["search", str(SAMPLE), "x", *args])
    assert result.exit_code == 2 and message in result.output


def test_cli_search_takes_no_abstention_threshold():
    # Abstention is scored by `eval`; a search returns its ranking whatever the top score.
    result = CliRunner().invoke(cli, ["search", str(SAMPLE), "x", "--abstain-threshold", "0.5"])
    assert result.exit_code == 2 and "No such option" in result.output
