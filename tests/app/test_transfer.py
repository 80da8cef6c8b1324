"""The import/export use cases the app and the CLI share (labeler_app.transfer)."""
from __future__ import annotations

import io
import zipfile

import pytest

from labeler.corpus import parse_jsonl_corpus
from labeler.errors import GoldenFormatError, InputError
from labeler.golden import parse_golden_jsonl
from labeler_app.transfer import FORMATS, export_bytes, export_to, golden_to_export, import_golden_set, read_for_import
from labeler_storage import open_store

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


V1 = parse_jsonl_corpus('{"_id": "d1", "text": "Ten sick days."}\n{"_id": "d2", "text": "Vacation."}\n'
                        '{"_id": "d3", "text": "Parking."}\n')
V2 = parse_jsonl_corpus('{"_id": "d1", "text": "Twelve sick days."}\n{"_id": "d2", "text": "Vacation."}\n'
                        '{"_id": "d3", "text": "Parking."}\n')


def team_collection(store, name: str = "team") -> None:
    """Three annotators, a regrade, an adjudication, votes, a consensus file's grades, and stale grades."""
    store.collections.ensure(name, corpus_path="/corpus", corpus=V1)
    store.golden.import_set(parse_golden_jsonl('{"query_id": "q-0003", "question": "Parking?", "relevance": {"d3": 2}, '
                                           '"annotators": ["upstream"], "reviewer": {"round": 2}}\n'),
                        collection=name, file_name="upstream.jsonl")
    store.questions.add("How many sick days can I take?", collection=name, author="ann", query_type="policy")
    store.questions.add("Where is Mars?", collection=name, author="bob")
    for annotator, d1, d2 in (("ann", 1, 2), ("bob", 0, 1), ("cy", 2, 2)):
        store.judgments.set("q-0004", "d1", d1, annotator=annotator, collection=name, doc=V1.get("d1"))
        store.judgments.set("q-0004", "d2", d2, annotator=annotator, collection=name, doc=V1.get("d2"),
                           note=f"seen by {annotator}")
    store.judgments.set("q-0004", "d1", 3, annotator="ann", collection=name, doc=V1.get("d1"))  # history
    store.judgments.adjudicate("q-0004", "d2", 1, by="lead", note="Partly.", collection=name)
    store.questions.set_unanswerable("q-0005", True, collection=name, by="bob")
    store.judgments.set("q-0005", "d3", 0, annotator="cy", collection=name, doc=V1.get("d3"))
    store.judgments.set("q-0003", "d3", 1, annotator="cy", collection=name, doc=V1.get("d3"))
    store.collections.ensure(name, corpus=V2)  # d1 edited: the grades given against v1 are stale
    store.judgments.set("q-0004", "d1", 1, annotator="bob", collection=name, doc=V2.get("d1"))
    # A second consensus-only file: its own source, counted at import, then kept apart (a recorded switch).
    vendor = store.golden.import_set(parse_golden_jsonl('{"query_id": "vendor-1", "question": "Vendor?", '
                                                    '"relevance": {"d2": 3, "d3": 1}}\n'),
                                 collection=name, file_name="vendor.jsonl")
    store.judgments.set("vendor-1", "d3", 0, annotator="cy", collection=name, doc=V2.get("d3"))
    store.sources.set_counted(vendor.source, False, by="lead", collection=name)


def stale_of(store, collection: str) -> list[tuple]:
    return sorted((s.query_id, s.doc_id, s.annotator, s.grade) for s in store.judgments.stale(collection=collection))


def test_transfer_export_import_export_is_byte_identical_with_several_annotators(request, db_engine, db_url,
                                                                                 tmp_path):
    from conftest import new_db_url

    with open_store(db_url) as store:
        team_collection(store)
        first = export_bytes(golden_to_export(store, collection="team"), "jsonl")
        exported = parse_golden_jsonl(first.decode())
        assert exported.get("q-0004").extra["annotations"] == {"ann": {"d1": 3, "d2": 2}, "bob": {"d1": 1, "d2": 1},
                                                               "cy": {"d1": 2, "d2": 2}}
        assert exported.get("q-0004").relevance == {"d1": 2, "d2": 1}  # median of 3, 1, 2; adjudicated 1
        assert stale_of(store, "team") == [("q-0004", "d1", "ann", 3), ("q-0004", "d1", "cy", 2)]
        # Each file's grades are its own source; the vendor's count nowhere, cy's grade stands alone.
        upstream, vendor = exported.get("q-0003").extra, exported.get("vendor-1")
        assert [(s.file_name, s.counted, s.n_grades) for s in store.sources.list(collection="team")] == [
            ("upstream.jsonl", True, 1), ("vendor.jsonl", False, 2)]
        assert exported.get("q-0003").relevance == {"d3": 1}  # cy's 1 outweighs the counted file's 2
        assert vendor.relevance == {"d3": 0} and [list(s.values())[0]["counted"] for s in (
            upstream["grade_sources"], vendor.extra["grade_sources"])] == [True, False]
        [switch] = list(vendor.extra["grade_sources"].values())[0]["changes"]
        assert (switch["counted"], switch["by"]) == (False, "lead")
        # Into the same collection: every question is identical, nothing is written.
        plan = store.golden.plan(exported, collection="team")
        assert (len(plan.new), len(plan.identical), plan.conflicts) == (0, 4, ())
        revision = store.collections.revision(collection="team")
        same = import_golden_set(store, exported, collection="team", corpus=V2).summary
        assert (same.n_new, same.n_identical, same.n_judgments) == (0, 4, 0)
        assert store.collections.revision(collection="team") == revision  # not even a cache key moved
        assert export_bytes(golden_to_export(store, collection="team"), "jsonl") == first
        # Into an empty collection of the same database, against the same corpus.
        import_golden_set(store, read_for_import(io.BytesIO(first)), collection="copy", corpus=V2, corpus_path="/corpus")
        assert export_bytes(golden_to_export(store, collection="copy"), "jsonl") == first
        assert [(s.name, s.counted) for s in store.sources.list(collection="copy")] == [
            (s.name, s.counted) for s in store.sources.list(collection="team")]
        assert stale_of(store, "copy") == stale_of(store, "team")
        history = [(e.doc_id, e.annotator, e.grade, e.change) for e in store.judgments.history("q-0004", collection="copy")]
        assert ("d1", "ann", 1, "regraded") in history
    # Into a fresh database.
    with open_store(new_db_url(request, db_engine, tmp_path / "fresh.db")) as fresh:
        import_golden_set(fresh, parse_golden_jsonl(first.decode()), corpus=V2)
        assert export_bytes(golden_to_export(fresh), "jsonl") == first
        assert {j.note for j in fresh.judgments.list(query_id="q-0004") if j.doc_id == "d2"} == {
            "seen by ann", "seen by bob", "seen by cy"}
