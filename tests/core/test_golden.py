"""Golden JSONL v1 and the golden-set model: parsing, validation, reading, writing, health.

TREC qrels and BEIR are in test_golden_trec_beir.py.
"""
from __future__ import annotations

import io
import json

import pytest

from conftest import SAMPLE
from labeler.errors import GoldenFormatError, InputError
from labeler.golden import (
    MAX_LINE_BYTES, GoldenQuery, GoldenSet, golden_fingerprint, golden_health, parse_golden_jsonl, read_golden,
    serialize_golden_jsonl, validate_golden, write_golden,
)

GOOD = (
    '{"query_id": "q-0007", "question": "How many vacation days do new employees get?", '
    '"query_type": "policy-lookup", "unanswerable": false, "relevance": {"handbook-12": 2, "handbook-40": 0}, '
    '"annotators": ["asha"], "notes": "", "created_at": "2026-11-29T10:00:00Z", '
    '"updated_at": "2026-11-29T10:05:00Z", "corpus_fingerprint": "sha256:abc"}\n'
    '{"query_id": "q-0008", "question": "Who founded the company on Mars?", "unanswerable": true}\n'
)


def line(**fields) -> str:
    base = {"query_id": "q1", "question": "What is the hotel limit?"}
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}) + "\n"


def problems_of(text: str, **kwargs) -> list[tuple[int, str]]:
    with pytest.raises(GoldenFormatError) as info:
        parse_golden_jsonl(text, **kwargs)
    return [(p.line, p.reason) for p in info.value.problems]


# --------------------------------------------------------------------------- parsing


def test_parse_golden_jsonl_reads_design_example():
    golden = parse_golden_jsonl(GOOD)
    q = golden.get("q-0007")
    assert q.relevance == {"handbook-12": 2, "handbook-40": 0}
    assert q.annotators == ("asha",) and q.query_type == "policy-lookup"
    assert golden.get("q-0008").unanswerable and golden.get("q-0008").relevance == {}
    assert golden.qrels() == {"q-0007": {"handbook-12": 2, "handbook-40": 0}, "q-0008": {}}
    assert golden.query_types() == {"q-0007": "policy-lookup", "q-0008": ""}
    assert golden.relevant() == {"q-0007": {"handbook-12"}, "q-0008": set()}
    assert golden.get("nope") is None


def test_parse_golden_jsonl_keeps_unknown_fields_through_round_trip():
    text = line(reviewer={"name": "li", "round": 2}, source="slack", relevance={"d1": 1})
    golden = parse_golden_jsonl(text)
    assert dict(golden.get("q1").extra) == {"reviewer": {"name": "li", "round": 2}, "source": "slack"}
    out = serialize_golden_jsonl(golden)
    assert json.loads(out)["reviewer"] == {"name": "li", "round": 2}
    assert serialize_golden_jsonl(parse_golden_jsonl(out)) == out


def test_serialize_golden_jsonl_is_canonical_and_byte_stable():
    out = serialize_golden_jsonl(parse_golden_jsonl(GOOD))
    first = json.loads(out.split("\n")[0])
    assert list(first)[:5] == ["query_id", "question", "query_type", "unanswerable", "relevance"]
    assert out.endswith("}\n") and out.count("\n") == 2
    again = serialize_golden_jsonl(parse_golden_jsonl(out))
    assert again.encode("utf-8") == out.encode("utf-8")


def test_serialize_golden_jsonl_writes_unicode_and_u2028_unescaped():
    # U+2028 inside a JSON string must not split the line on re-read (str.splitlines would).
    q = GoldenQuery("q-ü", "Wie viele Urlaubstage\u2028bekomme ich? 有几天假", relevance={"doc-é": 3})
    out = serialize_golden_jsonl(GoldenSet((q,)))
    assert "有几天假" in out and "\\u" not in out
    assert parse_golden_jsonl(out).get("q-ü").question == q.question


