"""The store: questions, judgments, consensus, golden import/export, runs, the revision counter.

Every test runs on SQLite and on PostgreSQL (conftest's `store`). Opening, paths and migrations:
test_storage_schema.py; the question index: test_storage_index.py.
"""
from __future__ import annotations

import json

import pytest

from conftest import SAMPLE, new_db_url, snapshot
from labeler.errors import ImportConflictError, InputError
from labeler.golden import GoldenQuery, GoldenSet, parse_golden_jsonl, read_golden, serialize_golden_jsonl
from labeler.status import Status
from labeler_storage import IMPORT_ANNOTATOR, open_store


# --------------------------------------------------------------------------- questions


def test_add_question_assigns_next_free_id(store):
    assert store.add_question("First?").query_id == "q-0001"
    store.add_question("Custom?", query_id="q-0041")
    assert store.add_question("Next?", query_type="lookup", author="asha").query_id == "q-0042"
    q = store.get_question("q-0042")
    assert (q.question, q.query_type, q.author) == ("Next?", "lookup", "asha")
    assert q.created_at.endswith("Z")


@pytest.mark.parametrize("text, query_id, message", [
    ("Again?", "a", "already exists"),
    ("   ", None, "question text is empty"),
    ("x", " a", "query id ' a' contains whitespace"),
    ("x", "a\u00a0b", "contains whitespace .U\\+00A0"),
    ("x", "#a", "starts with '#'"),
    ("x", "", "query id is empty"),
    ("x", "a\ud800", "lone surrogate"),
])
def test_add_question_refuses_duplicate_bad_id_and_empty_text(store, text, query_id, message):
    store.add_question("First?", query_id="a")
    with pytest.raises(InputError, match=f"{message}.*Hint:"):
        store.add_question(text, query_id=query_id)
    assert [q.query_id for q in store.question_index()] == ["a"]


def test_edit_question_changes_only_given_fields(store):
    store.add_question("Old?", query_id="a", query_type="t", notes="n")
    q = store.edit_question("a", text="New?", extra={"k": [1, "é"]})
    assert (q.question, q.query_type, q.notes, q.extra) == ("New?", "t", "n", {"k": [1, "é"]})
    with pytest.raises(InputError, match="no question 'zz'"):
        store.edit_question("zz", text="x")


def test_delete_question_removes_its_judgments(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 2, annotator="asha")
    assert store.delete_question("a") is True
    assert store.delete_question("a") is False
    assert store.judgments() == []


def test_a_deleted_questions_id_is_never_given_to_a_new_one(store):
    # A link to q-0002, or a tab still on it, must not open an unrelated question after a delete.
    assert [store.add_question(f"Q{i}?").query_id for i in range(3)] == ["q-0001", "q-0002", "q-0003"]
    assert store.delete_question("q-0003") and store.delete_question("q-0002")
    assert store.add_question("Next?").query_id == "q-0004"
    store.add_question("Imported?", query_id="q-0010")
    assert store.delete_question("q-0010") and store.delete_question("q-0004")
    assert store.add_question("Later?").query_id == "q-0011"
    store.add_question("Other?", collection="two")
    assert store.get_question("q-0001", collection="two") is not None  # numbers are per collection


def test_collections_are_separate(store):
    store.add_question("A?", query_id="a", collection="one")
    store.add_question("A?", query_id="a", collection="two")
    assert [c.name for c in store.list_collections()] == ["one", "two"]
    assert store.get_question("a", collection="three") is None
    with pytest.raises(InputError, match="no collection named 'three'.*known collections: one, two"):
        store.list_questions(collection="three")
    assert store.delete_collection("one") and [c.name for c in store.list_collections()] == ["two"]


# --------------------------------------------------------------------------- judgments


