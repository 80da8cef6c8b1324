"""The import/export use cases the app and the CLI share (labeler.transfer)."""
from __future__ import annotations

import io
import zipfile

import pytest

from labeler.corpus import parse_jsonl_corpus
from labeler.errors import GoldenFormatError, InputError
from labeler.golden import parse_golden_jsonl
from labeler.transfer import FORMATS, export_bytes, export_to, golden_to_export, import_golden_set, read_for_import
from storage import open_store

CORPUS = parse_jsonl_corpus('{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": "two"}\n')
GOLDEN = ('{"query_id": "q1", "question": "One?", "relevance": {"d1": 2, "d2": 0}}\n'
          '{"query_id": "q2", "question": "Mars?", "unanswerable": true}\n')


def test_transfer_import_then_export_gives_the_same_bytes(tmp_path, db_url):
    src = tmp_path / "golden.jsonl"
    src.write_text(GOLDEN)
    with open_store(db_url) as store:
        done = import_golden_set(store, read_for_import(src, corpus=CORPUS), corpus=CORPUS, corpus_path="/c")
        assert done.summary.n_questions == 2 and not done.corpus_changed(CORPUS.fingerprint)
        golden = golden_to_export(store)
    again = parse_golden_jsonl(export_bytes(golden, "jsonl").decode())
    assert [q.relevance for q in again.queries] == [{"d1": 2, "d2": 0}, {}]
    export_to(golden, "jsonl", tmp_path / "out.jsonl")
    assert (tmp_path / "out.jsonl").read_bytes() == export_bytes(golden, "jsonl")


def test_transfer_every_format_exports_in_memory_and_to_disk(tmp_path):
    golden = parse_golden_jsonl(GOLDEN)
    for name in FORMATS:
        data = export_bytes(golden, name)
        export_to(golden, name, tmp_path / name)
        if name == "beir":
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                assert zf.read("qrels/test.tsv").decode() == (tmp_path / "beir" / "qrels" / "test.tsv").read_text()
        else:
            assert data == (tmp_path / name).read_bytes()


def test_transfer_a_bad_file_is_refused_before_the_store_is_touched(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text(GOLDEN + '{"query_id": "q3", "question": "x", "relevance": {"ghost": 1}}\n')
    with pytest.raises(GoldenFormatError) as err:
        read_for_import(src, corpus=CORPUS)
    assert [p.line for p in err.value.problems] == [3]
    assert read_for_import(src, corpus=CORPUS, check_doc_ids=False).get("q3") is not None


def test_transfer_exporting_an_empty_collection_says_what_to_do(db_url):
    with open_store(db_url) as store, pytest.raises(InputError, match="collection"):
        golden_to_export(store)
