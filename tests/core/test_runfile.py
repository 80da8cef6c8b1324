"""TREC run files: parse/serialize pair, read/write wrappers, bad lines named with a hint."""
from __future__ import annotations

import io
import os

import pytest

from labeler.errors import InputError, RunFileError, RunFormatError
from labeler.runfile import parse_run, read_run, serialize_run, write_run

SEED_TREC = """\
vacation Q0 d2 1 0.9 bm25
vacation Q0 d1 2 0.8 bm25
vacation Q0 d9 3 0.7 bm25
hotel Q0 d6 1 0.9 bm25
"""


def test_parse_run_keeps_query_and_document_order():
    run = parse_run(SEED_TREC)
    assert run == {"vacation": {"d2": 0.9, "d1": 0.8, "d9": 0.7}, "hotel": {"d6": 0.9}}
    assert list(run) == ["vacation", "hotel"]


def test_parse_run_ignores_rank_column():
    # Ranks say d1 first, scores say d2: the score wins when scoring; the parser keeps only scores.
    run = parse_run("q Q0 d1 1 0.1 t\nq Q0 d2 2 0.9 t\n")
    assert run == {"q": {"d1": 0.1, "d2": 0.9}}


def test_parse_run_skips_blank_and_comment_lines_and_extra_fields():
    # as trec_eval: blank lines and '#' lines skipped, anything after the tag ignored
    run = parse_run("# header\n\n  \nq\tQ0\td1\t1\t2.5\ttag extra words\n")
    assert run == {"q": {"d1": 2.5}}


def test_parse_run_accepts_exponent_and_infinite_scores():
    assert parse_run("q Q0 a 1 1e3 t\nq Q0 b 2 -inf t\n") == {"q": {"a": 1000.0, "b": float("-inf")}}


@pytest.mark.parametrize("text, line, reason", [
    ("q Q0 d1 1 0.9\n", 1, "expected 6 fields"),
    ("q Q0 d1 1 0.9 t\nq Q0 d2 2 high t\n", 2, "score 'high' is not a number"),
    ("q Q0 d1 1 nan t\n", 1, "NaN"),
    ("q Q0 d1 1 0.9 t\nq Q0 d1 2 0.5 t\n", 2, "listed twice for query 'q' (first on line 1)"),
    ("q Q0 d1 1 0.9 t\nq Q0 #d2 2 0.5 t\n", 2, "doc id '#d2' starts with '#'"),
    ("q Q0 d\x01 1 0.9 t\n", 1, "doc id 'd\\x01' contains a control character (U+0001)"),
    ("q\x7f Q0 d 1 0.9 t\n", 1, "query id 'q\\x7f' contains a control character (U+007F)"),
    ("q Q0 d\u00a0x 1 0.9 t\n", 1, "doc id 'd\\xa0x' contains whitespace (U+00A0)"),
    ("q Q0 d1 1 0.9 t\nq Q0 d\u2028x 2 0.5 t\n", 2, "contains whitespace (U+2028)"),
])
def test_parse_run_names_file_line_reason_and_hint(text, line, reason):
    with pytest.raises(RunFileError) as info:
        parse_run(text, source="run.trec")
    message = str(info.value)
    assert message.startswith(f"run.trec:{line}: ")
    assert reason in message and "Hint:" in message
    assert info.value.line == line


def test_parse_run_counts_further_bad_lines():
    with pytest.raises(RunFileError, match=r"\(and 2 more bad lines\)"):
        parse_run("a\nb\nc\n")


def test_every_bad_line_is_reported_with_the_hints_it_needs():
    text = "q Q0 d1 1 0.9 t\nq Q0 d2 2 abc t\nshort\nq Q0 #d 4 0.1 t\nq Q0 d1 5 0.2 t\n"
    with pytest.raises(RunFormatError) as info:
        parse_run(text, source="run.trec")
    assert [(p.line, p.reason.split(" (")[0].split(",")[0]) for p in info.value.problems] == [
        (2, "score 'abc' is not a number"), (3, "expected 6 fields"), (4, "doc id '#d' starts with '#'"),
        (5, "document 'd1' is listed twice for query 'q'")]
    summary = info.value.summary()
    assert summary.splitlines()[:4] == [f"run.trec:{p.line}: {p.reason}" for p in info.value.problems]
    assert summary.splitlines()[4].startswith("4 bad lines; nothing was scored. Hint: each line must be")
    assert summary.count("each line must be") == 1 and "trec_eval refuses duplicate documents" in summary