def test_set_judgment_keeps_one_row_per_annotator_and_document(store):
    store.add_question("A?", query_id="a")
    first = store.set_judgment("a", "d1", 1, annotator="asha")
    again = store.set_judgment("a", "d1", 3, annotator="asha", note="full answer")
    store.set_judgment("a", "d1", 2, annotator="ben")
    rows = store.judgments(query_id="a")
    assert [(j.annotator, j.grade, j.note) for j in rows] == [("asha", 3, "full answer"), ("ben", 2, "")]
    assert again.created_at == first.created_at
    assert store.judgments(annotator="ben")[0].grade == 2


@pytest.mark.parametrize("grade", [4, -1, True, "2", 2.0, None, 2 ** 63, -(2 ** 64)])
def test_set_judgment_refuses_grade_outside_0_to_3(store, grade):
    store.add_question("A?", query_id="a")
    with pytest.raises(InputError, match="grade must be an integer 0-3.*Hint:"):
        store.set_judgment("a", "d1", grade, annotator="asha")
    assert store.judgments() == []


@pytest.mark.parametrize("doc_id", ["d 1", "d\t1", "#d1", "", "d\u20281", None])
def test_set_judgment_refuses_doc_id_outside_the_id_policy(store, doc_id):
    store.add_question("A?", query_id="a")
    with pytest.raises(InputError, match="doc id.*Hint: ids must be non-empty"):
        store.set_judgment("a", doc_id, 1, annotator="asha")
    assert store.judgments() == []


@pytest.mark.parametrize("query_id, annotator, message", [
    ("a", " ", "an annotator name is required"),
    ("a", IMPORT_ANNOTATOR, "reserved for imported grades"),
    ("b", "asha", "no question 'b' in collection 'default'"),
])
def test_set_judgment_needs_annotator_and_question(store, query_id, annotator, message):
    store.add_question("A?", query_id="a")
    with pytest.raises(InputError, match=f"{message}.*Hint:"):
        store.set_judgment(query_id, "d1", 1, annotator=annotator)
    assert store.judgments() == []


def test_clear_judgment_removes_only_that_annotators_grade(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 1, annotator="asha")
    store.set_judgment("a", "d1", 2, annotator="ben")
    assert store.clear_judgment("a", "d1", annotator="asha") is True
    assert store.clear_judgment("a", "d1", annotator="asha") is False
    assert [j.annotator for j in store.judgments()] == ["ben"]


def test_unanswerable_is_each_annotators_own_vote(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 0, annotator="asha")
    store.set_judgment("a", "d2", 2, annotator="ben")
    # asha may say "unanswerable" although ben found d2 relevant: a disagreement, not an error.
    # The consensus stays answerable: d2's consensus grade is 2 (only ben graded it).
    assert not store.set_unanswerable("a", by="asha").unanswerable
    status = store.question_status("a")
    assert status.voters == ("asha",) and status.unanswerable_disagreement == {"asha": "unanswerable",
                                                                                "ben": "answerable"}
    with pytest.raises(InputError, match=r"d2 \(2\).*Hint: set your grades of those documents to 0"):
        store.set_unanswerable("a", by="ben")  # ben's own grade stands in his way
    with pytest.raises(InputError, match="you marked question 'a' unanswerable.*Hint: unmark"):
        store.set_judgment("a", "d3", 1, annotator="asha")
    store.set_judgment("a", "d3", 0, annotator="asha")  # "seen and rejected" is fine
    # asha grades d2 0: its consensus is floor((0 + 2) / 2) = 1, still relevant, still answerable.
    store.set_judgment("a", "d2", 0, annotator="asha")
    assert not store.get_question("a").unanswerable
    store.set_judgment("a", "d2", 1, annotator="ben")  # floor((0 + 1) / 2) = 0: nothing relevant left
    assert store.get_question("a").unanswerable and store.question_status("a").status == Status.UNANSWERABLE
    # ben withdrawing nothing and asha withdrawing her vote: answerable again (no vote left).
    assert not store.set_unanswerable("a", False, by="asha").unanswerable
    assert store.question_status("a").voters == ()
    store.set_judgment("a", "d3", 1, annotator="asha")
    with pytest.raises(InputError, match="annotator name is required"):
        store.set_unanswerable("a")


