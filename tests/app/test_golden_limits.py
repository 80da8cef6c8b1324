"""The size caps on what enters a golden set: a question's text (one cap, shared by adding, editing
and importing) and an import file (questions and bytes, refused in one line naming the file
before it is read whole), through the app layer, the store and `labeler import`."""
from __future__ import annotations

import io
import json
import time

import pytest
from click.testing import CliRunner

from labeler.corpus import load_corpus
from labeler.errors import GoldenFormatError, InputError
from labeler.golden import MAX_QUESTION_CHARS, read_golden
from labeler.golden.jsonl import MAX_GOLDEN_BYTES, MAX_GOLDEN_QUESTIONS
from labeler_app import golden_set as gs
from labeler_app import label as lb
from labeler_app.access import local_actor
from labeler_edge.cli import cli
from labeler_storage.store import open_store

ME = local_actor("asha")


def line(i: int, question: str | None = None) -> str:
    return json.dumps({"query_id": f"q{i}", "question": question or f"question {i}?"}) + "\n"


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"_id": "d1", "title": "T", "text": "Some text."}) + "\n", encoding="utf-8")
    return load_corpus(path)


def test_question_cap_refuses_a_long_question_when_added_edited_or_imported(tmp_path, corpus):
    long = "why " * (MAX_QUESTION_CHARS // 4) + "?"  # 4,001 characters
    with open_store(tmp_path / "labeler.db") as store:
        with pytest.raises(InputError, match=r"question is 4,001 characters long; the limit is 4,000. Hint: shorten"):
            lb.add_question(store, corpus, ME, long)
        qid = lb.add_question(store, corpus, ME, "x" * MAX_QUESTION_CHARS)  # at the cap: kept
        with pytest.raises(InputError, match="the limit is 4,000"):
            gs.edit_question(store, ME, qid, long, "", "")
        assert store.questions.get(qid).question == "x" * MAX_QUESTION_CHARS  # unchanged
    path = tmp_path / "golden.jsonl"
    path.write_text(line(1) + line(2, long), encoding="utf-8")
    with pytest.raises(GoldenFormatError) as info:
        read_golden(path)
    [problem] = info.value.problems
    assert problem.line == 2 and "4,001 characters long" in problem.reason and "shorten" in str(info.value)


def test_import_cap_refuses_a_file_with_too_many_questions_before_reading_it_whole(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as f:
        f.writelines(line(i) for i in range(MAX_GOLDEN_QUESTIONS + 1))
        f.write("{not json, and never parsed}\n" * 10_000)
    t0 = time.monotonic()
    with pytest.raises(InputError) as info:
        read_golden(path)
    message = str(info.value)
    assert message.startswith(f"{path}: the file holds more than 20,000 questions (line 20,001 is question 20,001)")
    assert "Hint: split the file" in message and "\n" not in message
    assert not isinstance(info.value, GoldenFormatError)  # the bad lines after the cap were never read
    assert time.monotonic() - t0 < 10


def test_import_cap_refuses_a_file_over_the_byte_limit_by_its_size(tmp_path):
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as f:
        f.truncate(MAX_GOLDEN_BYTES + 1)  # sparse: its size says too big, not one byte need be read
    with pytest.raises(InputError, match=r"huge.jsonl: the file is larger than the limit of 104,857,600 bytes"):
        read_golden(path)
    upload = io.BytesIO(line(1).encode() * 100)
    upload.name = "upload.jsonl"
    with pytest.raises(InputError, match=r"upload.jsonl: the file is larger than the limit of 1,000 bytes"):
        read_golden(upload, max_bytes=1000)


def test_cli_import_over_the_cap_exits_2_in_one_line_and_imports_nothing(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("wb") as f:
        f.write(line(1).encode())
        f.truncate(MAX_GOLDEN_BYTES + 1)
    db = tmp_path / "labeler.db"
    result = CliRunner().invoke(cli, ["import", str(path), "--db", str(db)])
    assert result.exit_code == 2 and "larger than the limit of 104,857,600 bytes" in result.stderr
    assert str(path) in result.stderr and "Hint: split the file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    with open_store(db) as store:
        assert store.collections.get("default") is None  # nothing imported
