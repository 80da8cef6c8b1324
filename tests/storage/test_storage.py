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
    assert store.questions.add("First?").query_id == "q-0001"
    store.questions.add("Custom?", query_id="q-0041")
    assert store.questions.add("Next?", query_type="lookup", author="asha").query_id == "q-0042"
    q = store.questions.get("q-0042")
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
    store.questions.add("First?", query_id="a")
    with pytest.raises(InputError, match=f"{message}.*Hint:"):
        store.questions.add(text, query_id=query_id)
    assert [q.query_id for q in store.questions.index()] == ["a"]


def test_edit_question_changes_only_given_fields(store):
    store.questions.add("Old?", query_id="a", query_type="t", notes="n")
    q = store.questions.edit("a", text="New?", extra={"k": [1, "é"]})
    assert (q.question, q.query_type, q.notes, q.extra) == ("New?", "t", "n", {"k": [1, "é"]})
    with pytest.raises(InputError, match="no question 'zz'"):
        store.questions.edit("zz", text="x")


def test_delete_question_removes_its_judgments(store):
    store.questions.add("A?", query_id="a")
    store.judgments.set("a", "d1", 2, annotator="asha")
    assert store.questions.delete("a") is True
    assert store.questions.delete("a") is False
    assert store.judgments.list() == []


def test_a_deleted_questions_id_is_never_given_to_a_new_one(store):
    # A link to q-0002, or a tab still on it, must not open an unrelated question after a delete.
    assert [store.questions.add(f"Q{i}?").query_id for i in range(3)] == ["q-0001", "q-0002", "q-0003"]
    assert store.questions.delete("q-0003") and store.questions.delete("q-0002")
    assert store.questions.add("Next?").query_id == "q-0004"
    store.questions.add("Imported?", query_id="q-0010")
    assert store.questions.delete("q-0010") and store.questions.delete("q-0004")
    assert store.questions.add("Later?").query_id == "q-0011"
    store.questions.add("Other?", collection="two")
    assert store.questions.get("q-0001", collection="two") is not None  # numbers are per collection


def test_collections_are_separate(store):
    store.questions.add("A?", query_id="a", collection="one")
    store.questions.add("A?", query_id="a", collection="two")
    assert [c.name for c in store.collections.list()] == ["one", "two"]
    assert store.questions.get("a", collection="three") is None
    with pytest.raises(InputError, match="no collection named 'three'.*known collections: one, two"):
        store.questions.list(collection="three")
    assert store.collections.delete("one") and [c.name for c in store.collections.list()] == ["two"]


# --------------------------------------------------------------------------- judgments


def test_set_judgment_keeps_one_row_per_annotator_and_document(store):
    store.questions.add("A?", query_id="a")
    first = store.judgments.set("a", "d1", 1, annotator="asha")
    again = store.judgments.set("a", "d1", 3, annotator="asha", note="full answer")
    store.judgments.set("a", "d1", 2, annotator="ben")
    rows = store.judgments.list(query_id="a")
    assert [(j.annotator, j.grade, j.note) for j in rows] == [("asha", 3, "full answer"), ("ben", 2, "")]
    assert again.created_at == first.created_at
    assert store.judgments.list(annotator="ben")[0].grade == 2


@pytest.mark.parametrize("grade", [4, -1, True, "2", 2.0, None, 2 ** 63, -(2 ** 64)])
def test_set_judgment_refuses_grade_outside_0_to_3(store, grade):
    store.questions.add("A?", query_id="a")
    with pytest.raises(InputError, match="grade must be an integer 0-3.*Hint:"):
        store.judgments.set("a", "d1", grade, annotator="asha")
    assert store.judgments.list() == []


@pytest.mark.parametrize("doc_id", ["d 1", "d\t1", "#d1", "", "d\u20281", None])
def test_set_judgment_refuses_doc_id_outside_the_id_policy(store, doc_id):
    store.questions.add("A?", query_id="a")
    with pytest.raises(InputError, match="doc id.*Hint: ids must be non-empty"):
        store.judgments.set("a", doc_id, 1, annotator="asha")
    assert store.judgments.list() == []