def test_unanswerable_votes_of_two_annotators_and_their_export(store):
    store.add_question("A?", query_id="a")
    store.set_unanswerable("a", by="asha")
    store.set_unanswerable("a", by="ben")
    store.set_unanswerable("a", by="ben")  # twice is once
    assert store.question_status("a").voters == ("asha", "ben") and store.get_question("a").unanswerable
    assert store.set_unanswerable("a", False, by="ben").unanswerable  # asha's vote still stands
    assert store.judged_by("ben") == {} and store.judged_by("asha") == {"a": 0}
    [g] = store.export_golden().queries
    assert g.unanswerable and g.extra["unanswerable_votes"] == {"asha": True}
    store.set_judgment("a", "d1", 0, annotator="ben")
    [g] = store.export_golden().queries
    assert g.extra["unanswerable_votes"] == {"asha": True, "ben": False}


def test_list_questions_reports_status(store):
    for qid in ("new", "started", "done", "unans"):
        store.add_question(f"{qid}?", query_id=qid)
    store.set_judgment("started", "d1", 0, annotator="asha")
    store.set_judgment("done", "d1", 2, annotator="asha")
    store.set_judgment("done", "d1", 0, annotator="ben")  # consensus floor(1.0) = 1: still relevant
    store.set_judgment("done", "d2", 0, annotator="ben")
    store.set_unanswerable("unans", by="asha")
    statuses = {s.question.query_id: s for s in store.list_questions()}
    assert {k: s.status for k, s in statuses.items()} == {
        "new": Status.NEW, "started": Status.STARTED, "done": Status.DONE, "unans": Status.UNANSWERABLE}
    assert all(type(s.status) is Status for s in statuses.values())
    done = statuses["done"]
    assert done.consensus == {"d1": 1, "d2": 0} and (done.n_judged, done.n_relevant) == (2, 1)
    assert done.annotators == ("asha", "ben") and done.grades_by("ben") == {"d1": 0, "d2": 0}
    # One question at a time gives the same answer; the index gives its summary.
    assert {k: store.question_status(k) for k in statuses} == statuses
    assert [(s.query_id, s.status, s.n_judged, s.annotators) for s in store.question_index(with_annotators=True)] == [
        ("new", "new", 0, ()), ("started", "started", 1, ("asha",)), ("done", "done", 2, ("asha", "ben")),
        ("unans", "unanswerable", 0, ())]
    assert store.question_status("nope") is None and store.question_status("new", collection="nope") is None


def test_consensus_and_agreement_from_store(store):
    store.add_question("A?", query_id="a")
    for doc, (g_asha, g_ben) in {"d1": (2, 2), "d2": (0, 0), "d3": (1, 3)}.items():
        store.set_judgment("a", doc, g_asha, annotator="asha")
        store.set_judgment("a", doc, g_ben, annotator="ben")
    result = store.consensus()
    assert result.qrels == {"a": {"d1": 2, "d2": 0, "d3": 2}}  # d3: floor(median(1, 3)) = 2
    [d] = result.disagreements
    assert (d.doc_id, dict(d.grades)) == ("d3", {"asha": 1, "ben": 3})
    report = store.agreement()
    # p_o = 2/3, p_e = 2/9 -> kappa = (2/3 - 2/9) / (7/9) = 4/7 (worked out in test_golden_agreement)
    assert report.pairs[0].kappa == pytest.approx(4 / 7)


def test_health_from_store(store):
    store.add_question("A?", query_id="a", query_type="lookup")
    store.add_question("B?", query_id="b", query_type="lookup")
    store.add_question("C?", query_id="c")
    store.set_judgment("a", "d1", 3, annotator="asha")
    store.set_unanswerable("c", by="asha")
    health = store.health()
    assert (health.n_questions, health.n_unanswerable, health.without_relevant) == (3, 1, ("b",))
    assert dict(health.per_type) == {"": 1, "lookup": 2}


# --------------------------------------------------------------------------- golden import / export


