"""The store: schema and migrations, questions, judgments, consensus, golden import/export, runs."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from conftest import SAMPLE, snapshot
from labeler.errors import InputError, StorageError
from labeler.golden import GoldenQuery, GoldenSet, parse_golden_jsonl, read_golden, serialize_golden_jsonl
from storage import IMPORT_ANNOTATOR, default_db_url, open_store
from storage import schema as S


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "labeler.db") as s:
        yield s




# --------------------------------------------------------------------------- opening and schema


def test_default_db_url_is_under_labeler_home(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_HOME", str(tmp_path / "home"))
    assert default_db_url() == "sqlite:///" + str(tmp_path / "home" / "labeler.db")
    with open_store() as s:
        s.add_question("Where is the office?")
    assert (tmp_path / "home" / "labeler.db").is_file()


def test_open_store_sets_wal_foreign_keys_and_busy_timeout(store):
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 30_000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_schema_migrations_build_exactly_the_schema_constant(store):
    inspector = sa.inspect(store.engine)
    assert set(inspector.get_table_names()) == set(S.SCHEMA.tables)
    for name, table in S.SCHEMA.tables.items():
        assert {c["name"] for c in inspector.get_columns(name)} == {c.name for c in table.columns}, name
        assert {i["name"] for i in inspector.get_indexes(name)} >= {i.name for i in table.indexes}, name
    assert store.schema_version() == S.LATEST_VERSION == 3


V1_SQL = """
CREATE TABLE collections (id INTEGER NOT NULL, name TEXT NOT NULL, corpus_path TEXT,
    corpus_fingerprint TEXT, created_at TEXT NOT NULL, PRIMARY KEY (id), UNIQUE (name));
CREATE TABLE questions (id INTEGER NOT NULL, collection_id INTEGER NOT NULL, query_id TEXT NOT NULL,
    text TEXT NOT NULL, query_type TEXT DEFAULT '' NOT NULL, unanswerable BOOLEAN DEFAULT 0 NOT NULL,
    notes TEXT DEFAULT '' NOT NULL, author TEXT DEFAULT '' NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, extra TEXT DEFAULT '{}' NOT NULL, PRIMARY KEY (id),
    CONSTRAINT uq_questions_collection_query UNIQUE (collection_id, query_id),
    FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE);
CREATE TABLE runs (id INTEGER NOT NULL, collection_id INTEGER NOT NULL, config TEXT NOT NULL,
    config_hash TEXT NOT NULL, golden_hash TEXT NOT NULL, corpus_fingerprint TEXT, summary TEXT NOT NULL,
    per_query TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id),
    FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE);
CREATE INDEX ix_runs_collection_created ON runs (collection_id, created_at);
CREATE TABLE judgments (id INTEGER NOT NULL, question_id INTEGER NOT NULL, doc_id TEXT NOT NULL,
    grade INTEGER NOT NULL, annotator TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (id), CONSTRAINT uq_judgments_question_doc_annotator UNIQUE (question_id, doc_id, annotator),
    FOREIGN KEY(question_id) REFERENCES questions (id) ON DELETE CASCADE);
CREATE TABLE schema_version (version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL,
    PRIMARY KEY (version));
INSERT INTO schema_version VALUES (1, 'base tables: collections, questions, judgments, runs', '2026-01-02T03:04:05Z');
INSERT INTO collections VALUES (1, 'handbook', 'corpus.jsonl', 'sha256:old', '2026-01-02T03:04:05Z');
INSERT INTO questions VALUES (1, 1, 'q-0001', 'How many vacation days?', 'numeric-fact', 0, 'see §4', 'asha',
    '2026-01-02T03:04:05Z', '2026-01-02T03:05:00Z', '{"source": "slack"}');
INSERT INTO questions VALUES (2, 1, 'q-0002', 'Who is on Mars?', '', 1, '', 'ben',
    '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z', '{}');
INSERT INTO judgments VALUES (1, 1, 'leave-001', 3, 'asha', '2026-01-02T03:06:00Z', '2026-01-02T03:06:00Z');
INSERT INTO judgments VALUES (2, 1, 'leave-001', 2, 'ben', '2026-01-02T03:07:00Z', '2026-01-02T03:07:00Z');
INSERT INTO judgments VALUES (3, 1, 'leave-002', 0, 'asha', '2026-01-02T03:06:30Z', '2026-01-02T03:06:30Z');
INSERT INTO runs VALUES (1, 1, '{"model": "m"}', 'abc123', 'sha256:g', 'sha256:old', '{"ndcg@10": 0.5}',
    '{"q-0001": {"ndcg@10": 0.5}}', '2026-01-02T04:00:00Z');