def test_parse_golden_jsonl_skips_blank_lines_and_crlf_and_bom():
    text = "\ufeff\n" + GOOD.replace("\n", "\r\n") + "\n   \n"
    assert [q.query_id for q in parse_golden_jsonl(text)] == ["q-0007", "q-0008"]


def test_parse_golden_jsonl_accepts_integral_float_grade():
    # pandas writes 2.0 for an int column with missing values; the grade is unambiguous.
    assert parse_golden_jsonl(line(relevance={"d1": 2.0})).get("q1").relevance == {"d1": 2}


@pytest.mark.parametrize("text, expected", [
    ("{not json\n", "broken JSON"),
    ('["q1", "x"]\n', "expected a JSON object"),
    (line(query_id=...), "missing 'query_id'"),
    (line(question=...), "missing 'question'"),
    (line(query_id=""), "'query_id' is empty"),
    (line(query_id=7), "'query_id' must be a string, got integer 7"),
    (line(query_id="q 1"), "'query_id' 'q 1' contains whitespace (U+0020)"),
    (line(query_id="q\t1"), "contains whitespace (U+0009)"),
    (line(query_id="q\u00a01"), "contains whitespace (U+00A0)"),
    (line(query_id="q\x7f"), "contains a control character (U+007F)"),
    (line(query_id="#q1"), "starts with '#'"),
    (line(question="   "), "'question' is empty"),
    (line(question=["x"]), "'question' must be a string"),
    (line(unanswerable="yes"), "'unanswerable' must be true or false"),
    (line(relevance=["d1"]), "'relevance' must be an object"),
    (line(relevance={"d1": True}), "not a boolean"),
    (line(relevance={"d1": "2"}), "must be an integer 0-3, got string \"2\""),
    (line(relevance={"d1": 2.5}), "must be an integer 0-3, got number 2.5"),
    (line(relevance={"d1": None}), "must be an integer 0-3, got null"),
    (line(relevance={"d1": 4}), "grade 4 for 'd1' is outside 0-3"),
    (line(relevance={"d1": -1}), "grade -1 for 'd1' is outside 0-3"),
    (line(relevance={"": 1}), "doc id is empty"),
    (line(relevance={"my doc.md": 1}), "doc id 'my doc.md' contains whitespace"),
    (line(relevance={"#d1": 1}), "doc id '#d1' starts with '#'"),
    (line(doc_hashes={"d 1": "sha256:x"}), "doc id in 'doc_hashes' 'd 1' contains whitespace"),
    (line(annotations={"asha": {"#d": 2}}), "doc id in 'annotations' '#d' starts with '#'"),
    (line(relevance={"d1": 2**70}), "grade 1180591620717411303424 for 'd1' does not fit in 64 bits"),
    (line(annotators="asha"), "'annotators' must be a list"),
    (line(notes=3), "'notes' must be a string"),
    (line(created_at="yesterday"), "not an ISO 8601 time"),
    (line(corpus_fingerprint=1), "'corpus_fingerprint' must be a string"),
    (line(unanswerable=True, relevance={"d1": 0, "d2": 2}), "marked unanswerable but grades documents relevant (d2=2)"),
    ('{"query_id": "q1", "question": "x", "query_id": "q2"}\n', "duplicate key 'query_id'"),
    ('{"query_id": "q1", "question": "x", "relevance": {"d": NaN}}\n', "NaN is not valid JSON"),
    ("[" * 100_000 + "]" * 100_000 + "\n", "broken JSON: nested too deeply"),
    ('{"query_id": "q1", "question": "' + "\\ud800" + '"}\n', "lone surrogate"),
    ('{"query_id": "q1", "question": "x", "n": ' + "9" * 5000 + "}\n", "broken JSON"),
])
def test_parse_golden_jsonl_reports_bad_line(text, expected):
    problems = problems_of(GOOD + text)
    assert len(problems) == 1
    assert problems[0][0] == 3, problems
    assert expected in problems[0][1]