def test_import_export_import_export_is_byte_identical(request, db_engine, tmp_path):
    golden = read_golden(SAMPLE / "golden.jsonl")
    with open_store(new_db_url(request, db_engine, tmp_path / "one.db")) as one:
        one.import_golden(golden, corpus_fingerprint="sha256:corpus")
        first = serialize_golden_jsonl(one.export_golden())
    with open_store(new_db_url(request, db_engine, tmp_path / "two.db")) as two:
        two.import_golden(parse_golden_jsonl(first))
        second = serialize_golden_jsonl(two.export_golden())
        two.import_golden(parse_golden_jsonl(second))  # re-import into the same database
        third = serialize_golden_jsonl(two.export_golden())
    assert first.encode() == second.encode() == third.encode()
    # Everything the file said survives (the file had no fingerprint: the collection's is filled in).
    original = {q.query_id: q for q in golden}
    for q in parse_golden_jsonl(first):
        o = original[q.query_id]
        assert (q.question, q.relevance, q.annotators, q.notes, q.created_at, q.unanswerable) == (
            o.question, o.relevance, o.annotators, o.notes, o.created_at, o.unanswerable)
        assert q.corpus_fingerprint == "sha256:corpus"


def test_import_golden_keeps_unknown_fields_and_credits(store):
    text = ('{"query_id": "a", "question": "A?", "relevance": {"d1": 2}, "annotators": ["zoe", "asha"], '
            '"reviewer": {"round": 2}}\n')
    store.import_golden(parse_golden_jsonl(text))
    store.set_judgment("a", "d1", 2, annotator="ben")
    q = store.export_golden().get("a")
    assert q.annotators == ("zoe", "asha", "ben") and q.extra["reviewer"] == {"round": 2}
    [source] = store.grade_sources()  # the file's grades, under its own name
    assert q.extra["annotations"] == {source.name: {"d1": 2}, "ben": {"d1": 2}}
    assert store.agreement().annotators == ("ben",)  # the imported consensus is not a person


def test_import_golden_refuses_a_conflict_without_a_choice_and_changes_nothing(store):
    store.import_golden(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 1}}'))
    store.set_judgment("a", "d1", 1, annotator="asha")
    store.add_question("Only in the app?", query_id="b")
    before = snapshot(store)
    changed = parse_golden_jsonl('{"query_id": "a", "question": "A!", "relevance": {"d1": 3}}\n'
                                 '{"query_id": "c", "question": "C?"}')
    with pytest.raises(ImportConflictError, match=r"1 new, 0 identical, 1 conflicting \(a: other text, "
                                                  r"grades by asha differ, other imported grades\)"):
        store.import_golden(changed)
    assert snapshot(store) == before
    plan = store.plan_import(changed)
    assert (plan.new, plan.identical, [c.query_id for c in plan.conflicts]) == (("c",), (), ["a"])
    assert plan.conflicts[0].stored_text == "A?" and plan.conflicts[0].file_text == "A!"


def test_import_golden_skips_or_adds_conflicts_under_fresh_ids(store):
    store.add_question("Mine?", query_id="q-0001", author="asha")
    store.set_judgment("q-0001", "d1", 2, annotator="asha")
    text = '{"query_id": "q-0001", "question": "Theirs?", "relevance": {"d9": 1}}\n' \
           '{"query_id": "q-0002", "question": "Also theirs?"}\n'
    skipped = store.import_golden(parse_golden_jsonl(text), on_conflict="skip")
    assert (skipped.n_new, skipped.n_skipped, skipped.n_updated) == (1, 1, 0)
    assert store.get_question("q-0001").question == "Mine?"
    store.delete_question("q-0002")
    added = store.import_golden(parse_golden_jsonl(text), on_conflict="new")
    # q-0002 was deleted (its id is never given again) and the file holds q-0001, q-0002: q-0003 is free.
    assert (added.n_new, added.n_renamed) == (2, 1)
    assert store.get_question("q-0003").question == "Theirs?"
    assert store.get_question("q-0003").extra["source_id"] == "q-0001"
    assert {(j.query_id, j.doc_id, j.annotator, j.grade) for j in store.judgments()} == {
        ("q-0001", "d1", "asha", 2), ("q-0003", "d9", store.grade_sources()[-1].name, 1)}
    assert store.plan_import(parse_golden_jsonl(text)).line.endswith(
        "0 new, 1 identical, 1 conflicting (q-0001: other text, grades by asha differ, other imported grades).")


