"""Golden-set exports and imports beside JSONL: TREC qrels and BEIR folders (round trips, ids, bad lines)."""
from __future__ import annotations

import json

import pytest
import pytrec_eval

from conftest import SAMPLE, need_datasets
from labeler.errors import GoldenFormatError, InputError
from labeler.golden import (
    GoldenQuery, GoldenSet, parse_beir_golden, parse_golden_jsonl, read_golden, serialize_beir,
    serialize_trec_qrels, write_beir, write_golden, write_trec_qrels,
)
from test_golden import GOOD, line

# --------------------------------------------------------------------------- TREC qrels


def test_serialize_trec_qrels_loads_in_pytrec_eval(tmp_path):
    golden = parse_golden_jsonl(GOOD + line(query_id="q-0009", relevance={"z": 3, "a": 1}))
    path = tmp_path / "qrels.txt"
    write_trec_qrels(golden, path)
    text = path.read_text()
    assert text == ("q-0007 0 handbook-12 2\nq-0007 0 handbook-40 0\nq-0009 0 a 1\nq-0009 0 z 3\n")
    with open(path) as f:
        assert pytrec_eval.parse_qrel(f) == {"q-0007": {"handbook-12": 2, "handbook-40": 0},
                                             "q-0009": {"a": 1, "z": 3}}


@pytest.mark.parametrize("query_id, doc_id, words", [
    ("q1", "my doc.md", "doc id 'my doc.md' contains whitespace"),
    ("q1", "#d", "starts with '#'"),
    ("#q", "d", "query id '#q' starts with '#'"),
])
@pytest.mark.parametrize("serialize", [serialize_trec_qrels, serialize_beir])
def test_serialize_trec_and_beir_refuse_ids_outside_the_policy(serialize, query_id, doc_id, words):
    golden = GoldenSet((GoldenQuery(query_id, "x", relevance={doc_id: 1}),))
    with pytest.raises(InputError, match=words) as info:
        serialize(golden)
    assert "'#'" in info.value.hint


@pytest.mark.parametrize("write, name", [
    (write_golden, "g.jsonl"), (write_trec_qrels, "qrels.txt"), (write_beir, "beir"),
])
def test_write_under_a_file_is_input_error_with_path_and_hint(tmp_path, write, name):
    (tmp_path / "file").write_text("keep")
    with pytest.raises(InputError, match="is a file, not a folder") as info:
        write(parse_golden_jsonl(GOOD), tmp_path / "file" / name)
    assert str(tmp_path / "file" / name) in str(info.value) and "Hint:" in str(info.value)
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_sample_golden_trec_export_scores_in_pytrec_eval(tmp_path):
    golden = read_golden(SAMPLE / "golden.jsonl")
    write_trec_qrels(golden, tmp_path / "q.txt")
    with open(tmp_path / "q.txt") as f:
        qrels = pytrec_eval.parse_qrel(f)
    assert qrels == {k: v for k, v in golden.qrels().items() if v}
    run = {qid: {doc: float(g) for doc, g in docs.items()} for qid, docs in qrels.items()}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut"}).evaluate(run)
    # The run ranks every judged doc by its own grade: the ideal ranking, so nDCG@10 = 1 wherever a doc is relevant.
    assert all(s["ndcg_cut_10"] == pytest.approx(1.0) for qid, s in scores.items()
               if any(g > 0 for g in qrels[qid].values()))


# --------------------------------------------------------------------------- BEIR


def test_serialize_beir_round_trips_through_parse_beir_golden():
    golden = parse_golden_jsonl(GOOD)
    queries, qrels = serialize_beir(golden)
    assert qrels == "query-id\tcorpus-id\tscore\nq-0007\thandbook-12\t2\nq-0007\thandbook-40\t0\n"
    back = parse_beir_golden(queries, qrels)
    assert back.qrels() == golden.qrels()
    assert back.get("q-0008").unanswerable and back.get("q-0007").query_type == "policy-lookup"


def test_write_beir_then_read_golden_folder(tmp_path):
    golden = parse_golden_jsonl(GOOD)
    write_beir(golden, tmp_path / "beir")
    assert (tmp_path / "beir" / "qrels" / "test.tsv").is_file()
    assert read_golden(tmp_path / "beir").qrels() == golden.qrels()
    # Both files through the atomic writer: no temp file left beside either.
    assert sorted(p.name for p in (tmp_path / "beir").rglob("*")) == ["qrels", "queries.jsonl", "test.tsv"]


def test_write_beir_replaces_neither_file_when_one_cannot_be_written(tmp_path):
    folder = tmp_path / "beir"
    folder.mkdir()
    (folder / "queries.jsonl").write_text("old")
    (folder / "qrels").write_text("a file where the qrels folder goes")
    with pytest.raises(InputError, match="is a file, not a folder"):
        write_beir(parse_golden_jsonl(GOOD), folder)
    assert (folder / "queries.jsonl").read_text() == "old"
    assert sorted(p.name for p in folder.iterdir()) == ["qrels", "queries.jsonl"]