def test_parse_golden_jsonl_collects_every_bad_line_and_returns_nothing():
    text = line(query_id="a") + "{oops\n" + line(query_id="b", relevance={"d": 9}) + line(query_id="a")
    problems = problems_of(text)
    assert [n for n, _ in problems] == [2, 3, 4]
    assert "duplicate query_id 'a' (first on line 1)" in problems[2][1]


def test_parse_golden_jsonl_reports_several_reasons_on_one_line():
    [(n, reason)] = problems_of(line(question=..., relevance={"d": 7}, unanswerable=1))
    assert n == 1 and "missing 'question'" in reason and "outside 0-3" in reason and "true or false" in reason


def test_parse_golden_jsonl_scale_error_hints_keep_scale_and_keep_scale_keeps_it():
    text = line(relevance={"d1": 4, "d2": -1})
    with pytest.raises(GoldenFormatError) as info:
        parse_golden_jsonl(text, source="cran.jsonl")
    assert "keep_scale=True" in str(info.value) and str(info.value).startswith("cran.jsonl:1: ")
    assert parse_golden_jsonl(text, keep_scale=True).get("q1").relevance == {"d1": 4, "d2": -1}


@pytest.mark.parametrize("grade, ok", [(2**63 - 1, True), (-(2**63), True), (2**63, False), (2**70, False),
                                       (-(2**63) - 1, False), (1e300, False)])
def test_parse_golden_jsonl_keep_scale_grade_must_fit_64_bits(grade, ok):
    # SQLite stores 64-bit integers: a grade beyond them is refused even when the file's scale is kept.
    text = line(relevance={"d1": grade})
    if ok:
        assert parse_golden_jsonl(text, keep_scale=True).get("q1").relevance == {"d1": grade}
        return
    with pytest.raises(GoldenFormatError) as info:
        parse_golden_jsonl(text, keep_scale=True)
    assert "does not fit in 64 bits" in info.value.problems[0].reason and "64-bit" in info.value.hint


def test_parse_golden_jsonl_keep_scale_negative_grade_is_not_relevant_for_unanswerable():
    # trec_eval counts grade <= 0 as not relevant, so -1 does not contradict "unanswerable".
    golden = parse_golden_jsonl(line(unanswerable=True, relevance={"d1": -1}), keep_scale=True)
    assert golden.get("q1").unanswerable


def test_parse_golden_jsonl_unknown_doc_ids_are_errors_with_corpus():
    text = line(relevance={"d1": 1, "ghost": 2, "d2": 0})
    [(n, reason)] = problems_of(text, doc_ids={"d1", "d2"})
    assert n == 1 and "doc id 'ghost' not in the corpus" in reason
    assert parse_golden_jsonl(text, doc_ids={"d1", "d2", "ghost"}).get("q1").relevance["ghost"] == 2


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_parse_golden_jsonl_empty_file_is_an_error(text):
    assert problems_of(text) == [(1, "the file has no questions (it is empty or holds only blank lines)")]


def test_parse_golden_jsonl_stops_collecting_after_limit():
    problems = problems_of("{\n" * 1500)
    assert len(problems) == 1001 and "stopped after 1000 bad lines" in problems[-1][1]


# --------------------------------------------------------------------------- reading files