def test_import_golden_replace_keeps_the_replaced_text_and_grades_in_history(store):
    store.import_golden(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 1}}'))
    store.set_judgment("a", "d1", 1, annotator="asha")
    summary = store.import_golden(parse_golden_jsonl('{"query_id": "a", "question": "A!", "relevance": {"d1": 3}}'),
                                  on_conflict="replace", by="lead")
    assert (summary.n_new, summary.n_updated, summary.n_judgments) == (0, 1, 1)
    first, second = (s.name for s in store.grade_sources())
    assert {(j.doc_id, j.annotator): j.grade for j in store.judgments()} == {("d1", second): 3}
    q = store.get_question("a")
    assert q.question == "A!" and [(v["text"], v["replaced_by"]) for v in q.extra["replaced_versions"]] == [("A?", "lead")]
    replaced = {(e.doc_id, e.annotator, e.grade, e.change, e.replaced_by) for e in store.grade_history("a")
                if e.replaced_at}
    assert replaced == {("d1", first, 3, "import", "lead"), ("d1", "asha", 1, "import", "lead"),
                        ("d2", first, 1, "import", "lead")}


def test_import_golden_unanswerable_is_one_voice_beside_the_people_here(store):
    store.import_golden(parse_golden_jsonl('{"query_id": "new", "question": "N?", "unanswerable": true}\n'
                                           '{"query_id": "a", "question": "A?", "unanswerable": true}\n'))
    store.set_judgment("a", "d1", 2, annotator="asha")
    # The file's "unanswerable" is the import's vote: alone on "new" it decides; on "a" asha's
    # grade 2 keeps d1 relevant, so the consensus is answerable and the disagreement is shown.
    assert store.get_question("new").unanswerable and not store.get_question("a").unanswerable
    assert store.question_status("a").unanswerable_disagreement == {store.grade_sources()[0].name: "unanswerable",
                                                                    "asha": "answerable"}
    store.import_golden(parse_golden_jsonl('{"query_id": "new", "question": "N?"}'),  # the file changed its mind
                        on_conflict="replace")
    assert not store.get_question("new").unanswerable and store.question_status("new").voters == ()


def test_import_golden_is_one_transaction(store):
    store.add_question("Existing?", query_id="keep")
    before = snapshot(store)
    golden = GoldenSet(tuple(GoldenQuery(f"q{i}", "Q?", relevance={"d": 1}) for i in range(1200)))

    def fail_midway(done, total):
        if done >= 1000:
            raise RuntimeError("crash in the middle of the import")

    with pytest.raises(RuntimeError):
        store.import_golden(golden, progress=fail_midway)
    assert snapshot(store) == before


def test_export_golden_complete_only(store):
    store.add_question("A?", query_id="a")
    store.add_question("B?", query_id="b")
    store.set_judgment("a", "d1", 1, annotator="asha")
    assert [q.query_id for q in store.export_golden(complete_only=True)] == ["a"]
    assert [q.query_id for q in store.export_golden()] == ["a", "b"]


# --------------------------------------------------------------------------- runs


def test_save_list_load_runs(store):
    from labeler.config import RunConfig

    config = RunConfig(k=10)
    first = store.save_run(config, summary={"ndcg@10": 0.5}, per_query={"a": {"ndcg@10": 0.5}},
                           golden_hash="sha256:g", corpus_fingerprint="sha256:c", name="baseline")
    second = store.save_run({"model": "other"}, summary={"ndcg@10": 0.6}, per_query={}, golden_hash="sha256:g")
    assert first.config_hash == config.config_hash and RunConfig.from_dict(dict(first.config)) == config
    assert [r.run_id for r in store.list_runs()] == [second.run_id, first.run_id]
    loaded = store.load_run(first.run_id)
    assert (loaded.name, loaded.summary, loaded.per_query) == ("baseline", {"ndcg@10": 0.5}, {"a": {"ndcg@10": 0.5}})
    assert len(second.config_hash) == 12
    assert store.delete_run(first.run_id) and [r.run_id for r in store.list_runs()] == [second.run_id]
    with pytest.raises(InputError, match="no saved run"):
        store.load_run(first.run_id)