@pytest.mark.parametrize("query_id, annotator, message", [
    ("a", " ", "an annotator name is required"),
    ("a", IMPORT_ANNOTATOR, "reserved for imported grades"),
    ("b", "asha", "no question 'b' in collection 'default'"),
])
def test_set_judgment_needs_annotator_and_question(store, query_id, annotator, message):
    store.questions.add("A?", query_id="a")
    with pytest.raises(InputError, match=f"{message}.*Hint:"):
        store.judgments.set(query_id, "d1", 1, annotator=annotator)
    assert store.judgments.list() == []


def test_clear_judgment_removes_only_that_annotators_grade(store):
    store.questions.add("A?", query_id="a")
    store.judgments.set("a", "d1", 1, annotator="asha")
    store.judgments.set("a", "d1", 2, annotator="ben")
    assert store.judgments.clear("a", "d1", annotator="asha") is True
    assert store.judgments.clear("a", "d1", annotator="asha") is False
    assert [j.annotator for j in store.judgments.list()] == ["ben"]


def test_unanswerable_is_each_annotators_own_vote(store):
    store.questions.add("A?", query_id="a")
    store.judgments.set("a", "d1", 0, annotator="asha")
    store.judgments.set("a", "d2", 2, annotator="ben")
    # asha may say "unanswerable" although ben found d2 relevant: a disagreement, not an error.
    # The consensus stays answerable: d2's consensus grade is 2 (only ben graded it).
    assert not store.questions.set_unanswerable("a", by="asha").unanswerable
    status = store.questions.status("a")
    assert status.voters == ("asha",) and status.unanswerable_disagreement == {"asha": "unanswerable",
                                                                                "ben": "answerable"}
    with pytest.raises(InputError, match=r"d2 \(2\).*Hint: set your grades of those documents to 0"):
        store.questions.set_unanswerable("a", by="ben")  # ben's own grade stands in his way
    with pytest.raises(InputError, match="you marked question 'a' unanswerable.*Hint: unmark"):
        store.judgments.set("a", "d3", 1, annotator="asha")
    store.judgments.set("a", "d3", 0, annotator="asha")  # "seen and rejected" is fine
    # asha grades d2 0: its consensus is floor((0 + 2) / 2) = 1, still relevant, still answerable.
    store.judgments.set("a", "d2", 0, annotator="asha")
    assert not store.questions.get("a").unanswerable
    store.judgments.set("a", "d2", 1, annotator="ben")  # floor((0 + 1) / 2) = 0: nothing relevant left
    assert store.questions.get("a").unanswerable and store.questions.status("a").status == Status.UNANSWERABLE
    # ben withdrawing nothing and asha withdrawing her vote: answerable again (no vote left).
    assert not store.questions.set_unanswerable("a", False, by="asha").unanswerable
    assert store.questions.status("a").voters == ()
    store.judgments.set("a", "d3", 1, annotator="asha")
    with pytest.raises(InputError, match="annotator name is required"):
        store.questions.set_unanswerable("a")


def test_unanswerable_votes_of_two_annotators_and_their_export(store):
    store.questions.add("A?", query_id="a")
    store.questions.set_unanswerable("a", by="asha")
    store.questions.set_unanswerable("a", by="ben")
    store.questions.set_unanswerable("a", by="ben")  # twice is once
    assert store.questions.status("a").voters == ("asha", "ben") and store.questions.get("a").unanswerable
    assert store.questions.set_unanswerable("a", False, by="ben").unanswerable  # asha's vote still stands
    assert store.judgments.judged_by("ben") == {} and store.judgments.judged_by("asha") == {"a": 0}
    [g] = store.golden.export().queries
    assert g.unanswerable and g.extra["unanswerable_votes"] == {"asha": True}
    store.judgments.set("a", "d1", 0, annotator="ben")
    [g] = store.golden.export().queries
    assert g.extra["unanswerable_votes"] == {"asha": True, "ben": False}