"""


def test_open_store_adopts_v1_database_with_data_intact(tmp_path):
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.executescript(V1_SQL)
    con.close()
    before = snapshot(db)

    with open_store(db) as s:
        assert s.schema_version() == 3
        statuses = s.list_questions(collection="handbook")
        assert [x.question.query_id for x in statuses] == ["q-0001", "q-0002"]
        q1 = statuses[0]
        assert q1.question.extra == {"source": "slack"} and q1.question.notes == "see §4"
        assert q1.question.credited_annotators == () and q1.question.corpus_fingerprint is None  # v3 defaults
        assert q1.consensus == {"leave-001": 2, "leave-002": 0}  # floor(median(3, 2)) = 2
        assert all(j.note == "" for j in q1.judgments)  # v2 default
        assert statuses[1].status == "unanswerable"
        [run] = s.list_runs(collection="handbook")
        assert run.name == "" and s.load_run(run.run_id).per_query == {"q-0001": {"ndcg@10": 0.5}}
        # The upgraded database takes writes through the new columns.
        s.set_judgment("q-0001", "leave-002", 1, annotator="ben", note="partly", collection="handbook")
        golden = s.export_golden(collection="handbook")
        assert golden.get("q-0001").corpus_fingerprint == "sha256:old"

    after = snapshot(db)
    assert [r[0] for r in after["schema_version"]] == [1, 2, 3]
    # Every old row is still there, its old columns unchanged (new columns appended at the end).
    for table in ("collections", "runs"):
        assert [row[:len(before[table][0])] for row in after[table]] == before[table]
    old_judgments = {r[0]: r for r in before["judgments"]}
    assert all(row[:7] == old_judgments[row[0]] for row in after["judgments"] if row[0] in old_judgments)


def test_open_store_is_idempotent(tmp_path):
    open_store(tmp_path / "a.db").close()
    with open_store(tmp_path / "a.db") as s:
        assert s.migrate() == [] and s.schema_version() == 3


def test_open_store_refuses_newer_schema(tmp_path):
    db = tmp_path / "new.db"
    open_store(db).close()
    con = sqlite3.connect(db)
    con.execute("INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01T00:00:00Z')")
    con.commit()
    con.close()
    with pytest.raises(StorageError, match="schema version 99.*Hint: upgrade"):
        open_store(db)


def test_open_store_refuses_foreign_database_and_garbage_file(tmp_path):
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE questions (x)")
    con.close()
    with pytest.raises(StorageError, match="no schema_version"):
        open_store(db)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError, match="Hint:"):
        open_store(junk)


def test_open_store_bad_url_is_storage_error():
    with pytest.raises(StorageError, match="Hint:"):
        open_store("nosuchdialect://x/y")


# --------------------------------------------------------------------------- questions


def test_add_question_assigns_next_free_id(store):
    assert store.add_question("First?").query_id == "q-0001"
    store.add_question("Custom?", query_id="q-0041")
    assert store.add_question("Next?", query_type="lookup", author="asha").query_id == "q-0042"
    q = store.get_question("q-0042")
    assert (q.text, q.query_type, q.author) == ("Next?", "lookup", "asha")
    assert q.created_at.endswith("Z")


def test_add_question_refuses_duplicate_id_and_empty_text(store):
    store.add_question("First?", query_id="a")
    with pytest.raises(InputError, match="already exists"):
        store.add_question("Again?", query_id="a")
    with pytest.raises(InputError, match="empty"):
        store.add_question("   ")
    with pytest.raises(InputError, match="leading or trailing"):
        store.add_question("x", query_id=" a")


def test_edit_question_changes_only_given_fields(store):
    store.add_question("Old?", query_id="a", query_type="t", notes="n")
    q = store.edit_question("a", text="New?", extra={"k": [1, "é"]})
    assert (q.text, q.query_type, q.notes, q.extra) == ("New?", "t", "n", {"k": [1, "é"]})
    with pytest.raises(InputError, match="no question 'zz'"):
        store.edit_question("zz", text="x")


def test_delete_question_removes_its_judgments(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 2, annotator="asha")
    assert store.delete_question("a") is True
    assert store.delete_question("a") is False
    assert store.judgments() == []


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


@pytest.mark.parametrize("grade", [4, -1, True, "2", 2.0, None])
def test_set_judgment_refuses_grade_outside_0_to_3(store, grade):
    store.add_question("A?", query_id="a")
    with pytest.raises(InputError, match="grade must be an integer 0-3.*Hint:"):
        store.set_judgment("a", "d1", grade, annotator="asha")


def test_set_judgment_needs_annotator_and_question(store):
    store.add_question("A?", query_id="a")
    with pytest.raises(InputError, match="annotator"):
        store.set_judgment("a", "d1", 1, annotator=" ")
    with pytest.raises(InputError, match="reserved"):
        store.set_judgment("a", "d1", 1, annotator=IMPORT_ANNOTATOR)
    with pytest.raises(InputError, match="no question 'b'"):
        store.set_judgment("b", "d1", 1, annotator="asha")


def test_clear_judgment_removes_only_that_annotators_grade(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 1, annotator="asha")
    store.set_judgment("a", "d1", 2, annotator="ben")
    assert store.clear_judgment("a", "d1", annotator="asha") is True
    assert store.clear_judgment("a", "d1", annotator="asha") is False
    assert [j.annotator for j in store.judgments()] == ["ben"]


def test_set_unanswerable_refused_while_a_document_is_relevant(store):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 0, annotator="asha")
    store.set_judgment("a", "d2", 2, annotator="ben")
    with pytest.raises(InputError, match=r"d2 \(ben: 2\).*Hint: set those grades to 0"):
        store.set_unanswerable("a")
    store.set_judgment("a", "d2", 0, annotator="ben")
    assert store.set_unanswerable("a").unanswerable
    store.set_judgment("a", "d3", 0, annotator="asha")  # "seen and rejected" is fine
    with pytest.raises(InputError, match="marked unanswerable.*Hint: unmark"):
        store.set_judgment("a", "d3", 1, annotator="asha")
    assert not store.set_unanswerable("a", False).unanswerable
    store.set_judgment("a", "d3", 1, annotator="asha")


def test_list_questions_and_progress_report_status(store):
    for qid in ("new", "started", "done", "unans"):
        store.add_question(f"{qid}?", query_id=qid)
    store.set_judgment("started", "d1", 0, annotator="asha")
    store.set_judgment("done", "d1", 2, annotator="asha")
    store.set_judgment("done", "d1", 0, annotator="ben")  # consensus floor(1.0) = 1: still relevant
    store.set_judgment("done", "d2", 0, annotator="ben")
    store.set_unanswerable("unans")
    statuses = {s.question.query_id: s for s in store.list_questions()}
    assert {k: s.status for k, s in statuses.items()} == {
        "new": "new", "started": "started", "done": "done", "unans": "unanswerable"}
    done = statuses["done"]
    assert done.consensus == {"d1": 1, "d2": 0} and (done.n_judged, done.n_relevant) == (2, 1)
    assert done.annotators == ("asha", "ben") and done.grades_by("ben") == {"d1": 0, "d2": 0}
    progress = store.progress()
    assert (progress.n_questions, progress.n_done, progress.n_unanswerable, progress.n_started, progress.n_new,
            progress.n_judgments) == (4, 1, 1, 1, 1, 4)
    assert progress.share_complete == pytest.approx(0.5)


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
    store.set_unanswerable("c")
    health = store.health()
    assert (health.n_questions, health.n_unanswerable, health.without_relevant) == (3, 1, ("b",))
    assert dict(health.per_type) == {"": 1, "lookup": 2}


# --------------------------------------------------------------------------- golden import / export


def test_import_export_import_export_is_byte_identical(tmp_path):
    golden = read_golden(SAMPLE / "golden.jsonl")
    with open_store(tmp_path / "one.db") as one:
        one.import_golden(golden, corpus_fingerprint="sha256:corpus")
        first = serialize_golden_jsonl(one.export_golden())
    with open_store(tmp_path / "two.db") as two:
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
    assert q.annotators == ("zoe", "asha", "ben") and q.extra == {"reviewer": {"round": 2}}
    assert store.agreement().annotators == ("ben",)  # the imported consensus is not a person


def test_import_golden_replaces_imported_grades_but_keeps_peoples(store):
    store.import_golden(parse_golden_jsonl('{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 1}}'))
    store.set_judgment("a", "d1", 1, annotator="asha")
    store.add_question("Only in the app?", query_id="b")
    summary = store.import_golden(parse_golden_jsonl('{"query_id": "a", "question": "A!", "relevance": {"d1": 3}}'))
    assert (summary.n_new, summary.n_updated, summary.n_judgments) == (0, 1, 1)
    rows = {(j.doc_id, j.annotator): j.grade for j in store.judgments()}
    assert rows == {("d1", IMPORT_ANNOTATOR): 3, ("d1", "asha"): 1}
    assert store.get_question("a").text == "A!" and store.get_question("b") is not None


def test_import_golden_unanswerable_conflicting_with_people_changes_nothing(store, tmp_path):
    store.add_question("A?", query_id="a")
    store.set_judgment("a", "d1", 2, annotator="asha")
    before = snapshot(tmp_path / "labeler.db")
    text = '{"query_id": "new", "question": "N?"}\n{"query_id": "a", "question": "A?", "unanswerable": true}\n'
    with pytest.raises(InputError, match=r"a/d1 \(asha\).*Hint:"):
        store.import_golden(parse_golden_jsonl(text))
    assert snapshot(tmp_path / "labeler.db") == before


def test_import_golden_is_one_transaction(store, tmp_path):
    store.add_question("Existing?", query_id="keep")
    before = snapshot(tmp_path / "labeler.db")
    golden = GoldenSet(tuple(GoldenQuery(f"q{i}", "Q?", relevance={"d": 1}) for i in range(1200)))

    def fail_midway(done, total):
        if done >= 1000:
            raise RuntimeError("crash in the middle of the import")

    with pytest.raises(RuntimeError):
        store.import_golden(golden, progress=fail_midway)
    assert snapshot(tmp_path / "labeler.db") == before


def test_import_golden_refuses_invalid_set(store):
    bad = GoldenSet((GoldenQuery("a", "A?", unanswerable=True, relevance={"d": 1}),))
    with pytest.raises(InputError, match="unanswerable"):
        store.import_golden(bad)


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