def test_save_run_accepts_numpy_values(store):
    import numpy as np

    run = store.save_run({"k": np.int64(10)}, summary={"ndcg@10": np.float64(0.25)},
                         per_query={"a": {"hits": np.array([1, 0]).tolist()}}, golden_hash="g")
    assert run.summary == {"ndcg@10": 0.25} and run.config == {"k": 10}
    assert json.dumps(dict(run.summary))


def test_ensure_collection_records_corpus(store):
    created = store.ensure_collection("handbook")
    assert (created.corpus_path, created.corpus_fingerprint) == (None, None)
    updated = store.ensure_collection("handbook", corpus_path="/c.jsonl", corpus_fingerprint="sha256:c")
    assert (updated.corpus_path, updated.corpus_fingerprint, updated.created_at) == (
        "/c.jsonl", "sha256:c", created.created_at)
    assert store.get_collection("handbook") == store.get_collection(collection="handbook") == updated
    assert store.add_question("Q?", collection="handbook").corpus_fingerprint == "sha256:c"


# --------------------------------------------------------------------------- the revision counter


WRITES = {
    "add_question": lambda s: s.add_question("B?"),
    "edit_question": lambda s: s.edit_question("a", notes="see §4"),
    "delete_question": lambda s: s.delete_question("a"),
    "set_unanswerable": lambda s: s.set_unanswerable("a", by="ben"),
    "set_judgment": lambda s: s.set_judgment("a", "d2", 1, annotator="ben"),
    "regrade": lambda s: s.set_judgment("a", "d1", 1, annotator="asha", note="on second thought"),
    "clear_judgment": lambda s: s.clear_judgment("a", "d1", annotator="asha"),
    "import_golden": lambda s: s.import_golden(parse_golden_jsonl('{"query_id": "i", "question": "I?"}')),
    "save_run": lambda s: s.save_run({"model": "m"}, summary={}, per_query={}, golden_hash="g"),
    "delete_run": lambda s: s.delete_run(s.list_runs()[0].run_id),
    "ensure_collection with a new corpus": lambda s: s.ensure_collection(corpus_fingerprint="sha256:new"),
}


@pytest.fixture
def labelled(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 0, annotator="asha")
    store.add_question("B?", query_id="b")
    store.set_judgment("b", "d1", 2, annotator="asha")
    store.save_run({"model": "m"}, summary={}, per_query={}, golden_hash="g")
    store.add_question("Elsewhere?", collection="other")
    return store


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_revision_is_bumped_by_each_write_and_seen_by_other_stores(labelled, write):
    before = labelled.revision()
    other_before = labelled.revision(collection="other")
    write(labelled)
    with open_store(labelled.url) as another:  # as another process would see it
        assert another.revision() == before + 1
        assert another.revision(collection="other") == other_before


NO_CHANGE = {
    "reads": lambda s: (s.list_questions(), s.question_index(), s.question_status("a"), s.export_golden(),
                        s.list_runs(), s.health(), s.agreement()),
    "clear_nothing": lambda s: s.clear_judgment("a", "d9", annotator="asha"),
    "edit_nothing": lambda s: s.edit_question("a"),
    "delete_missing": lambda s: (s.delete_question("zz"), s.delete_run(999)),
    "ensure_same_corpus": lambda s: s.ensure_collection(corpus_fingerprint=None),
}
REFUSED = {
    "bad_grade": lambda s: s.set_judgment("a", "d1", 7, annotator="asha"),
    "unanswerable_with_relevant": lambda s: s.set_unanswerable("b", by="asha"),
    "duplicate_question": lambda s: s.add_question("A?", query_id="a"),
    "bad_import": lambda s: s.import_golden(GoldenSet((GoldenQuery("a b", "Q?"),))),
}