def test_list_questions_reports_status(store):
    for qid in ("new", "started", "done", "unans"):
        store.questions.add(f"{qid}?", query_id=qid)
    store.judgments.set("started", "d1", 0, annotator="asha")
    store.judgments.set("done", "d1", 2, annotator="asha")
    store.judgments.set("done", "d1", 0, annotator="ben")  # consensus floor(1.0) = 1: still relevant
    store.judgments.set("done", "d2", 0, annotator="ben")
    store.questions.set_unanswerable("unans", by="asha")
    statuses = {s.question.query_id: s for s in store.questions.list()}
    assert {k: s.status for k, s in statuses.items()} == {
        "new": Status.NEW, "started": Status.STARTED, "done": Status.DONE, "unans": Status.UNANSWERABLE}
    assert all(type(s.status) is Status for s in statuses.values())
    done = statuses["done"]
    assert done.consensus == {"d1": 1, "d2": 0} and (done.n_judged, done.n_relevant) == (2, 1)
    assert done.annotators == ("asha", "ben") and done.grades_by("ben") == {"d1": 0, "d2": 0}
    # One question at a time gives the same answer; the index gives its summary.
    assert {k: store.questions.status(k) for k in statuses} == statuses
    assert [(s.query_id, s.status, s.n_judged, s.annotators) for s in store.questions.index(with_annotators=True)] == [
        ("new", "new", 0, ()), ("started", "started", 1, ("asha",)), ("done", "done", 2, ("asha", "ben")),
        ("unans", "unanswerable", 0, ())]
    assert store.questions.status("nope") is None and store.questions.status("new", collection="nope") is None


def test_consensus_and_agreement_from_store(store):
    store.questions.add("A?", query_id="a")
    for doc, (g_asha, g_ben) in {"d1": (2, 2), "d2": (0, 0), "d3": (1, 3)}.items():
        store.judgments.set("a", doc, g_asha, annotator="asha")
        store.judgments.set("a", doc, g_ben, annotator="ben")
    result = store.judgments.consensus()
    assert result.qrels == {"a": {"d1": 2, "d2": 0, "d3": 2}}  # d3: floor(median(1, 3)) = 2
    [d] = result.disagreements
    assert (d.doc_id, dict(d.grades)) == ("d3", {"asha": 1, "ben": 3})
    report = store.judgments.agreement()
    # p_o = 2/3, p_e = 2/9 -> kappa = (2/3 - 2/9) / (7/9) = 4/7 (worked out in test_golden_agreement)
    assert report.pairs[0].kappa == pytest.approx(4 / 7)


def test_health_from_store(store):
    store.questions.add("A?", query_id="a", query_type="lookup")
    store.questions.add("B?", query_id="b", query_type="lookup")
    store.questions.add("C?", query_id="c")
    store.judgments.set("a", "d1", 3, annotator="asha")
    store.questions.set_unanswerable("c", by="asha")
    health = store.golden.health()
    assert (health.n_questions, health.n_unanswerable, health.without_relevant) == (3, 1, ("b",))
    assert dict(health.per_type) == {"": 1, "lookup": 2}


# --------------------------------------------------------------------------- golden import / export


def test_import_export_import_export_is_byte_identical(request, db_engine, tmp_path):
    golden = read_golden(SAMPLE / "golden.jsonl")
    with open_store(new_db_url(request, db_engine, tmp_path / "one.db")) as one:
        one.golden.import_set(golden, corpus_fingerprint="sha256:corpus")
        first = serialize_golden_jsonl(one.golden.export())
    with open_store(new_db_url(request, db_engine, tmp_path / "two.db")) as two:
        two.golden.import_set(parse_golden_jsonl(first))
        second = serialize_golden_jsonl(two.golden.export())
        two.golden.import_set(parse_golden_jsonl(second))  # re-import into the same database
        third = serialize_golden_jsonl(two.golden.export())
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
    store.golden.import_set(parse_golden_jsonl(text))
    store.judgments.set("a", "d1", 2, annotator="ben")
    q = store.golden.export().get("a")
    assert q.annotators == ("zoe", "asha", "ben") and q.extra["reviewer"] == {"round": 2}
    [source] = store.sources.list()  # the file's grades, under its own name
    assert q.extra["annotations"] == {source.name: {"d1": 2}, "ben": {"d1": 2}}
    assert store.judgments.agreement().annotators == ("ben",)  # the imported consensus is not a person


def test_import_golden_refuses_a_conflict_without_a_choice_and_changes_nothing(store):
    store.golden.import_set(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 1}}'))
    store.judgments.set("a", "d1", 1, annotator="asha")
    store.questions.add("Only in the app?", query_id="b")
    before = snapshot(store)
    changed = parse_golden_jsonl('{"query_id": "a", "question": "A!", "relevance": {"d1": 3}}\n'
                                 '{"query_id": "c", "question": "C?"}')
    with pytest.raises(ImportConflictError, match=r"1 new, 0 identical, 1 conflicting \(a: other text, "
                                                  r"grades by asha differ, other imported grades\)"):
        store.golden.import_set(changed)
    assert snapshot(store) == before
    plan = store.golden.plan(changed)
    assert (plan.new, plan.identical, [c.query_id for c in plan.conflicts]) == (("c",), (), ["a"])
    assert plan.conflicts[0].stored_text == "A?" and plan.conflicts[0].file_text == "A!"