def test_parse_beir_golden_leaves_out_unjudged_queries():
    queries = '{"_id": "1", "text": "a?"}\n{"_id": "2", "text": "b?"}\n{"_id": 3, "text": "c?"}\n'
    qrels = "query-id\tcorpus-id\tscore\n1\td1\t1\n3\td2\t0\n"
    golden = parse_beir_golden(queries, qrels)
    assert golden.qrels() == {"1": {"d1": 1}, "3": {"d2": 0}}


@pytest.mark.parametrize("qrels, expected", [
    ("query-id\tcorpus-id\tscore\n9\td1\t1\n", "query-id '9' is not in queries.jsonl"),
    ("query-id\tcorpus-id\tscore\n1\td1\tx\n", "score must be an integer"),
    ("query-id\tcorpus-id\tscore\n1 d1 1\n", "expected 3 tab-separated fields"),
    ("query-id\tcorpus-id\tscore\n1\td1\t5\n", "grade 5 for 'd1' is outside 0-3"),
    ("query-id\tcorpus-id\tscore\n1\t#d1\t1\n", "corpus-id '#d1' starts with '#'"),
    ("query-id\tcorpus-id\tscore\n1\td 1\t1\n", "corpus-id 'd 1' contains whitespace"),
])
def test_parse_beir_golden_reports_bad_qrels_line(qrels, expected):
    with pytest.raises(GoldenFormatError) as info:
        parse_beir_golden('{"_id": "1", "text": "a?"}\n', qrels, qrels_source="test.tsv")
    [problem] = info.value.problems
    assert problem.line == 2 and expected in problem.reason


@pytest.mark.parametrize("queries, expected", [
    ('{"_id": "q 1", "text": "a?"}\n', "'_id' 'q 1' contains whitespace"),
    ('{"_id": "#1", "text": "a?"}\n', "'_id' '#1' starts with '#'"),
    ("[" * 100_000 + "]" * 100_000 + "\n", "broken JSON: nested too deeply"),
    ('{"_id": "1", "text": "a?", "_id": "2"}\n', "duplicate key '_id'"),
    ("", "the file has no queries"),
])
def test_parse_beir_golden_reports_bad_queries_line(queries, expected):
    with pytest.raises(GoldenFormatError) as info:
        parse_beir_golden(queries, "1\td1\t1\n", queries_source="queries.jsonl")
    [problem] = info.value.problems
    assert problem.line == 1 and expected in problem.reason and str(info.value).startswith("queries.jsonl:1: ")


def test_parse_beir_golden_keep_scale_grade_must_fit_64_bits():
    with pytest.raises(GoldenFormatError) as info:
        parse_beir_golden('{"_id": "1", "text": "a?"}\n', f"1\td1\t{2**70}\n", keep_scale=True)
    assert "does not fit in 64 bits" in info.value.problems[0].reason and "64-bit" in info.value.hint


def test_parse_beir_golden_duplicate_pair_is_an_error():
    with pytest.raises(GoldenFormatError, match="duplicate pair"):
        parse_beir_golden('{"_id": "1", "text": "a?"}\n', "1\td1\t1\n1\td1\t2\n")


@pytest.mark.parametrize("name, keep_scale, n_queries, n_pairs", [
    ("scifact", False, 300, 339),
    ("cisi", False, 76, 3114),   # 112 queries, 36 of them unjudged and left out
    ("cranfield", True, 225, 1837),
])
def test_read_golden_loads_shared_beir_datasets(name, keep_scale, n_queries, n_pairs):
    folder = need_datasets() / name
    # Ids straight from corpus.jsonl: Cranfield has two empty documents a corpus loader may refuse.
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        doc_ids = {json.loads(row)["_id"] for row in f if row.strip()}
    golden = read_golden(folder, keep_scale=keep_scale, doc_ids=doc_ids)
    assert len(golden) == n_queries
    assert sum(len(q.relevance) for q in golden) == n_pairs


def test_read_golden_refuses_cranfield_scale_with_hint():
    with pytest.raises(GoldenFormatError) as info:
        read_golden(need_datasets() / "cranfield")
    assert "--keep-scale" in info.value.hint
    assert {p.reason.split(" for ")[0] for p in info.value.problems} == {"grade 4", "grade -1"}


def test_cranfield_keep_scale_trec_export_matches_source_qrels(tmp_path):
    folder = need_datasets() / "cranfield"
    golden = read_golden(folder, keep_scale=True)
    write_trec_qrels(golden, tmp_path / "q.txt")
    with open(tmp_path / "q.txt") as f:
        ours = pytrec_eval.parse_qrel(f)
    rows = (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]
    source: dict[str, dict[str, int]] = {}
    for row in rows:
        qid, doc, grade = row.split("\t")
        source.setdefault(qid, {})[doc] = int(grade)
    assert ours == source
