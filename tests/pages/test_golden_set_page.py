"""AppTest: the Golden set page — empty database, table and filters, edit, delete with confirmation,
health; and the functions behind its downloads and upload (AppTest cannot read download bytes)."""
from __future__ import annotations

import io
import json
import zipfile

from browser_support import app_home, open_app, sample_embeddings, texts  # noqa: F401 - fixtures

from labeler_app import golden_set as gs
from labeler_app.access import local_actor
from conftest import import_demo
from labeler.corpus import load_corpus
from labeler.errors import GoldenFormatError
from labeler.golden import parse_golden_jsonl
from labeler.paths import SAMPLE_CORPUS
from labeler_storage.store import open_store

PAGE = "../pages/golden_set.py"


def load_demo():
    store = open_store()
    corpus = load_corpus(SAMPLE_CORPUS)
    import_demo(store)
    return store, corpus


def test_golden_set_empty_database_explains_and_shows_zero_health(app_home):
    at = open_app(PAGE)
    assert any("No questions yet" in m for m in texts(at.info))
    assert at.metric[0].value == "0"
    downloads = at.get("download_button")
    assert len(downloads) == 3 and all(d.proto.disabled for d in downloads)  # nothing to download yet


def test_golden_set_table_filter_and_health(app_home):
    load_demo()
    at = open_app(PAGE)
    table = at.dataframe[1].value if len(at.dataframe) > 1 else at.dataframe[0].value
    assert len(table) == 62
    assert at.metric[0].value == "62"
    assert at.metric[1].value == "15%"  # 9 unanswerable of 62, inside the 10-20% target
    assert any(c.startswith("Likely complete: 0 of 62 questions") for c in texts(at.caption))  # imported grades
    at.text_input(key="golden_filter").input("vacation").run()
    rows = gs.filter_rows(gs.overview(open_store()).rows, text="vacation")
    assert 0 < len(rows) < 62
    assert any(f"{len(rows)} of 62 questions" in c for c in texts(at.caption))


def test_golden_set_edit_question(app_home):
    load_demo()
    at = open_app(PAGE)
    at.selectbox(key="golden_edit_id").set_value("q-0002").run()
    at.text_area(key="edit_text_q-0002").input("What is the nightly hotel limit on business trips?")
    at.text_input(key="edit_type_q-0002").input("policy-lookup")
    at.button(key="FormSubmitter:edit-q-0002-Save changes").click().run()
    assert not at.exception
    assert open_store().questions.get("q-0002").question == "What is the nightly hotel limit on business trips?"
    assert any("Saved q-0002" in m for m in texts(at.success))


def test_golden_set_save_from_a_stale_form_changes_nothing(app_home):
    # Pick q-0003 and, before the page has caught up, paste into the form still showing q-0001
    # and save: one request carries the new pick and q-0001's form. It used to save q-0001.
    load_demo()
    at = open_app(PAGE)
    before = open_store().questions.get("q-0001").question
    at.selectbox(key="golden_edit_id").set_value("q-0003")
    at.text_area(key="edit_text_q-0001").input("Pasted text meant for q-0003")
    at.button(key="FormSubmitter:edit-q-0001-Save changes").click().run()
    assert not at.exception
    assert open_store().questions.get("q-0001").question == before
    assert "Pasted" not in open_store().questions.get("q-0003").question
    [warning] = texts(at.warning)
    assert warning.startswith("Not saved: that form was q-0001's, but q-0003 is picked now")
    assert at.session_state["golden_edit_id"] == "q-0003" and not at.success


def test_an_unchanged_save_just_after_a_pick_says_the_typing_may_have_been_replaced(app_home):
    # Typed within a moment of picking, the text went into the form the page then replaced: the save
    # found the new form unchanged. Said as such, not as a bare "Nothing to save".
    load_demo()
    at = open_app(PAGE)
    at.selectbox(key="golden_edit_id").set_value("q-0002").run()
    at.button(key="FormSubmitter:edit-q-0002-Save changes").click().run()
    [info] = [m for m in texts(at.info) if m.startswith("Nothing to save")]
    assert "its form was still loading and replaced your text: type it again" in info
    value, label, _ = at.session_state["_shown_golden_edit_id"]
    at.session_state["_shown_golden_edit_id"] = (value, label, 0.0)  # picked long ago
    at.button(key="FormSubmitter:edit-q-0002-Save changes").click().run()
    [info] = [m for m in texts(at.info) if m.startswith("Nothing to save")]
    assert "type it again" not in info


def test_golden_set_delete_asks_for_confirmation(app_home):
    load_demo()
    at = open_app(PAGE)
    at.selectbox(key="golden_edit_id").set_value("q-0003").run()
    at.button(key="delete-question").click().run()
    assert open_store().questions.get("q-0003") is not None  # not yet: only asked
    assert any("cannot be undone" in w for w in texts(at.warning))
    at.button(key="cancel-delete").click().run()
    assert open_store().questions.get("q-0003") is not None
    at.button(key="delete-question").click().run()
    at.button(key="confirm-delete").click().run()
    assert not at.exception
    assert open_store().questions.get("q-0003") is None
    assert any("Deleted q-0003" in m for m in texts(at.success))