def test_import_golden_skips_or_adds_conflicts_under_fresh_ids(store):
    store.questions.add("Mine?", query_id="q-0001", author="asha")
    store.judgments.set("q-0001", "d1", 2, annotator="asha")
    text = '{"query_id": "q-0001", "question": "Theirs?", "relevance": {"d9": 1}}\n' \
           '{"query_id": "q-0002", "question": "Also theirs?"}\n'
    skipped = store.golden.import_set(parse_golden_jsonl(text), on_conflict="skip")
    assert (skipped.n_new, skipped.n_skipped, skipped.n_updated) == (1, 1, 0)
    assert store.questions.get("q-0001").question == "Mine?"
    store.questions.delete("q-0002")
    added = store.golden.import_set(parse_golden_jsonl(text), on_conflict="new")
    # q-0002 was deleted (its id is never given again) and the file holds q-0001, q-0002: q-0003 is free.
    assert (added.n_new, added.n_renamed) == (2, 1)
    assert store.questions.get("q-0003").question == "Theirs?"
    assert store.questions.get("q-0003").extra["source_id"] == "q-0001"
    assert {(j.query_id, j.doc_id, j.annotator, j.grade) for j in store.judgments.list()} == {
        ("q-0001", "d1", "asha", 2), ("q-0003", "d9", store.sources.list()[-1].name, 1)}
    assert store.golden.plan(parse_golden_jsonl(text)).line.endswith(
        "0 new, 1 identical, 1 conflicting (q-0001: other text, grades by asha differ, other imported grades).")


def test_import_golden_replace_keeps_the_replaced_text_and_grades_in_history(store):
    store.golden.import_set(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 1}}'))
    store.judgments.set("a", "d1", 1, annotator="asha")
    summary = store.golden.import_set(parse_golden_jsonl('{"query_id": "a", "question": "A!", "relevance": {"d1": 3}}'),
                                  on_conflict="replace", by="lead")
    assert (summary.n_new, summary.n_updated, summary.n_judgments) == (0, 1, 1)
    first, second = (s.name for s in store.sources.list())
    assert {(j.doc_id, j.annotator): j.grade for j in store.judgments.list()} == {("d1", second): 3}
    q = store.questions.get("a")
    assert q.question == "A!" and [(v["text"], v["replaced_by"]) for v in q.extra["replaced_versions"]] == [("A?", "lead")]
    replaced = {(e.doc_id, e.annotator, e.grade, e.change, e.replaced_by) for e in store.judgments.history("a")
                if e.replaced_at}
    assert replaced == {("d1", first, 3, "import", "lead"), ("d1", "asha", 1, "import", "lead"),
                        ("d2", first, 1, "import", "lead")}


def test_import_golden_unanswerable_is_one_voice_beside_the_people_here(store):
    store.golden.import_set(parse_golden_jsonl('{"query_id": "new", "question": "N?", "unanswerable": true}\n'
                                           '{"query_id": "a", "question": "A?", "unanswerable": true}\n'))
    store.judgments.set("a", "d1", 2, annotator="asha")
    # The file's "unanswerable" is the import's vote: alone on "new" it decides; on "a" asha's
    # grade 2 keeps d1 relevant, so the consensus is answerable and the disagreement is shown.
    assert store.questions.get("new").unanswerable and not store.questions.get("a").unanswerable
    assert store.questions.status("a").unanswerable_disagreement == {store.sources.list()[0].name: "unanswerable",
                                                                    "asha": "answerable"}
    store.golden.import_set(parse_golden_jsonl('{"query_id": "new", "question": "N?"}'),  # the file changed its mind
                        on_conflict="replace")
    assert not store.questions.get("new").unanswerable and store.questions.status("new").voters == ()


