"""Labels that stay true when the corpus changes: versions with diffs, stale judgments, the
Re-check queue, evaluations that count (or drop, or refuse) stale labels, runs that know their
corpus. Real SQLite files and PostgreSQL databases, the real sample corpus (edited copies of it), real BM25."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from labeler_app import compare as cmp
from labeler_app import golden_set as gs
from labeler_app import recheck as rc
from labeler_app.access import local_actor
from labeler_app.evaluate import run_evaluation
from conftest import sqlite_only
from labeler.config import RunConfig
from labeler.corpus import load_corpus
from labeler.golden import parse_golden_jsonl, serialize_golden_jsonl
from labeler.paths import SAMPLE_CORPUS
from labeler.retrieval import open_retriever
from labeler_storage import open_store

ASHA = local_actor("asha")
BM25 = RunConfig(mode="bm25")
EDITED, DELETED = "leave-001", "leave-002"  # both graded 3 by asha below


def write_corpus(path, edit: str | None = None, delete: str | None = None, add: dict | None = None):
    """A copy of the sample corpus with one document's text edited, one deleted, one added."""
    lines = []
    for line in (SAMPLE_CORPUS / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc["_id"] == delete:
            continue
        if doc["_id"] == edit:
            doc["text"] = doc["text"].replace("25 days", "30 days")
        lines.append(json.dumps(doc, ensure_ascii=False))
    if add:
        lines.append(json.dumps(add, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_corpus(path)


@pytest.fixture
def graded(tmp_path, db_url):
    """asha's grades on two questions against version 1 of a copy of the sample corpus."""
    corpus_file = tmp_path / "corpus.jsonl"
    corpus = write_corpus(corpus_file)
    store = open_store(db_url)
    store.collections.ensure(corpus_path=str(corpus_file), corpus=corpus)
    q1 = store.questions.add("How many vacation days do I get?", author="asha").query_id
    q2 = store.questions.add("Can I carry vacation days over?", author="asha").query_id
    for qid in (q1, q2):
        for doc_id, grade in ((EDITED, 3), (DELETED, 3), ("leave-003", 0)):
            store.judgments.set(qid, doc_id, grade, annotator="asha", doc=corpus.get(doc_id))
    yield store, corpus_file, corpus, (q1, q2)
    store.close()


def test_edit_and_delete_make_grades_stale_and_recheck_clears_them(graded):
    store, corpus_file, v1, (q1, q2) = graded
    assert store.judgments.stale() == [] and [v.version for v in store.collections.versions()] == [1]
    v2 = write_corpus(corpus_file, edit=EDITED, delete=DELETED)
    store.collections.ensure(corpus_path=str(corpus_file), corpus=v2)  # reopening the changed corpus
    [latest, first] = store.collections.versions()
    assert (latest.version, latest.diff.edited, latest.diff.deleted, latest.diff.added) == (2, (EDITED,), (DELETED,), ())
    assert latest.note == "changed since version 1: +0 added, −1 deleted, ~1 edited"
    stale = store.judgments.stale()
    assert {(s.query_id, s.doc_id, s.reason, s.grade) for s in stale} == {
        (q, d, why, 3) for q in (q1, q2) for d, why in ((EDITED, "edited"), (DELETED, "deleted"))}
    # The Re-check queue shows the old and the new text, the edit marked word by word.
    items = rc.recheck_items(store, v2, "asha", stale)
    edited = next(i for i in items if i.doc_id == EDITED and i.query_id == q1)
    assert ":red-background[~~25~~]" in edited.old_markup and ":green-background[30]" in edited.new_markup
    assert next(i for i in items if i.doc_id == DELETED).new_markup == ""
    # Confirming one clears it; regrading another clears it too; a deleted one can be removed.
    rc.confirm(store, ASHA, v2, q1, EDITED)
    assert (q1, EDITED) not in {(s.query_id, s.doc_id) for s in store.judgments.stale()}
    assert store.judgments.list(query_id=q1, annotator="asha")[0].grade == 3  # the grade is kept
    assert [e.change for e in store.judgments.history(q1) if e.doc_id == EDITED] == ["confirmed", ""]
    rc.remove(store, ASHA, q1, DELETED)
    assert len(store.judgments.stale()) == 2  # q2's two remain
    # The Golden set page counts them; an evaluation reports the remaining stale count.
    assert ("2 of 5 judged documents stale on 1 question: 1 missing from the corpus, 1 edited since judged against "
            "corpus version 2") in gs.overview(store).stale
    retriever = open_retriever(corpus_file, BM25)
    record = run_evaluation(store, ASHA, retriever, BM25, corpus_path=str(corpus_file)).record
    stale_info = record.summary["settings"]["stale"]
    assert (stale_info["n_stale"], stale_info["n_missing"], stale_info["n_edited"]) == (2, 1, 1)
    assert stale_info["missing"] == {q2: [DELETED]} and record.corpus_version == 2
    excluded = run_evaluation(store, ASHA, retriever, BM25, stale="exclude", corpus_path=str(corpus_file)).record
    assert excluded.summary["settings"]["stale"]["policy"] == "exclude"
    assert excluded.per_query[q2]["ndcg@10"] != record.per_query[q2]["ndcg@10"]  # scored without the stale grades


def test_stale_count_is_one_number_in_the_same_words_on_the_golden_set_and_evaluate_pages(graded):
    from labeler_app.evaluate import load_run

    store, corpus_file, v1, (q1, q2) = graded
    for qid in (q1, q2):  # a second annotator on the same documents: 12 grades, 6 judged documents
        for doc_id, grade in ((EDITED, 2), (DELETED, 3), ("leave-003", 0)):
            store.judgments.set(qid, doc_id, grade, annotator="bo", doc=v1.get(doc_id))
    store.collections.ensure(corpus_path=str(corpus_file), corpus=write_corpus(corpus_file, edit=EDITED, delete=DELETED))
    assert len(store.judgments.stale()) == 8  # grades: 2 annotators x 2 questions x 2 documents
    same = "4 of 6 judged documents stale on 2 questions: 2 missing from the corpus, 2 edited since judged"
    assert gs.overview(store).stale.startswith(same + " against corpus version 2.")
    done = run_evaluation(store, ASHA, open_retriever(corpus_file, BM25), BM25, corpus_path=str(corpus_file))
    assert load_run(store, done.record.run_id).stale_warning == done.stale_warning == same + "; included in the scores."


def test_a_version_is_recorded_only_when_the_content_changes(graded):
    store, corpus_file, v1, _ = graded
    store.collections.ensure(corpus_path=str(corpus_file), corpus=load_corpus(corpus_file))  # same content
    assert len(store.collections.versions()) == 1
    added = write_corpus(corpus_file, add={"_id": "new-1", "title": "New", "text": "A new policy."})
    store.collections.ensure(corpus_path=str(corpus_file), corpus=added)
    assert store.collections.versions()[0].diff.added == ("new-1",) and store.judgments.stale() == []


@sqlite_only  # the subject is the exported file, which `labeler eval` reads without any database
def test_golden_file_carries_hashes_and_eval_detects_stale_labels_from_the_file_alone(graded, tmp_path):
    store, corpus_file, v1, (q1, _) = graded
    golden = store.golden.export()
    assert golden.get(q1).extra["doc_hashes"][EDITED] == v1.get(EDITED).content_hash
    text = serialize_golden_jsonl(golden)
    assert serialize_golden_jsonl(parse_golden_jsonl(text)) == text
    golden_file = tmp_path / "golden.jsonl"
    golden_file.write_text(text, encoding="utf-8")
    other = tmp_path / "v2.jsonl"
    write_corpus(other, edit=EDITED, delete=DELETED)

    def labeler(*args):
        return subprocess.run([sys.executable, "-m", "labeler_edge", *args], capture_output=True, text=True, timeout=300)

    base = ["eval", str(other), str(golden_file), "--retriever", "bm25"]
    included = labeler(*base, "--json")
    assert included.returncode == 0, included.stderr
    assert ("warning: 4 of 6 judged documents stale on 2 questions: 2 missing from the corpus, 2 edited since judged; "
            "included in the scores.") in included.stderr
    assert json.loads(included.stdout)["settings"]["stale"]["n_stale"] == 4
    refused = labeler(*base, "--stale", "fail")
    assert refused.returncode == 1 and "scoring refused (--stale fail)" in refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    clean = labeler("eval", str(corpus_file), str(golden_file), "--retriever", "bm25", "--stale", "fail")
    assert clean.returncode == 0, clean.stderr


def test_import_without_hashes_hashes_against_the_corpus_given(db_url):
    corpus = load_corpus(SAMPLE_CORPUS)
    with open_store(db_url) as store:
        from labeler_app.transfer import import_golden_set, read_for_import

        import_golden_set(store, read_for_import(SAMPLE_CORPUS / "golden.jsonl", corpus=corpus), corpus=corpus,
                          corpus_path=str(SAMPLE_CORPUS))
        q = store.golden.export().queries[0]
        assert q.extra["doc_hashes"] == {d: corpus.get(d).content_hash for d in q.relevance}
        assert store.collections.versions()[0].version == 1 and store.judgments.stale() == []


def test_another_corpus_under_the_golden_set_says_what_is_missing_and_runs_know_their_corpus(graded, tmp_path):
    store, corpus_file, v1, (q1, q2) = graded
    retriever = open_retriever(corpus_file, BM25)
    first = run_evaluation(store, ASHA, retriever, BM25, corpus_path=str(corpus_file)).record
    other_file = tmp_path / "other.jsonl"
    other_file.write_text(json.dumps({"_id": "x-1", "title": "Other", "text": "Unrelated text about ships."}) + "\n")
    other = load_corpus(other_file)
    store.collections.ensure(corpus_path=str(other_file), corpus=other)
    assert ("6 of 6 judged documents stale on 2 questions: 6 missing from the corpus, 0 edited since judged against "
            "corpus version 2") in gs.overview(store).stale
    second = run_evaluation(store, ASHA, open_retriever(other_file, BM25), BM25, corpus_path=str(other_file)).record
    assert second.summary["settings"]["stale"]["n_missing"] == 6  # every judged document, graded 3 or 0
    runs = store.runs.list()
    assert [r.corpus_version for r in runs] == [2, 1] and runs[0].corpus_path == str(other_file)
    assert "v2 of " + str(other_file) in runs[0].corpus_line
    note = cmp.compare_runs(store, first.run_id, second.run_id, ["ndcg@10"]).corpus_note
    assert note.startswith("The corpora differ: these runs searched different corpora")


def test_grades_from_before_versions_are_hashed_against_the_first_version_and_it_says_so(db_url):
    corpus = load_corpus(SAMPLE_CORPUS)
    with open_store(db_url) as store:
        qid = store.questions.add("How many vacation days?").query_id
        store.judgments.set(qid, EDITED, 2, annotator="asha")  # no document at hand: no hash (as before v8)
        assert store.judgments.list()[0].doc_hash is None
        store.collections.ensure(corpus_path=str(SAMPLE_CORPUS), corpus=corpus)
        assert store.judgments.list()[0].doc_hash == corpus.get(EDITED).content_hash
        assert store.collections.versions()[0].note == ("first version recorded; 1 judgments given before content "
                                                   "hashes were kept were hashed against this version")


def test_cli_export_marks_stale_documents(graded, tmp_path):
    from click.testing import CliRunner

    from labeler.golden import read_golden
    from labeler_edge.cli import cli

    store, corpus_file, _, (q1, q2) = graded
    store.collections.ensure(corpus_path=str(corpus_file), corpus=write_corpus(corpus_file, edit=EDITED))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, ["export", str(out), "--mark-stale", "--db", store.url])
    assert result.exit_code == 0, result.output
    assert "2 judged documents are stale" in result.output
    assert {q.query_id: q.extra["stale_docs"] for q in read_golden(out).queries} == {q1: [EDITED], q2: [EDITED]}


def test_another_source_is_recorded_as_another_corpus_and_an_edited_upload_as_a_version(graded, tmp_path):
    from labeler.corpus.versions import corpus_source

    store, corpus_file, v1, _ = graded
    other_file = tmp_path / "other.jsonl"
    other_file.write_text("".join(json.dumps({"_id": f"x-{i}", "title": "Other", "text": f"Ships {i}."}) + "\n"
                                  for i in range(10)))
    store.collections.ensure(corpus_path=str(other_file), corpus=load_corpus(other_file))
    latest = store.collections.versions()[0]
    assert latest.new_corpus and not latest.diff  # not "+10 added, −N deleted" of the handbook
    assert latest.note == f"another corpus ({other_file}, 10 documents), not a version of {corpus_file}"
    row = rc.version_rows(store)[0]
    assert (row["added"], row["deleted"], row["edited"]) == (None, None, None)
    assert len(store.judgments.stale()) == 6  # its judged documents are still missing from this corpus
    # Two uploads of one file (each kept in its own folder) are one source: the second is a version.
    uploads = tmp_path / "home" / "corpora"
    first, second = uploads / f"other-{'a' * 16}" / "other.jsonl", uploads / f"other-{'b' * 16}" / "other.jsonl"
    assert corpus_source(str(first)) == corpus_source(str(second)) == "upload:other.jsonl"
    first.parent.mkdir(parents=True)
    first.write_text(other_file.read_text().replace("Ships 0.", "Boats 0."))
    store.collections.ensure(corpus_path=str(first), corpus=load_corpus(first))
    assert store.collections.versions()[0].new_corpus  # an upload is another source than a server path
    second.parent.mkdir(parents=True)
    second.write_text(other_file.read_text() + json.dumps({"_id": "x-new", "text": "More ships."}) + "\n")
    store.collections.ensure(corpus_path=str(second), corpus=load_corpus(second))
    edited = store.collections.versions()[0]
    assert not edited.new_corpus and edited.note == "changed since version 3: +1 added, −0 deleted, ~1 edited"
    assert [v.version for v in store.collections.versions()] == [4, 3, 2, 1]


def test_recheck_unchanged_meaning_sets_aside_only_whitespace_punctuation_and_case():
    from labeler.corpus import Document

    old = Document("d", "Vacation days", "New employees get 25 days, after 1 year.", {"team": "HR"})
    same = lambda title, text, meta=None: rc.unchanged_meaning(old, Document("d", title, text, meta or {"team": "HR"}))  # noqa: E731
    assert same("VACATION  days", "new employees get 25 days after 1 year!\n")  # case, spaces, punctuation
    assert same("Vacation days", "New employees get 25 days — after 1 year.")
    assert not same("Vacation days", "New employees get 30 days, after 1 year.")  # a number
    assert not same("Vacation days", "New employees get 2.5 days, after 1 year.")  # a number's own punctuation
    assert not same("Vacation days", "New employees don't get 25 days, after 1 year.")  # a word added
    assert not same("Vacation days", "New employees get 25 days, after 1 year.", {"team": "IT"})  # metadata
    assert not same("Vacation", "New employees get 25 days, after 1 year.")  # the title
    assert not rc.unchanged_meaning(None, old) and not rc.unchanged_meaning(old, None)  # unknown or deleted


def test_recheck_confirm_all_unchanged_meaning_leaves_real_edits(graded):
    store, corpus_file, v1, (q1, q2) = graded
    lines = []
    for line in corpus_file.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        if doc["_id"] == EDITED:  # reflowed and re-cased: the same words and numbers
            doc["text"] = "  " + doc["text"].upper().replace(". ", ".\n\n")
        if doc["_id"] == DELETED:  # a real edit: a word added
            doc["text"] = "Not " + doc["text"]
        lines.append(json.dumps(doc, ensure_ascii=False))
    corpus_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    v2 = load_corpus(corpus_file)
    store.collections.ensure(corpus_path=str(corpus_file), corpus=v2)
    stale = store.judgments.stale()
    assert {(s.doc_id, s.reason) for s in stale} == {(EDITED, "edited"), (DELETED, "edited")}
    assert {(s.query_id, s.doc_id) for s in rc.trivially_edited(store, v2, "asha", stale)} == {(q1, EDITED), (q2, EDITED)}
    assert rc.trivially_edited(store, v2, "ben", stale) == []  # only my own grades
    message = rc.confirm_unchanged_meaning(store, ASHA, v2, stale)
    assert message.startswith("Confirmed 2 grades whose document changed only in whitespace")
    assert {(s.query_id, s.doc_id) for s in store.judgments.stale()} == {(q1, DELETED), (q2, DELETED)}
    assert rc.confirm_unchanged_meaning(store, ASHA, v2, store.judgments.stale()).startswith("No grade to confirm")