@pytest.mark.parametrize(("text", "said"), [
    ("1 0 184 2\n1 0 29 1\n" * 600, "this is TREC qrels (query_id 0 doc_id grade), not a golden set"),
    ("\n1 Q0 184 1 12.5 bm25\n" * 21_000, "this is a TREC run (query_id Q0 doc_id rank score tag), not a golden set"),
])
def test_read_golden_names_a_trec_file_in_one_line(tmp_path, text, said):
    # Read as JSON, qrels gave 1,000 "broken JSON" lines, and a run the limit on questions with a hint to split it.
    path = tmp_path / "given.txt"
    path.write_text(text, encoding="utf-8")
    for read in (lambda: read_golden(path), lambda: parse_golden_jsonl(text, source=str(path))):
        with pytest.raises(InputError) as err:
            read()
        assert not isinstance(err.value, GoldenFormatError)  # one line, not a list of bad lines
        line = 2 if text.startswith("\n") else 1
        assert str(err.value).startswith(f"{path}:{line}: {said}. Hint: a golden set is a golden JSONL file")
    for compact in ('{"query_id":"q1","question":"Is 0 really even?"}', '{"query_id":"q1","question":"Why Q0 rating below par"}'):
        assert read_golden(io.StringIO(compact + "\n"))  # JSON is read as JSON, also without spaces after separators


def test_read_golden_accepts_path_and_file_object(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(GOOD, encoding="utf-8")
    expected = parse_golden_jsonl(GOOD)
    assert read_golden(path) == expected
    assert read_golden(str(path)) == expected
    assert read_golden(io.BytesIO(GOOD.encode())) == expected
    assert read_golden(io.StringIO(GOOD)) == expected


@pytest.mark.parametrize("text", [GOOD, GOOD.splitlines()[1]])
def test_read_golden_string_is_always_a_path_never_jsonl_text(text):
    with pytest.raises(InputError, match="got text that looks like JSONL") as info:
        read_golden(text)
    assert "parse_golden_jsonl" in info.value.hint


def test_read_golden_file_named_like_json_is_read_as_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "{odd}.jsonl").write_text(GOOD, encoding="utf-8")
    assert len(read_golden("{odd}.jsonl")) == 2


@pytest.mark.parametrize("name, words", [
    ("nope.jsonl", "no such file"),
    ("", "not a BEIR folder: queries.jsonl is missing"),
    ("x" * 5000, "no such file"),  # a name too long for the OS is still a missing file, not an OSError
])
def test_read_golden_unusable_path_is_input_error(tmp_path, name, words):
    with pytest.raises(InputError, match=words):
        read_golden(tmp_path / name)


def test_read_golden_named_pipe_is_input_error_not_a_hang(tmp_path):
    import os

    path = tmp_path / "g.jsonl"
    os.mkfifo(path)  # opening it for reading would block until a writer came
    with pytest.raises(InputError, match="not a regular file") as info:
        read_golden(path)
    assert info.value.path == str(path) and info.value.hint