def test_import_golden_is_one_transaction(store):
    store.questions.add("Existing?", query_id="keep")
    before = snapshot(store)
    golden = GoldenSet(tuple(GoldenQuery(f"q{i}", "Q?", relevance={"d": 1}) for i in range(1200)))

    def fail_midway(done, total):
        if done >= 1000:
            raise RuntimeError("crash in the middle of the import")

    with pytest.raises(RuntimeError):
        store.golden.import_set(golden, progress=fail_midway)
    assert snapshot(store) == before


def test_export_golden_complete_only(store):
    store.questions.add("A?", query_id="a")
    store.questions.add("B?", query_id="b")
    store.judgments.set("a", "d1", 1, annotator="asha")
    assert [q.query_id for q in store.golden.export(complete_only=True)] == ["a"]
    assert [q.query_id for q in store.golden.export()] == ["a", "b"]


# --------------------------------------------------------------------------- runs


def test_save_list_load_runs(store):
    from labeler.config import RunConfig

    config = RunConfig(k=10)
    first = store.runs.save(config, summary={"ndcg@10": 0.5}, per_query={"a": {"ndcg@10": 0.5}},
                           golden_hash="sha256:g", corpus_fingerprint="sha256:c", name="baseline")
    second = store.runs.save({"model": "other"}, summary={"ndcg@10": 0.6}, per_query={}, golden_hash="sha256:g")
    assert first.config_hash == config.config_hash and RunConfig.from_dict(dict(first.config)) == config
    assert [r.run_id for r in store.runs.list()] == [second.run_id, first.run_id]
    loaded = store.runs.load(first.run_id)
    assert (loaded.name, loaded.summary, loaded.per_query) == ("baseline", {"ndcg@10": 0.5}, {"a": {"ndcg@10": 0.5}})
    assert len(second.config_hash) == 12
    assert store.runs.delete(first.run_id) and [r.run_id for r in store.runs.list()] == [second.run_id]
    with pytest.raises(InputError, match="no saved run"):
        store.runs.load(first.run_id)


def test_save_run_accepts_numpy_values(store):
    import numpy as np

    run = store.runs.save({"k": np.int64(10)}, summary={"ndcg@10": np.float64(0.25)},
                         per_query={"a": {"hits": np.array([1, 0]).tolist()}}, golden_hash="g")
    assert run.summary == {"ndcg@10": 0.25} and run.config == {"k": 10}
    assert json.dumps(dict(run.summary))


def test_ensure_collection_records_corpus(store):
    created = store.collections.ensure("handbook")
    assert (created.corpus_path, created.corpus_fingerprint) == (None, None)
    updated = store.collections.ensure("handbook", corpus_path="/c.jsonl", corpus_fingerprint="sha256:c")
    assert (updated.corpus_path, updated.corpus_fingerprint, updated.created_at) == (
        "/c.jsonl", "sha256:c", created.created_at)
    assert store.collections.get("handbook") == store.collections.get(collection="handbook") == updated
    assert store.questions.add("Q?", collection="handbook").corpus_fingerprint == "sha256:c"


# --------------------------------------------------------------------------- the revision counter


WRITES = {
    "add_question": lambda s: s.questions.add("B?"),
    "edit_question": lambda s: s.questions.edit("a", notes="see §4"),
    "delete_question": lambda s: s.questions.delete("a"),
    "set_unanswerable": lambda s: s.questions.set_unanswerable("a", by="ben"),
    "set_judgment": lambda s: s.judgments.set("a", "d2", 1, annotator="ben"),
    "regrade": lambda s: s.judgments.set("a", "d1", 1, annotator="asha", note="on second thought"),
    "clear_judgment": lambda s: s.judgments.clear("a", "d1", annotator="asha"),
    "import_golden": lambda s: s.golden.import_set(parse_golden_jsonl('{"query_id": "i", "question": "I?"}')),
    "save_run": lambda s: s.runs.save({"model": "m"}, summary={}, per_query={}, golden_hash="g"),
    "delete_run": lambda s: s.runs.delete(s.runs.list()[0].run_id),
    "ensure_collection with a new corpus": lambda s: s.collections.ensure(corpus_fingerprint="sha256:new"),
}