def test_parse_run_same_doc_for_two_queries_is_fine():
    assert parse_run("q1 Q0 d 1 1 t\nq2 Q0 d 1 1 t\n") == {"q1": {"d": 1.0}, "q2": {"d": 1.0}}


def test_parse_run_empty_text_refused():
    with pytest.raises(RunFileError, match="no run lines"):
        parse_run("\n# only a comment\n")


def test_serialize_run_in_trec_order_with_fresh_ranks():
    # d1 and d3 tie at 0.5: doc id descending puts d3 first
    text = serialize_run({"q": {"d1": 0.5, "d2": 0.9, "d3": 0.5}}, tag="mine")
    assert text == "q Q0 d2 1 0.9 mine\nq Q0 d3 2 0.5 mine\nq Q0 d1 3 0.5 mine\n"


def test_serialize_parse_round_trip_keeps_exact_scores():
    run = {"q1": {"a": 0.1 + 0.2, "b": 1 / 3}, "q2": {"c": -2.5e-17}}
    assert parse_run(serialize_run(run)) == run


@pytest.mark.parametrize("run, tag, words", [
    ({"q": {"doc one": 1.0}}, "t", "whitespace"),
    ({"q 1": {"d": 1.0}}, "t", "whitespace"),
    ({"q": {"d": 1.0}}, "my tag", "whitespace"),
    ({"q": {"#d": 1.0}}, "t", "starts with '#'"),
    ({"#q": {"d": 1.0}}, "t", "starts with '#'"),
])
def test_serialize_run_refuses_ids_outside_the_id_policy(run, tag, words):
    with pytest.raises(InputError, match=words):
        serialize_run(run, tag=tag)


def test_parse_run_comment_line_may_start_after_spaces():
    assert parse_run("  # a comment\nq Q0 d 1 1 t\n") == {"q": {"d": 1.0}}


def test_read_run_from_path_file_object_or_text(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(SEED_TREC, encoding="utf-8")
    expected = parse_run(SEED_TREC)
    assert read_run(path) == expected
    assert read_run(str(path)) == expected
    assert read_run(io.StringIO(SEED_TREC)) == expected
    assert read_run(SEED_TREC) == expected


@pytest.mark.parametrize("name, words", [
    ("nope.trec", "no such run file"), ("", "got a folder"), ("x" * 5000, "no such run file"), ("pipe", "not a regular file"),
])
def test_read_run_unusable_path_is_run_file_error(tmp_path, name, words):
    if name == "pipe":
        os.mkfifo(tmp_path / name)
    with pytest.raises(RunFileError, match=words):
        read_run(tmp_path / name)


def test_read_run_non_utf8_names_line(tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(b"q Q0 d1 1 1 t\nq Q0 d\xff 2 0.5 t\n")
    with pytest.raises(RunFileError) as info:
        read_run(path)
    assert info.value.line == 2 and "UTF-8" in str(info.value)


def test_read_run_reports_lines_that_are_not_utf8_beside_the_other_bad_lines(tmp_path):
    path = tmp_path / "run.trec"
    path.write_bytes(b"q Q0 d\xff 1 1 t\nq Q0 d2 2 x t\nq Q0 d3 3 0.5 t\nq Q0 \xfe 4 0.1 t\n")
    with pytest.raises(RunFormatError) as info:
        read_run(path)
    assert [(p.line, p.reason) for p in info.value.problems] == [
        (1, "not UTF-8 text"), (2, "score 'x' is not a number"), (4, "not UTF-8 text")]
    assert "save the run file as UTF-8" in info.value.summary()


def test_write_run_then_read_run(tmp_path):
    run = {"q": {"d2": 0.9, "d1": 0.8}}
    write_run(tmp_path / "out.trec", run, tag="labeler-abc")
    assert read_run(tmp_path / "out.trec") == run
    assert (tmp_path / "out.trec").read_text().splitlines()[0] == "q Q0 d2 1 0.9 labeler-abc"
    assert [p.name for p in tmp_path.iterdir()] == ["out.trec"]  # written via a temp file, none left


def test_write_run_under_a_file_is_input_error_and_writes_nothing(tmp_path):
    (tmp_path / "file").write_text("keep")
    with pytest.raises(InputError, match="is a file, not a folder") as info:
        write_run(tmp_path / "file" / "run.trec", {"q": {"d": 1.0}})
    assert "Hint:" in str(info.value) and (tmp_path / "file").read_text() == "keep"