@pytest.mark.parametrize("action", [*NO_CHANGE.values(), *REFUSED.values()],
                         ids=[*NO_CHANGE.keys(), *REFUSED.keys()])
def test_revision_is_unchanged_by_reads_no_ops_and_refused_writes(labelled, action):
    before = labelled.revision()
    try:
        action(labelled)
    except InputError:
        pass
    assert labelled.revision() == before


def test_revision_of_a_missing_collection_is_zero_and_creation_counts(store):
    assert store.revision(collection="new") == 0
    store.ensure_collection("new")
    assert store.revision(collection="new") == 1


# --------------------------------------------------------------------------- import checks


@pytest.mark.parametrize("query, message", [
    (GoldenQuery("a", "A?", relevance={"d1": 2 ** 63}), "fits 64 bits"),
    (GoldenQuery("a", "A?", relevance={"d1": -(2 ** 63) - 1}), "fits 64 bits"),
    (GoldenQuery("a", "A?", relevance={"d1": 1.5}), "fits 64 bits"),
    (GoldenQuery("a", "A?", relevance={"d1": True}), "fits 64 bits"),
    (GoldenQuery("a b", "A?"), "query id 'a b' contains whitespace"),
    (GoldenQuery("a", "A?", relevance={"#d": 1}), "doc id of question 'a'.*starts with '#'"),
    (GoldenQuery("a", "A?", unanswerable=True, relevance={"d": 1}), "marked unanswerable but with relevant"),
])
def test_import_golden_refuses_what_the_database_cannot_hold(store, query, message):
    store.add_question("Existing?", query_id="keep")
    before = snapshot(store)
    with pytest.raises(InputError, match=f"{message}.*Hint:"):
        store.import_golden(GoldenSet((GoldenQuery("ok", "Fine?", relevance={"d": 1}), query)))
    assert snapshot(store) == before


def test_import_golden_keeps_a_64_bit_scale(store):
    big = 2 ** 63 - 1
    store.import_golden(GoldenSet((GoldenQuery("a", "A?", relevance={"d1": big, "d2": -(2 ** 63)}),)))
    assert store.export_golden().get("a").relevance == {"d1": big, "d2": -(2 ** 63)}
    assert store.question_index()[0].status == Status.DONE


def test_collection_store_acts_on_its_collection_unless_a_call_names_another(store):
    from labeler_storage import CollectionStore

    demo = CollectionStore(store, "demo")
    demo.add_question("Demo?", query_id="d-1")
    store.add_question("Mine?", query_id="m-1")
    assert [q.query_id for q in demo.question_index()] == ["d-1"]
    assert [q.query_id for q in store.question_index()] == ["m-1"]
    assert demo.get_question("m-1", collection="default").question == "Mine?"
    assert demo.revision() == store.revision(collection="demo") and demo.accounts is store.accounts
    assert demo.cache_key != CollectionStore(store, "default").cache_key


def test_imported_grades_never_shift_the_consensus_of_grades_people_gave(store):
    store.import_golden(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 2}, '
                                           '"unanswerable": false}'))
    store.set_judgment("a", "d1", 0, annotator="asha")
    # d1: asha's 0 alone (the file's 3 beside it would have made floor(median(0, 3)) = 1); d2: only the file graded it.
    assert store.export_golden().get("a").relevance == {"d1": 0, "d2": 2}
    assert dict(store.question_status("a").consensus) == {"d1": 0, "d2": 2}
    assert store.consensus().qrels == {"a": {"d1": 0, "d2": 2}} and store.consensus().disagreements == ()
    store.set_judgment("a", "d2", 0, annotator="asha")
    [row] = store.question_index()
    assert str(row.status) == str(store.question_status("a").status) and store.question_status("a").n_relevant == 0