@pytest.fixture
def labelled(store):
    store.questions.add("A?", query_id="a")
    store.judgments.set("a", "d1", 0, annotator="asha")
    store.questions.add("B?", query_id="b")
    store.judgments.set("b", "d1", 2, annotator="asha")
    store.runs.save({"model": "m"}, summary={}, per_query={}, golden_hash="g")
    store.questions.add("Elsewhere?", collection="other")
    return store


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_revision_is_bumped_by_each_write_and_seen_by_other_stores(labelled, write):
    before = labelled.collections.revision()
    other_before = labelled.collections.revision(collection="other")
    write(labelled)
    with open_store(labelled.url) as another:  # as another process would see it
        assert another.collections.revision() == before + 1
        assert another.collections.revision(collection="other") == other_before


NO_CHANGE = {
    "reads": lambda s: (s.questions.list(), s.questions.index(), s.questions.status("a"), s.golden.export(),
                        s.runs.list(), s.golden.health(), s.judgments.agreement()),
    "clear_nothing": lambda s: s.judgments.clear("a", "d9", annotator="asha"),
    "edit_nothing": lambda s: s.questions.edit("a"),
    "delete_missing": lambda s: (s.questions.delete("zz"), s.runs.delete(999)),
    "ensure_same_corpus": lambda s: s.collections.ensure(corpus_fingerprint=None),
}
REFUSED = {
    "bad_grade": lambda s: s.judgments.set("a", "d1", 7, annotator="asha"),
    "unanswerable_with_relevant": lambda s: s.questions.set_unanswerable("b", by="asha"),
    "duplicate_question": lambda s: s.questions.add("A?", query_id="a"),
    "bad_import": lambda s: s.golden.import_set(GoldenSet((GoldenQuery("a b", "Q?"),))),
}


@pytest.mark.parametrize("action", [*NO_CHANGE.values(), *REFUSED.values()],
                         ids=[*NO_CHANGE.keys(), *REFUSED.keys()])
def test_revision_is_unchanged_by_reads_no_ops_and_refused_writes(labelled, action):
    before = labelled.collections.revision()
    try:
        action(labelled)
    except InputError:
        pass
    assert labelled.collections.revision() == before


def test_revision_of_a_missing_collection_is_zero_and_creation_counts(store):
    assert store.collections.revision(collection="new") == 0
    store.collections.ensure("new")
    assert store.collections.revision(collection="new") == 1


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
    store.questions.add("Existing?", query_id="keep")
    before = snapshot(store)
    with pytest.raises(InputError, match=f"{message}.*Hint:"):
        store.golden.import_set(GoldenSet((GoldenQuery("ok", "Fine?", relevance={"d": 1}), query)))
    assert snapshot(store) == before


def test_import_golden_keeps_a_64_bit_scale(store):
    big = 2 ** 63 - 1
    store.golden.import_set(GoldenSet((GoldenQuery("a", "A?", relevance={"d1": big, "d2": -(2 ** 63)}),)))
    assert store.golden.export().get("a").relevance == {"d1": big, "d2": -(2 ** 63)}
    assert store.questions.index()[0].status == Status.DONE


def test_collection_store_acts_on_its_collection_unless_a_call_names_another(store):
    from labeler_storage import CollectionStore

    demo = CollectionStore(store, "demo")
    demo.questions.add("Demo?", query_id="d-1")
    store.questions.add("Mine?", query_id="m-1")
    assert [q.query_id for q in demo.questions.index()] == ["d-1"]
    assert [q.query_id for q in store.questions.index()] == ["m-1"]
    assert demo.questions.get("m-1", collection="default").question == "Mine?"
    assert demo.collections.revision() == store.collections.revision(collection="demo") and demo.accounts is store.accounts
    assert demo.cache_key != CollectionStore(store, "default").cache_key


def test_imported_grades_never_shift_the_consensus_of_grades_people_gave(store):
    store.golden.import_set(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 2}, '
                                           '"unanswerable": false}'))
    store.judgments.set("a", "d1", 0, annotator="asha")
    # d1: asha's 0 alone (the file's 3 beside it would have made floor(median(0, 3)) = 1); d2: only the file graded it.
    assert store.golden.export().get("a").relevance == {"d1": 0, "d2": 2}
    assert dict(store.questions.status("a").consensus) == {"d1": 0, "d2": 2}
    assert store.judgments.consensus().qrels == {"a": {"d1": 0, "d2": 2}} and store.judgments.consensus().disagreements == ()
    store.judgments.set("a", "d2", 0, annotator="asha")
    [row] = store.questions.index()
    assert str(row.status) == str(store.questions.status("a").status) and store.questions.status("a").n_relevant == 0