def test_golden_downloads_jsonl_trec_and_beir(app_home):
    store, _ = load_demo()
    files = gs.golden_downloads(store, local_actor("tester"))
    jsonl, name, _ = files["jsonl"]
    golden = parse_golden_jsonl(jsonl.decode("utf-8"))
    assert name == "golden.jsonl" and len(golden) == 62
    qrels, _, _ = files["trec"]
    first = qrels.decode().splitlines()[0].split()
    assert len(first) == 4 and first[1] == "0"
    beir, _, _ = files["beir"]
    with zipfile.ZipFile(io.BytesIO(beir)) as zf:
        assert sorted(zf.namelist()) == ["qrels/test.tsv", "queries.jsonl"]
        assert zf.read("qrels/test.tsv").decode().startswith("query-id\tcorpus-id\tscore")


def test_golden_upload_lists_every_bad_line_and_imports_nothing(app_home):
    store = open_store()
    corpus = load_corpus(SAMPLE_CORPUS)
    bad = io.BytesIO("\n".join([
        json.dumps({"query_id": "a", "question": "ok?", "relevance": {"leave-001": 2}}),
        json.dumps({"query_id": "b", "question": "", "relevance": {}}),
        json.dumps({"query_id": "c", "question": "x?", "relevance": {"no-such-doc": 1}}),
        "{broken",
    ]).encode())
    bad.name = "mine.jsonl"
    try:
        gs.import_golden_file(store, local_actor("tester"), bad, corpus, str(SAMPLE_CORPUS))
    except GoldenFormatError as exc:
        assert [p.line for p in exc.problems] == [2, 3, 4]
        assert exc.path == "mine.jsonl"
    else:
        raise AssertionError("a bad file was imported")
    assert store.collections.get() is None or store.questions.list() == []


def test_golden_upload_good_file_imports(app_home):
    store = open_store()
    corpus = load_corpus(SAMPLE_CORPUS)
    good = io.BytesIO((SAMPLE_CORPUS / "golden.jsonl").read_bytes())
    good.name = "golden.jsonl"
    summary = gs.import_golden_file(store, local_actor("tester"), good, corpus, str(SAMPLE_CORPUS))
    assert summary.n_questions == 62 and len(store.questions.list()) == 62


def test_upload_hints_name_the_checkboxes_not_the_cli_flags():
    from labeler.golden.validation import HINT_SCALE

    assert "Keep the file's own grade scale" in gs.upload_hint(HINT_SCALE) and "--" not in gs.upload_hint(HINT_SCALE)


def _imported_and_people(store):
    """q1: imported d1:3 and d2:1; alice grades d1 0 (differs from the import) and d2 1 (agrees).
    q2: no import; ann and bob grade d5 2 and 0 (a disagreement between people)."""
    from labeler.golden import GoldenQuery, GoldenSet

    store.golden.import_set(GoldenSet((GoldenQuery("q1", "How many vacation days?", relevance={"d1": 3, "d2": 1}),)))
    store.judgments.set("q1", "d1", 0, annotator="alice")
    store.judgments.set("q1", "d2", 1, annotator="alice")
    store.questions.add("Who approves travel?", query_id="q2")
    store.judgments.set("q2", "d5", 2, annotator="ann")
    store.judgments.set("q2", "d5", 0, annotator="bob")


def test_golden_overview_separates_disagreements_with_the_import_from_those_between_people(app_home):
    from labeler_app import adjudicate as adj

    store = open_store()
    _imported_and_people(store)
    view = gs.overview(store)
    assert [(d["query_id"], d["doc_id"], d["grades"]) for d in view.disagreements] == [("q2", "d5", "ann:2, bob:0")]
    assert view.n_disagreements == 1
    # the exported grade of q1/d1 is alice's 0: an imported grade counts only where no person graded
    [source] = store.sources.list()  # each imported grade is shown with the file it came from
    assert list(view.import_differences) == [{"query_id": "q1", "doc_id": "d1", "imported": f"{source.name}:3",
                                              "annotators": "alice:0", "consensus": 0}]
    assert view.n_with_import == 1
    note = "Imported grades are not counted: 2 documents carry one; on 1 of them an annotator's grade differs from it."
    assert view.agreement.startswith("Agreement between annotators over 1 shared judgments") and note in view.agreement
    assert adj.imported_note(store.judgments.ratings()) == note
    assert [(d.query_id, d.doc_id) for d in adj.disputes(store, local_actor("tester"))] == [("q2", "d5")]  # the same people, the same queue


def test_golden_set_and_adjudicate_pages_agree_and_say_imported_grades_are_not_counted(app_home):
    store, _ = load_demo()
    q = store.golden.export().queries[0]
    doc = next(d for d, g in q.relevance.items() if g >= 1)
    store.judgments.set(q.query_id, doc, 0, annotator="alice")  # alice alone, against the import
    at = open_app(PAGE)
    assert {m.label: m.value for m in at.metric}["Annotator disagreements"] == "0"  # between people: none
    assert any(c.startswith("+ 1 with the imported grades") for c in texts(at.caption))
    assert any("Imported grades are not counted" in c and "on 1 of them" in c for c in texts(at.caption))
    adjudicate = open_app("../pages/adjudicate.py")
    assert any("No disagreements between annotators to adjudicate" in m for m in texts(adjudicate.info))
    assert any("Imported grades are not counted" in c and "on 1 of them" in c and "Golden set page" in c
               for c in texts(adjudicate.caption))