def test_read_golden_non_utf8_reports_line_of_first_bad_byte(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(GOOD.encode() + '{"query_id": "q1", "question": "Café?"}\n'.encode("latin-1"))
    with pytest.raises(GoldenFormatError) as info:
        read_golden(path)
    [problem] = info.value.problems
    assert problem.line == 3 and "not valid UTF-8: byte 0xe9" in problem.reason
    assert "UTF-8" in info.value.hint


def test_read_golden_huge_line_is_refused_in_bounded_memory(tmp_path):
    import tracemalloc

    path = tmp_path / "huge.jsonl"
    big = b'{"query_id": "big", "question": "' + b"a" * (50 * 1024 * 1024) + b'"}'
    with open(path, "wb") as f:
        f.write(GOOD.encode())
        f.write(big + b"\n")
        f.write(line(query_id="after").encode())
    tracemalloc.start()
    try:
        with pytest.raises(GoldenFormatError) as info:
            read_golden(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    [problem] = info.value.problems
    assert problem.line == 3 and f"the limit is {MAX_LINE_BYTES:,} bytes" in problem.reason
    assert f"line is {len(big):,} bytes long" in problem.reason
    assert peak < 8 * MAX_LINE_BYTES  # the 50 MB line was never held whole


def test_read_golden_line_of_exactly_the_limit_is_fine(tmp_path):
    head = '{"query_id": "q1", "question": "q?", "notes": "'  # notes: a question has its own, smaller cap
    body = "a" * (MAX_LINE_BYTES - len(head) - 2)
    path = tmp_path / "edge.jsonl"
    path.write_text(head + body + '"}\n', encoding="utf-8")
    assert len(read_golden(path).get("q1").notes) == len(body)


# --------------------------------------------------------------------------- writing


def test_write_golden_then_read_golden_is_identity(tmp_path):
    golden = parse_golden_jsonl(GOOD)
    write_golden(golden, tmp_path / "out" / "g.jsonl")
    assert read_golden(tmp_path / "out" / "g.jsonl") == golden
    assert (tmp_path / "out" / "g.jsonl").read_bytes() == serialize_golden_jsonl(golden).encode()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["g.jsonl"]  # no temp file left


def test_write_golden_refuses_invalid_set_and_writes_nothing(tmp_path):
    bad = GoldenSet((GoldenQuery("q1", "x", unanswerable=True, relevance={"d": 2}),))
    with pytest.raises(GoldenFormatError, match="marked unanswerable"):
        write_golden(bad, tmp_path / "g.jsonl")
    assert not (tmp_path / "g.jsonl").exists()
    assert validate_golden(bad)[0].line == 1


def test_golden_set_rejects_duplicate_ids():
    with pytest.raises(InputError, match="duplicate query_id"):
        GoldenSet((GoldenQuery("q1", "a"), GoldenQuery("q1", "b")))


def test_golden_query_copies_callers_dict():
    rel = {"d1": 1}
    q = GoldenQuery("q1", "x", relevance=rel)
    rel["d2"] = 3
    assert q.relevance == {"d1": 1}


def test_golden_fingerprint_ignores_order_and_notes_but_not_grades():
    a = parse_golden_jsonl(GOOD)
    b = GoldenSet(tuple(reversed(a.queries)))
    notes = GoldenSet(tuple(GoldenQuery(**{**q.__dict__, "notes": "changed"}) for q in a.queries))
    regraded = parse_golden_jsonl(GOOD.replace('"handbook-12": 2', '"handbook-12": 3'))
    assert golden_fingerprint(a) == golden_fingerprint(b) == golden_fingerprint(notes)
    assert golden_fingerprint(a) != golden_fingerprint(regraded)
    assert golden_fingerprint(a).startswith("sha256:")


def test_sample_golden_passes_own_validator_against_sample_corpus():
    from labeler.corpus import load_corpus

    corpus = load_corpus(SAMPLE)
    golden = read_golden(SAMPLE / "golden.jsonl", doc_ids=corpus.doc_ids())
    assert validate_golden(golden, doc_ids=corpus.doc_ids()) == []
    out = serialize_golden_jsonl(golden)
    assert serialize_golden_jsonl(parse_golden_jsonl(out)) == out


# --------------------------------------------------------------------------- health


def test_golden_health_counts_against_targets():
    # 10 questions: 2 unanswerable (20%, inside 10-20%), 8 answerable of which 3 have no grade >= 1.
    queries = [GoldenQuery(f"a{i}", "q", query_type="lookup", relevance={"d": 2}) for i in range(5)]
    queries += [GoldenQuery(f"b{i}", "q", query_type="howto", relevance={"d": 0}) for i in range(3)]
    queries += [GoldenQuery(f"u{i}", "q", unanswerable=True) for i in range(2)]
    health = golden_health(GoldenSet(tuple(queries)))
    assert (health.n_questions, health.n_unanswerable) == (10, 2)
    assert health.unanswerable_share == pytest.approx(0.2) and health.share_ok
    assert not health.count_ok
    assert dict(health.per_type) == {"": 2, "howto": 3, "lookup": 5}
    assert health.without_relevant == ("b0", "b1", "b2")
    warnings = health.warnings()
    assert len(warnings) == 2 and "the target is 50-200" in warnings[0] and all("Hint:" in w for w in warnings)


def test_golden_health_of_empty_set():
    health = golden_health(GoldenSet(()))
    assert health.unanswerable_share == 0.0 and not health.share_ok and not health.count_ok
